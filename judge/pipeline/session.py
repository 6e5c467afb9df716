"""A judging session: the backend opened (or given), announced, and closed if it was opened
here, with the verdict cache open beside it. ``evaluate``, ``sweep``, ``judge_stability`` and
the batch commands judge through it, so the choice of a judge is made in one place; ``preflight``
(``judge check``) makes the same choice and judges nothing.

The session is wiring only: which backend to open (``judge.pipeline.session.open_backend``,
the one name a test replaces), the announcement, the ``openai`` judge's offline fallback and
``judge check``'s counts. The judging is ``judge.judging.judge.Judge``'s. The further
judgements of a run (``judge.judging.tasks.registry``: chunk grades, ..., each on when
its table says ``enabled``) go through the same judge after the answers: the same backend,
cache, concurrency and retries. Their prompts are loaded with the answer's, before anything is
asked (``registry.enabled_tasks``), and what they will cost is announced with the judge
(``JudgeChoice.extra``, one line per ``TaskPlan``).
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
from judge.judging.backends.base import BackendIdentity, JudgeBackend, max_connections
from judge.judging.backends.pool import PoolRefused
from judge.judging.backends.registry import OpenedBackend, open_backend
from judge.judging.cache import VerdictCache
from judge.judging.evidence import VERIFIER_VERSION
from judge.judging.grading import Fingerprint, JudgeProgress, judge_fingerprint
from judge.judging.items import JudgeItem
from judge.judging.judge import Judge, TaskOutcome
from judge.judging.prompts import Prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import AnyTask
from judge.judging.types import Verdict
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
    ...): what it grades, with which prompt, and its calls and cost at the rate of
    this judge's earlier replies of that judgement (``_plan_lines``)."""

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


class TaskPlan(NamedTuple):
    """A further judgement a run makes (``judge.judging.tasks``): its task, its prompt, and its
    items for the run."""

    task: AnyTask
    prompt: Prompt
    items: list[Any]
    what: str
    """What it judges, in words (``TaskDef.describe``)."""

    @property
    def keys(self) -> list[str]:
        """Its unique item keys: one call each."""
        return self.task.unique_keys(self.items)


def task_plans(
    config: Config, tasks: Sequence[tuple[AnyTask, Prompt]], golden: GoldenSet, run: Run
) -> list[TaskPlan]:
    """The items of each judgement that is on (``registry.enabled_tasks``), for ``run``."""
    plans = []
    for task, prompt in tasks:
        items = task.items(golden, run, config)
        plans.append(TaskPlan(task, prompt, items, task.describe(items, config)))
    return plans


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


def _estimate_of(
    config: Config, backend: JudgeBackend, fingerprint: Fingerprint, keys: list[str]
) -> Estimate | None:
    """``pending_estimate`` for a run about to start; None when the cache cannot be read
    (opening it for the run then says why, as it did before there were estimates)."""
    concurrency = max_connections(backend, config.judge.concurrency)
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


def _plan_lines(
    config: Config, backend: JudgeBackend, plans: Sequence[TaskPlan]
) -> tuple[str, ...]:
    """One line per further judgement: what, which prompt, and its estimate ("to judge: ...")
    at the rate of this judge's earlier replies of the same task."""
    lines = []
    for plan in plans:
        keys = plan.keys
        fingerprint = plan.task.fingerprint(backend.identity, plan.prompt)
        cost = _estimate_of(config, backend, fingerprint, keys)
        said = cost.line() if cost is not None else f"to judge: {len(keys)} items"
        lines.append(f"{plan.what} · prompt: {plan.prompt.path}; {said}")
    return tuple(lines)


def _open(
    config: Config,
    backend: JudgeBackend | None,
    items: list[JudgeItem],
    prompt: Prompt,
    plans: Sequence[TaskPlan] = (),
) -> tuple[OpenedBackend, bool]:
    """The backend to judge with, and whether this evaluation owns (and so closes) it.

    The ``openai`` judge runs without a server when every reply is in the cache already
    (imported from a batch engine by ``judge batch import``): there is nothing to ask it. A
    pool that some servers answered (``PoolRefused``) is a configuration to fix, not this case.
    """
    if backend is not None:
        return OpenedBackend(backend, "given by the caller"), False
    try:
        return open_backend(config.judge), True
    except PoolRefused:
        raise
    except BackendUnavailable as exc:
        if config.judge.backend != "openai":
            raise
        from judge.judging.backends.openai import CachedOpenAI

        offline = CachedOpenAI(config.judge.openai, str(exc))
        asked = [TaskPlan(ANSWER, prompt, items, ""), *plans]  # imported with the answers
        if _missing(config, offline, asked):
            raise
        reason = f"backend = openai: no server ({exc}), but every reply is in the cache"
        return OpenedBackend(offline, reason), True


def _missing(config: Config, backend: JudgeBackend, plans: Sequence[TaskPlan]) -> bool:
    """Whether any item of ``plans`` has no reply in the cache under ``backend``'s
    fingerprint of its task."""
    cache = VerdictCache(config.judge.cache_path)
    try:
        for plan in plans:
            held = cache.cached_keys(plan.task.fingerprint(backend.identity, plan.prompt).value)
            if any(item.key not in held for item in plan.items):
                return True
        return False
    finally:
        cache.close()


