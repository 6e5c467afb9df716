"""A judging session: the backend opened (or given), announced, and closed if it was opened
here, with the verdict cache open beside it. ``evaluate``, ``sweep``, ``judge_stability`` and
the batch commands judge through it, so the choice of a judge is made in one place; ``preflight``
(``judge check``) makes the same choice and judges nothing.

The further judgements of a run (``judge.judging.graded``: chunk grades, correctness, each
on when ``[judge.chunks]`` / ``[judge.correctness]`` says ``enabled``) go through the same
session after the answers: the same backend, cache, concurrency and retries. Their prompts are
loaded with the answer's, before anything is asked (``further_prompts``), and what they will
cost is announced with the judge (``JudgeChoice.extra``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from judge.config import Config
from judge.errors import BackendUnavailable, ConfigError
from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.backends import BackendIdentity, JudgeBackend, OpenedBackend
from judge.judging.backends.pool import PoolRefused, judging_concurrency
from judge.judging.cache import VerdictCache
from judge.judging.chunks import (
    ChunkItem,
    ChunkOutcome,
    build_chunk_items,
    chunk_depth,
    chunk_fingerprint,
    grade_chunks,
)
from judge.judging.correctness import (
    CorrectnessItem,
    CorrectnessOutcome,
    build_correctness_items,
    correctness_fingerprint,
    judge_correctness,
)
from judge.judging.evidence import VERIFIER_VERSION
from judge.judging.graded import Task
from judge.judging.grading import (
    Fingerprint,
    JudgeOutcome,
    JudgeProgress,
    judge_fingerprint,
    judge_items,
)
from judge.judging.items import JudgeItem
from judge.judging.prompts import Prompt, load_prompt
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
    extra: tuple[str, ...] = ()
    """One line per further judgement the run makes after the answers (chunk grades,
    correctness): what it grades, with which prompt, and its calls and cost at the rate of
    this judge's earlier replies of that judgement (``Further.line``)."""

    def lines(self) -> list[str]:
        """What the console says before judging starts: the judge, why, the prompt and run,
        the estimate, then the further judgements' lines."""
        lines = [
            f"judge: {self.judge}",
            f"       ({self.reason})",
            f"prompt: {self.prompt} · run: {self.run_source} · context_k {self.context_k}",
        ]
        if self.estimate is not None:
            lines.append(self.estimate.line())
        return lines + list(self.extra)


#: The fingerprint parts that say which model judges: replies under other prompts or options
#: of the same model give its rate (a prompt edit is the usual reason items are pending). The
#: task too: a chunk grade's reply is shorter than an answer's verdict, and is its own rate.
_SAME_JUDGE = ("backend", "model", "digest", "mode", "task")


class FurtherPrompts(NamedTuple):
    """The prompts of the further judgements that are on (None: off)."""

    chunk: Prompt | None = None
    correctness: Prompt | None = None


def further_prompts(config: Config) -> FurtherPrompts:
    """Load the prompts of the judgements ``config`` turns on (``judge.chunks.enabled``,
    ``judge.correctness.enabled``), each checked for its task: called with the answer's
    prompt, before anything is asked, so a bad prompt fails first."""
    chunks, correctness = config.judge.chunks, config.judge.correctness
    return FurtherPrompts(
        load_prompt(chunks.prompt, "chunk") if chunks.enabled else None,
        load_prompt(correctness.prompt, "correctness") if correctness.enabled else None,
    )


class Further(NamedTuple):
    """The items of the further judgements of one run (empty lists: that judgement is off)."""

    prompts: FurtherPrompts
    chunks: list[ChunkItem]
    correctness: list[CorrectnessItem]
    depth: int
    """How many top chunks of each answered question are graded."""

    def plans(self) -> list[tuple[Task, Prompt, list[str], str]]:
        """Per judgement that is on: its task, prompt, unique item keys (one call each) and
        what it judges, in words."""
        out: list[tuple[Task, Prompt, list[str], str]] = []
        if self.prompts.chunk is not None:
            keys = list(dict.fromkeys(item.key for item in self.chunks))
            questions = len({item.question_id for item in self.chunks})
            what = f"chunk grades (top {self.depth} chunks of {questions} answers)"
            out.append(("chunk", self.prompts.chunk, keys, what))
        if self.prompts.correctness is not None:
            keys = list(dict.fromkeys(item.key for item in self.correctness))
            what = "correctness (answers with a reference answer or out of scope)"
            out.append(("correctness", self.prompts.correctness, keys, what))
        return out


NO_FURTHER = Further(FurtherPrompts(), [], [], 0)


def further_items(config: Config, prompts: FurtherPrompts, golden: GoldenSet, run: Run) -> Further:
    """The items of the judgements that are on, for ``run``."""
    depth = chunk_depth(config.judge.chunks.depth, config.retrieval.context_k)
    return Further(
        prompts,
        build_chunk_items(golden, run, depth) if prompts.chunk is not None else [],
        build_correctness_items(golden, run) if prompts.correctness is not None else [],
        depth,
    )


def task_fingerprint_of(task: Task, identity: BackendIdentity, prompt: Prompt) -> Fingerprint:
    """The fingerprint of a judgement's replies, by its task."""
    if task == "chunk":
        return chunk_fingerprint(identity, prompt)
    if task == "correctness":
        return correctness_fingerprint(identity, prompt)
    return judge_fingerprint(identity, prompt)


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
    return _estimate_of(config, backend, fingerprint, [item.key for item in items])


