"""The backends by name, and opening the configured one (``open_backend``).

Backends are imported lazily, so the harness runs without llama-cpp-python installed until the
embedded judge is actually chosen. This module imports the backend modules; they import only
``judge.judging.backends.base``, so there is no loop.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from judge.config import JudgeConfig
from judge.errors import BackendUnavailable, ConfigError
from judge.judging.backends.base import JudgeBackend, capacity_note


def _on_each(
    make: Callable[[Any], JudgeBackend],
    settings: Any,
    endpoints: Sequence[Any] | None,
    address: str,
    setting: str,
) -> JudgeBackend:
    """``make(settings)``, or with ``endpoints`` a pool of it: each member is the configured
    backend on one server (``address``: the settings field naming it), all else the same."""
    if endpoints is None:
        return make(settings)
    from judge.judging.backends.pool import open_pool

    members = []
    for endpoint in endpoints:
        where = getattr(endpoint, address)
        one = settings.model_copy(update={address: where, "endpoints": None})
        members.append((where, functools.partial(make, one), endpoint.concurrency))
    return open_pool(members, setting)


def _ollama(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.ollama import OllamaBackend

    return _on_each(
        OllamaBackend, config.ollama, config.ollama.endpoints, "host", "judge.ollama.endpoints"
    )


def _embedded(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.embedded import EmbeddedBackend

    return EmbeddedBackend(config.embedded)


def _openai(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.openai import OpenAIBackend

    return _on_each(
        OpenAIBackend, config.openai, config.openai.endpoints, "base_url", "judge.openai.endpoints"
    )


def _lexical(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.lexical import LexicalBackend

    return LexicalBackend(config.lexical.refusal_phrases)


BACKENDS: dict[str, Callable[[JudgeConfig], JudgeBackend]] = {
    "ollama": _ollama,
    "embedded": _embedded,
    "openai": _openai,
    "lexical": _lexical,
}


class OpenedBackend(NamedTuple):
    """The backend that will judge, and why it was chosen (shown first in every output)."""

    backend: JudgeBackend
    reason: str


def open_backend(config: JudgeConfig) -> OpenedBackend:
    """Construct (and preflight) the configured backend; ``auto`` prefers Ollama.

    With ``endpoints`` the ``ollama`` and ``openai`` backends are a pool
    (``judge.judging.backends.pool``). ``auto`` falls back to the embedded model when no
    Ollama endpoint answers, not when only some do (``PoolRefused``).
    """
    from judge.judging.backends.pool import PoolRefused

    if config.backend == "auto":
        try:
            ollama = _ollama(config)
            return OpenedBackend(ollama, capacity_note(ollama, "auto: Ollama answered"))
        except PoolRefused:
            raise
        except BackendUnavailable as exc:
            try:
                backend = _embedded(config)
            except BackendUnavailable as embedded_exc:
                raise BackendUnavailable(
                    f"no judge can run: Ollama: {exc}; embedded: {embedded_exc}"
                ) from None
            return OpenedBackend(
                backend, f"auto: Ollama not used ({exc}); using the embedded model"
            )
    factory = BACKENDS.get(config.backend)
    if factory is None:
        raise ConfigError(f"unknown backend '{config.backend}'; use one of {', '.join(BACKENDS)}")
    backend = factory(config)
    return OpenedBackend(backend, capacity_note(backend, f"backend = {config.backend}"))