class TaskCount(NamedTuple):
    """A further judgement ``judge run`` would make, counted in the cache (``judge check``)."""

    task: str
    setting: str
    """Its configuration table (``judge.chunks``)."""
    what: str
    prompt: Path
    calls: int
    """Items it asks the judge about, one call each (items of the same key counted once)."""
    cached: int

    def line(self) -> str:
        """E.g. "chunk grades (top 5 chunks of 30 answers): on (judge.chunks), 150 calls,
        40 of them in the cache; 110 to judge"."""
        return (
            f"{self.what}: on ({self.setting}, {self.prompt}), {self.calls} calls, "
            f"{self.cached} of them in the cache; {self.calls - self.cached} to judge"
        )


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
    further: tuple[TaskCount, ...] = ()
    """The further judgements that are on (chunk grades, ...): their calls and how
    many of them are in the cache."""

    @property
    def to_judge(self) -> int:
        """Items the judge would be asked for."""
        return self.total - self.cached


def _counted(
    config: Config, identity: BackendIdentity, plans: Sequence[TaskPlan]
) -> list[tuple[int, int]]:
    """Per plan (the answers' first): its items (unique keys for a further judgement, every
    item for the answers, as ``judge run`` counts them) and how many the cache holds."""
    totals = [len(plan.items) if plan.task is ANSWER else len(plan.keys) for plan in plans]
    if not config.judge.cache_path.exists():
        return [(total, 0) for total in totals]
    cache = VerdictCache(config.judge.cache_path)
    try:
        out = []
        for plan, total in zip(plans, totals, strict=True):
            held = cache.cached_keys(plan.task.fingerprint(identity, plan.prompt).value)
            keys = [item.key for item in plan.items] if plan.task is ANSWER else plan.keys
            out.append((total, sum(key in held for key in keys)))
        return out
    finally:
        cache.close()


def preflight(
    config: Config,
    items: list[JudgeItem],
    prompt: Prompt,
    backend: JudgeBackend | None = None,
    plans: Sequence[TaskPlan] = (),
) -> Preflight:
    """Open the judge exactly as ``judging_session`` does (a ``BackendUnavailable`` here is
    the one ``judge run`` would stop on, exit 3), read its identity, count the items the cache
    holds under its fingerprint (and those of the further judgements that are on, ``plans``),
    and close it again: no item is sent to it.

    A cache file that does not exist yet is not created: none of the items is in it.
    """
    opened, owned = _open(config, backend, items, prompt, plans)
    try:
        identity = opened.backend.identity
        counts = _counted(config, identity, [TaskPlan(ANSWER, prompt, items, ""), *plans])
        (total, cached), further = counts[0], counts[1:]
        return Preflight(
            identity.describe(),
            opened.reason,
            identity,
            judge_fingerprint(identity, prompt),
            cached,
            total,
            tuple(
                TaskCount(plan.task.name, plan.task.table, plan.what, plan.prompt.path, calls, held)
                for plan, (calls, held) in zip(plans, further, strict=True)
            ),
        )
    finally:
        if owned:
            opened.backend.close()


class Session(NamedTuple):
    """An open judge (``judge.judging.judge.Judge``: its backend, the verdict cache, and how
    many requests are in flight and how often one is tried, from the configuration), the
    answer's prompt, and why this backend was chosen. Commands judge through ``judge``, so
    concurrency and retries are decided here, once."""

    opened: OpenedBackend
    prompt: Prompt
    judge: Judge

    @property
    def backend(self) -> JudgeBackend:
        return self.opened.backend

    @property
    def cache(self) -> VerdictCache:
        return self.judge.cache

    def answers(
        self,
        items: Sequence[JudgeItem],
        on_progress: Callable[[JudgeProgress], None],
        *,
        rejudge_failed: bool = False,
    ) -> TaskOutcome[Verdict]:
        """The answers' verdicts, with this session's prompt (``Judge.run`` of ``ANSWER``)."""
        return self.judge.run(
            ANSWER, self.prompt, items, on_progress, rejudge_failed=rejudge_failed
        )


@contextmanager
def judging_session(
    config: Config,
    backend: JudgeBackend | None,
    items: list[JudgeItem],
    prompt: Prompt,
    run_source: str,
    on_judge_chosen: Callable[[JudgeChoice], None],
    plans: Sequence[TaskPlan] = (),
) -> Iterator[Session]:
    """The judge (backend opened, announced, closed if this opened it) and the verdict cache,
    for as long as a command judges: ``evaluate``, ``sweep`` and ``judge_stability`` alike.
    ``plans``: the further judgements the run will ask after the answers, whose cost is
    announced with the judge."""
    opened, owned = _open(config, backend, items, prompt, plans)
    try:
        answers = judge_fingerprint(opened.backend.identity, prompt)
        on_judge_chosen(
            JudgeChoice(
                opened.backend.identity.describe(),
                opened.reason,
                prompt.path,
                run_source,
                config.retrieval.context_k,
                _estimate_of(config, opened.backend, answers, [item.key for item in items]),
                _plan_lines(config, opened.backend, plans),
            )
        )
        cache = VerdictCache(config.judge.cache_path)
        try:
            judge = Judge(
                opened.backend, cache, config.judge.concurrency, config.judge.max_attempts
            )
            yield Session(opened, prompt, judge)
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
