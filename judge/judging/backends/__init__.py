"""Judge backends: one small interface, several implementations, chosen by name.

A backend turns one rendered prompt into one ``Reply``. It raises ``PromptTooLong`` for a
prompt that would not fit (never judging a truncated prompt), ``TransientBackendError`` for
failures worth retrying, ``BackendRequestError`` for requests that will never succeed and
``BackendUnavailable`` when it cannot run at all. The retry policy lives in ``judge.judging.grading``,
not here.

Backends are imported lazily, so the harness runs without llama-cpp-python installed until the
embedded judge is actually chosen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import httpx
from pydantic import BaseModel, ConfigDict

from judge.config import JudgeConfig
from judge.errors import BackendUnavailable, ConfigError, ConnectionLost
from judge.judging.items import ContextChunk
from judge.judging.verdict import Reply


def error_text(response: httpx.Response) -> str:
    """The error message of a failed HTTP response, in Ollama's ({"error": "..."}) or
    OpenAI's ({"error": {"message": ...}}) shape, or its raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message", error))
    if error is not None:
        return str(error)
    detail = body.get("detail") if isinstance(body, dict) else None
    return str(detail if detail is not None else body)[:300]


def post_json(
    http: httpx.Client, path: str, body: dict[str, Any], server: str, timeout_setting: str
) -> tuple[httpx.Response, float]:
    """POST and time one request; a timeout or a failed connection becomes ConnectionLost
    (retried, and the end of the run if it persists)."""
    start = time.perf_counter()
    try:
        response = http.post(path, json=body)
    except httpx.TimeoutException as exc:
        timeout = http.timeout.read
        raise ConnectionLost(
            f"no reply from {server} within {timeout:g} s ({type(exc).__name__}); "
            f"raise {timeout_setting} if the server is busy"
        ) from exc
    except httpx.TransportError as exc:
        raise ConnectionLost(f"connection to {server} failed: {type(exc).__name__}: {exc}") from exc
    return response, time.perf_counter() - start


class BackendIdentity(BaseModel):
    """Which judge this is. ``kind``, ``model``, ``digest`` and ``options`` change verdicts and
    go into the fingerprint; ``endpoint`` and ``server_version`` are recorded only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    model: str
    digest: str | None
    """Ollama's manifest digest, a GGUF file's sha256, or None when the server reports none."""
    options: dict[str, Any]
    """Everything sent with each request that changes the output (temperature, seed, ...)."""
    endpoint: str | None = None
    server_version: str | None = None
    reads_prompt: bool = True
    """False for judges that ignore the prompt file (the lexical baseline): then a prompt edit
    does not change their fingerprint, and they are not re-run for it."""

    def describe(self) -> str:
        digest = f", {self.digest[:19]}…" if self.digest else ""
        where = f" at {self.endpoint}" if self.endpoint else ""
        return f"{self.kind} · {self.model}{digest}{where}"


class JudgeRequest(NamedTuple):
    """One item to judge: the rendered prompt and schema, and the inputs it was rendered from
    (the model-free baseline reads those instead of the prompt)."""

    prompt: str
    schema: dict[str, Any]
    question: str
    context: list[ContextChunk]
    answer: str


class JudgeBackend(Protocol):
    """The one method every backend has (plus its identity, fixed at construction)."""

    identity: BackendIdentity

    def complete(self, request: JudgeRequest) -> Reply:
        """Judge one item; the reply must follow ``request.schema`` where supported."""
        ...

    def close(self) -> None:
        """Release connections or the model."""
        ...


def _ollama(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.ollama import OllamaBackend

    return OllamaBackend(config.ollama)


def _embedded(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.embedded import EmbeddedBackend

    return EmbeddedBackend(config.embedded)


def _openai(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.openai import OpenAIBackend

    return OpenAIBackend(config.openai)


def _lexical(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.lexical import LexicalBackend

    return LexicalBackend()


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
    """Construct (and preflight) the configured backend; ``auto`` prefers Ollama."""
    if config.backend == "auto":
        try:
            return OpenedBackend(_ollama(config), "auto: Ollama answered")
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
    return OpenedBackend(factory(config), f"backend = {config.backend}")
