"""A judging session: the backend opened (or given), announced, and closed if it was opened
here, with the verdict cache open beside it. ``evaluate``, ``sweep``, ``judge_stability`` and
the batch commands judge through it, so the choice of a judge is made in one place; ``preflight``
(``judge check``) makes the same choice and judges nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from judge.config import Config
from judge.errors import BackendUnavailable, ConfigError
from judge.judging.backends import BackendIdentity, JudgeBackend, OpenedBackend
from judge.judging.backends.pool import PoolRefused, judging_concurrency
from judge.judging.cache import VerdictCache
from judge.judging.evidence import VERIFIER_VERSION
from judge.judging.grading import (
    Fingerprint,
    JudgeOutcome,
    JudgeProgress,
    judge_fingerprint,
    judge_items,
)
from judge.judging.items import JudgeItem
from judge.judging.prompts import Prompt
from judge.results.manifest import JudgeInfo
from judge.results.tokens import Estimate, Observed, estimate

#: Earlier replies an estimate reads its rate from: the most recent ones of the same judge.
ESTIMATE_BASIS = 200


class JudgeChoice(NamedTuple):
    """Which judge is about to run, and on what (shown before any judging starts)."""

    judge: str
    reason: str
    prompt: Path
    run_source: str
    context_k: int
    estimate: Estimate | None = None
    """What the items not in the cache should cost, at the rate of this judge's earlier
    replies (``judge.results.tokens.estimate``; ``Estimate.line()`` says it in one line);
    None when the cache could not be read for it (the run then stops on the cache itself)."""


#: The fingerprint parts that say which model judges: replies under other prompts or options
#: of the same model give its rate (a prompt edit is the usual reason items are pending).
_SAME_JUDGE = ("backend", "model", "digest", "mode")


def earlier_replies(
    cache: VerdictCache, parts: dict[str, Any], most: int = ESTIMATE_BASIS
) -> list[Observed]:
    """The recorded counts and times of the ``most`` latest replies in ``cache`` of the judge
    ``parts`` describes (same backend, model, digest and prompt mode; any prompt text)."""
    same = [
        stats.fingerprint
        for stats in cache.stats()
        if all(stats.parts.get(key) == parts.get(key) for key in _SAME_JUDGE)
    ]
    return [
        Observed(reply.prompt_tokens, reply.completion_tokens, reply.latency_s)
        for reply in cache.latest_replies(same, most)
    ]


def pending_estimate(
    cache: VerdictCache,
    fingerprint: Fingerprint,
    keys: Sequence[str],
    concurrency: int = 1,
) -> Estimate:
    """The estimate for the items ``keys`` (one per item, twins included, as a run counts
    them) under ``fingerprint``: those not in ``cache``, at its earlier replies' rate."""
    cached = cache.cached_keys(fingerprint.value)
    pending = sum(key not in cached for key in keys)
    earlier = earlier_replies(cache, fingerprint.parts) if pending else []
    return estimate(pending, len(keys), earlier, concurrency)


def _estimate_before(
    config: Config, backend: JudgeBackend, prompt: Prompt, items: Sequence[JudgeItem]
) -> Estimate | None:
    """``pending_estimate`` for a run about to start; None when the cache cannot be read
    (opening it for the run then says why, as it did before there were estimates)."""
    fingerprint = judge_fingerprint(backend.identity, prompt)
    keys = [item.key for item in items]
    concurrency = judging_concurrency(backend, config.judge.concurrency)
    if not config.judge.cache_path.exists():  # not created here: nothing is in it
        return estimate(len(keys), len(keys), [], concurrency)
    try:
        cache = VerdictCache(config.judge.cache_path)
    except ConfigError:
        return None
    try:
        return pending_estimate(cache, fingerprint, keys, concurrency)
    except (ConfigError, json.JSONDecodeError):
        return None
    finally:
        cache.close()


def _open(
    config: Config, backend: JudgeBackend | None, items: list[JudgeItem], prompt: Prompt
) -> tuple[OpenedBackend, bool]:
    """The backend to judge with, and whether this evaluation owns (and so closes) it.

    The ``openai`` judge runs without a server when every reply is in the cache already
    (imported from a batch engine by ``judge batch import``): there is nothing to ask it. A
    pool that some servers answered (``PoolRefused``) is a configuration to fix, not this case.
    """
    if backend is not None:
        return OpenedBackend(backend, "given by the caller"), False
    try:
        # Looked up on the package when called: tests replace judge.pipeline.open_backend.
        import judge.pipeline

        return judge.pipeline.open_backend(config.judge), True
    except PoolRefused:
        raise
    except BackendUnavailable as exc:
        if config.judge.backend != "openai":
            raise
        from judge.judging.backends.openai import CachedOpenAI

        offline = CachedOpenAI(config.judge.openai, str(exc))
        cache = VerdictCache(config.judge.cache_path)
        try:
            fingerprint = judge_fingerprint(offline.identity, prompt).value
            missing = {item.key for item in items} - cache.cached_keys(fingerprint)
        finally:
            cache.close()
        if missing:
            raise
        reason = f"backend = openai: no server ({exc}), but every reply is in the cache"
        return OpenedBackend(offline, reason), True


