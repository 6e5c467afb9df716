"""The one judge session every judgement runs through (the idea of inspect_ai's ``Model``
over a ``ModelAPI``): a backend, the verdict cache, and how requests are sent (concurrency,
attempts, the wait between them).

``Judge.run(task, prompt, items)`` asks for every item of a task (``judge.judging.tasks``)
that the cache does not hold, under the task's fingerprint, and returns each item's result;
``Judge.cached(task, fingerprint, items)`` reads the results the cache holds and asks nothing
(what re-rendering a folder re-derives). The loop itself is ``grading.ask_each``: items of one
key are asked once, each new reply is cached as it arrives, and Ctrl-C keeps what was asked.
The backend says how many requests it takes at once and which failures are retried
(``JudgeBackend.max_connections``, ``should_retry``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple

from tenacity.wait import WaitBaseT

from judge.judging.backends.base import BackendIdentity, JudgeBackend, max_connections
from judge.judging.cache import VerdictCache
from judge.judging.grading import (
    DEFAULT_RETRY_WAIT,
    Fingerprint,
    JudgeProgress,
    ask_each,
    task_label,
)
from judge.judging.items import JudgeItem
from judge.judging.prompts import Prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import ItemT, ResultT, RowT, TaskDef, by_question
from judge.judging.types import Mode, Verdict


class TaskOutcome(NamedTuple, Generic[ResultT]):
    """What ``Judge.run`` got: the result of each item that has a reply (all of them unless
    interrupted), in item order, the fingerprint they are cached under, and the time taken."""

    results: list[ResultT]
    fingerprint: Fingerprint
    interrupted: bool
    elapsed_s: float


def read_cached(
    task: TaskDef[ItemT, ResultT, RowT],
    cache: VerdictCache,
    fingerprint: Fingerprint,
    items: Sequence[ItemT],
) -> list[ResultT]:
    """The results of the items whose replies are in ``cache`` for ``fingerprint``, in item
    order; nothing is asked. The replies are parsed with the fingerprint's parts as given,
    else as the cache registered them (the answer's prompt mode is one)."""
    parts: dict[str, Any] = fingerprint.parts or cache.parts(fingerprint.value) or {}
    replies = cache.get_many(fingerprint.value, (item.key for item in items))
    return [
        task.parse(item, replies[item.key], True, parts) for item in items if item.key in replies
    ]


@dataclass(frozen=True)
class Judge:
    """An open judge: its backend, the verdict cache, and how requests are sent."""

    backend: JudgeBackend
    cache: VerdictCache
    concurrency: int = 1
    """``judge.concurrency``: the backend decides what it takes (a pool its capacity)."""
    max_attempts: int = 4
    retry_wait: WaitBaseT = DEFAULT_RETRY_WAIT

    @property
    def in_flight(self) -> int:
        """How many requests are kept in flight (``JudgeBackend.max_connections``)."""
        return max_connections(self.backend, self.concurrency)

    def fingerprint(self, task: TaskDef[Any, Any, Any], prompt: Prompt) -> Fingerprint:
        """What ``task``'s replies to ``prompt`` are cached under, for this judge."""
        return task.fingerprint(self.backend.identity, prompt)

    def run(
        self,
        task: TaskDef[ItemT, ResultT, RowT],
        prompt: Prompt,
        items: Sequence[ItemT],
        on_progress: Callable[[JudgeProgress], None] = lambda _: None,
        *,
        rejudge_failed: bool = False,
    ) -> TaskOutcome[ResultT]:
        """Ask for every item, reusing cached replies; each new reply is cached as it arrives
        (``grading.ask_all``, which says what Ctrl-C does). ``rejudge_failed``: a cached reply
        whose result is not ok is asked again, and the new reply replaces it."""
        fingerprint = self.fingerprint(task, prompt)
        parts = fingerprint.parts
        judged = ask_each(
            items,
            functools.partial(task.request, prompt),
            lambda item, reply, cached: task.parse(item, reply, cached, parts),
            task.ok,
            self.backend,
            self.cache,
            fingerprint,
            task_label(self.backend.identity, prompt),
            concurrency=self.in_flight,
            max_attempts=self.max_attempts,
            retry_wait=self.retry_wait,
            on_progress=on_progress,
            rejudge_failed=rejudge_failed,
        )
        return TaskOutcome(judged.results, fingerprint, judged.interrupted, judged.elapsed_s)

    def cached(
        self, task: TaskDef[ItemT, ResultT, RowT], fingerprint: Fingerprint, items: Sequence[ItemT]
    ) -> list[ResultT]:
        """``read_cached`` from this judge's cache: nothing is asked."""
        return read_cached(task, self.cache, fingerprint, items)


# --- the answer task's shortcuts (the stability check, the benchmarks and the tests) ---------


class JudgeOutcome(NamedTuple):
    """Verdicts for the items that were judged (all of them unless interrupted)."""

    verdicts: dict[str, Verdict]
    fingerprint: Fingerprint
    identity: BackendIdentity
    interrupted: bool
    elapsed_s: float


def cached_verdicts(
    items: Sequence[JudgeItem],
    fingerprint: str,
    cache: VerdictCache,
    mode: Mode | None = None,
) -> dict[str, Verdict]:
    """Verdicts of the items whose replies are in the cache for ``fingerprint`` (no judging),
    parsed in the fingerprint's prompt ``mode``: as given, else as the cache registered it
    with the fingerprint (``quote`` when it did not)."""
    parts: dict[str, Any] = {} if mode is None else {"mode": mode}
    results = read_cached(ANSWER, cache, Fingerprint(fingerprint, parts), items)
    return by_question(results)


def judge_items(
    items: Sequence[JudgeItem],
    backend: JudgeBackend,
    prompt: Prompt,
    cache: VerdictCache,
    *,
    concurrency: int = 1,
    max_attempts: int = 4,
    retry_wait: WaitBaseT = DEFAULT_RETRY_WAIT,
    on_progress: Callable[[JudgeProgress], None] = lambda _: None,
    rejudge_failed: bool = False,
) -> JudgeOutcome:
    """Judge every item's answer, reusing cached replies (``Judge.run`` of the ``ANSWER``
    task, which says what Ctrl-C does). Items of one key (two questions showing the judge the
    same text, chunks and answer) are asked once, and each gets its own verdict.

    ``rejudge_failed``: a cached reply whose verdict is not ok (a one-off empty or cut-off
    reply, cached as a parse error) is asked again, and the new reply replaces it.
    """
    judge = Judge(backend, cache, concurrency, max_attempts, retry_wait)
    outcome = judge.run(ANSWER, prompt, items, on_progress, rejudge_failed=rejudge_failed)
    return JudgeOutcome(
        verdicts=by_question(outcome.results),
        fingerprint=outcome.fingerprint,
        identity=backend.identity,
        interrupted=outcome.interrupted,
        elapsed_s=outcome.elapsed_s,
    )