def _estimate_of(
    config: Config, backend: JudgeBackend, fingerprint: Fingerprint, keys: list[str]
) -> Estimate | None:
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


def _further_lines(config: Config, backend: JudgeBackend, further: Further) -> tuple[str, ...]:
    """One line per further judgement: what, which prompt, and its estimate ("to judge: ...")
    at the rate of this judge's earlier replies of the same task."""
    lines = []
    for task, prompt, keys, what in further.plans():
        fingerprint = task_fingerprint_of(task, backend.identity, prompt)
        cost = _estimate_of(config, backend, fingerprint, keys)
        said = cost.line() if cost is not None else f"to judge: {len(keys)} items"
        lines.append(f"{what} · prompt: {prompt.path}; {said}")
    return tuple(lines)


def _open(
    config: Config,
    backend: JudgeBackend | None,
    items: list[JudgeItem],
    prompt: Prompt,
    further: Further = NO_FURTHER,
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
            for task, task_prompt, keys, _ in further.plans():  # imported with the answers
                task_print = task_fingerprint_of(task, offline.identity, task_prompt).value
                missing |= set(keys) - cache.cached_keys(task_print)
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
    further: tuple[FurtherCount, ...] = ()
    """The further judgements that are on (chunk grades, correctness): their calls and how
    many of them are in the cache."""

    @property
    def to_judge(self) -> int:
        """Items the judge would be asked for."""
        return self.total - self.cached


class FurtherCount(NamedTuple):
    """A further judgement ``judge run`` would make, counted in the cache (``judge check``)."""

    task: Task
    what: str
    prompt: Path
    calls: int
    """Items it asks the judge about, one call each (items of the same key counted once)."""
    cached: int

    def line(self) -> str:
        """E.g. "chunk grades (top 5 chunks of 30 answers): on (judge.chunks), 150 calls,
        40 of them in the cache; 110 to judge"."""
        setting = "judge.chunks" if self.task == "chunk" else "judge.correctness"
        return (
            f"{self.what}: on ({setting}, {self.prompt}), {self.calls} calls, {self.cached} "
            f"of them in the cache; {self.calls - self.cached} to judge"
        )


def preflight(
    config: Config,
    items: list[JudgeItem],
    prompt: Prompt,
    backend: JudgeBackend | None = None,
    further: Further = NO_FURTHER,
) -> Preflight:
    """Open the judge exactly as ``judging_session`` does (a ``BackendUnavailable`` here is
    the one ``judge run`` would stop on, exit 3), read its identity, count the items the cache
    holds under its fingerprint (and those of the ``further`` judgements that are on), and
    close it again: no item is sent to it.

    A cache file that does not exist yet is not created: none of the items is in it.
    """
    opened, owned = _open(config, backend, items, prompt, further)
    try:
        identity = opened.backend.identity
        fingerprint = judge_fingerprint(identity, prompt)
        plans = further.plans()
        cached = 0
        counts = [0] * len(plans)
        if config.judge.cache_path.exists():
            cache = VerdictCache(config.judge.cache_path)
            try:
                keys = cache.cached_keys(fingerprint.value)
                cached = sum(item.key in keys for item in items)  # per item, as `judge run`
                for n, (task, task_prompt, task_keys, _) in enumerate(plans):
                    held = cache.cached_keys(task_fingerprint_of(task, identity, task_prompt).value)
                    counts[n] = sum(key in held for key in task_keys)
            finally:
                cache.close()
        return Preflight(
            identity.describe(),
            opened.reason,
            identity,
            fingerprint,
            cached,
            len(items),
            tuple(
                FurtherCount(task, what, task_prompt.path, len(task_keys), counts[n])
                for n, (task, task_prompt, task_keys, what) in enumerate(plans)
            ),
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

    def grade_chunks(
        self,
        prompt: Prompt,
        items: Sequence[ChunkItem],
        on_progress: Callable[[JudgeProgress], None],
        *,
        rejudge_failed: bool = False,
    ) -> ChunkOutcome:
        """``judge.judging.chunks.grade_chunks`` with this session's backend, cache and
        settings."""
        return grade_chunks(
            items,
            self.backend,
            prompt,
            self.cache,
            concurrency=self.concurrency,
            max_attempts=self.max_attempts,
            on_progress=on_progress,
            rejudge_failed=rejudge_failed,
        )

    def judge_correctness(
        self,
        prompt: Prompt,
        items: Sequence[CorrectnessItem],
        on_progress: Callable[[JudgeProgress], None],
        *,
        rejudge_failed: bool = False,
    ) -> CorrectnessOutcome:
        """``judge.judging.correctness.judge_correctness`` with this session's backend,
        cache and settings."""
        return judge_correctness(
            items,
            self.backend,
            prompt,
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
    further: Further = NO_FURTHER,
) -> Iterator[Session]:
    """The judge (backend opened, announced, closed if this opened it) and the verdict cache,
    for as long as a command judges: ``evaluate``, ``sweep`` and ``judge_stability`` alike.
    ``further``: the chunk grades and correctness the run will ask after the answers, whose
    cost is announced with the judge."""
    opened, owned = _open(config, backend, items, prompt, further)
    try:
        on_judge_chosen(
            JudgeChoice(
                opened.backend.identity.describe(),
                opened.reason,
                prompt.path,
                run_source,
                config.retrieval.context_k,
                _estimate_before(config, opened.backend, prompt, items),
                _further_lines(config, opened.backend, further),
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