class Preflight(NamedTuple):
    """The judge ``judge run`` would use, opened and closed again with nothing judged: the
    backend's own preflight (server reachable, model present) and identity (model, digest), and
    how many of the items it would take from the verdict cache."""

    judge: str
    """The backend's identity as ``judge run`` announces it (kind, model, digest, endpoint)."""
    reason: str
    """Why this backend (``backend = ...``, or what ``auto`` found)."""
    identity: BackendIdentity
    fingerprint: Fingerprint
    cached: int
    """Items whose reply is in the cache under this judge's fingerprint: the ones ``judge run``
    counts "from the cache" (unless ``--rejudge-failed`` asks again where one gave no verdict)."""
    total: int

    @property
    def to_judge(self) -> int:
        """Items the judge would be asked for."""
        return self.total - self.cached


def preflight(
    config: Config, items: list[JudgeItem], prompt: Prompt, backend: JudgeBackend | None = None
) -> Preflight:
    """Open the judge exactly as ``judging_session`` does (a ``BackendUnavailable`` here is
    the one ``judge run`` would stop on, exit 3), read its identity, count the items the cache
    holds under its fingerprint, and close it again: no item is sent to it.

    A cache file that does not exist yet is not created: none of the items is in it.
    """
    opened, owned = _open(config, backend, items, prompt)
    try:
        identity = opened.backend.identity
        fingerprint = judge_fingerprint(identity, prompt)
        cached = 0
        if config.judge.cache_path.exists():
            cache = VerdictCache(config.judge.cache_path)
            try:
                keys = cache.cached_keys(fingerprint.value)
            finally:
                cache.close()
            cached = sum(item.key in keys for item in items)  # per item, as `judge run` counts
        return Preflight(
            identity.describe(), opened.reason, identity, fingerprint, cached, len(items)
        )
    finally:
        if owned:
            opened.backend.close()


class Session(NamedTuple):
    """An open judge: its backend, the prompt, the verdict cache, and how many requests are in
    flight and how often one is tried (from the configuration). Commands judge through
    ``judge``, so concurrency and retries are decided here, once."""

    opened: OpenedBackend
    prompt: Prompt
    cache: VerdictCache
    concurrency: int
    max_attempts: int

    @property
    def backend(self) -> JudgeBackend:
        return self.opened.backend

    def judge(
        self,
        items: Sequence[JudgeItem],
        on_progress: Callable[[JudgeProgress], None],
        *,
        rejudge_failed: bool = False,
    ) -> JudgeOutcome:
        """``judge_items`` with this session's backend, prompt, cache and settings."""
        return judge_items(
            items,
            self.backend,
            self.prompt,
            self.cache,
            concurrency=self.concurrency,
            max_attempts=self.max_attempts,
            on_progress=on_progress,
            rejudge_failed=rejudge_failed,
        )


@contextmanager
def judging_session(
    config: Config,
    backend: JudgeBackend | None,
    items: list[JudgeItem],
    prompt: Prompt,
    run_source: str,
    on_judge_chosen: Callable[[JudgeChoice], None],
) -> Iterator[Session]:
    """The judge (backend opened, announced, closed if this opened it) and the verdict cache,
    for as long as a command judges: ``evaluate``, ``sweep`` and ``judge_stability`` alike."""
    opened, owned = _open(config, backend, items, prompt)
    try:
        on_judge_chosen(
            JudgeChoice(
                opened.backend.identity.describe(),
                opened.reason,
                prompt.path,
                run_source,
                config.retrieval.context_k,
                _estimate_before(config, opened.backend, prompt, items),
            )
        )
        cache = VerdictCache(config.judge.cache_path)
        try:
            yield Session(
                opened,
                prompt,
                cache,
                judging_concurrency(opened.backend, config.judge.concurrency),
                config.judge.max_attempts,
            )
        finally:
            cache.close()
    finally:
        if owned:
            opened.backend.close()


def judge_info(opened: OpenedBackend, prompt: Prompt) -> JudgeInfo:
    identity = opened.backend.identity
    return JudgeInfo(
        backend=identity.kind,
        model=identity.model,
        digest=identity.digest,
        server_version=identity.server_version,
        endpoint=identity.endpoint,
        chosen_because=opened.reason,
        prompt=str(prompt.path),
        prompt_sha256=prompt.sha256,
        evidence_verifier_version=VERIFIER_VERSION,
        model_about=identity.about,
    )
