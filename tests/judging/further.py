"""The chunk grade and correctness tasks run the way the tests of the two judgements ask them:
``Judge.run`` of the task, with the results per question (``TaskDef.per_question``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from tenacity import wait_none

from judge.judging.backends.base import JudgeBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import Fingerprint, JudgeProgress
from judge.judging.judge import Judge, read_cached
from judge.judging.prompts import Prompt
from judge.judging.tasks.chunk import CHUNK, ChunkItem
from judge.judging.tasks.correctness import CORRECTNESS, CorrectnessItem
from judge.judging.types import ChunkGrade, CorrectnessVerdict


class Graded(NamedTuple):
    grades: dict[str, tuple[ChunkGrade, ...]]
    fingerprint: Fingerprint
    interrupted: bool

    @property
    def graded(self) -> int:
        return sum(len(grades) for grades in self.grades.values())


class Judged(NamedTuple):
    verdicts: dict[str, CorrectnessVerdict]
    fingerprint: Fingerprint
    interrupted: bool


def _ignore(_: JudgeProgress) -> None:
    pass


def grade_chunks(
    items: Sequence[ChunkItem],
    backend: JudgeBackend,
    prompt: Prompt,
    cache: VerdictCache,
    *,
    on_progress: Callable[[JudgeProgress], None] = _ignore,
    rejudge_failed: bool = False,
    **settings: Any,
) -> Graded:
    judge = Judge(backend, cache, **({"retry_wait": wait_none()} | settings))
    outcome = judge.run(CHUNK, prompt, items, on_progress, rejudge_failed=rejudge_failed)
    return Graded(CHUNK.per_question(outcome.results), outcome.fingerprint, outcome.interrupted)


def judge_correctness(
    items: Sequence[CorrectnessItem],
    backend: JudgeBackend,
    prompt: Prompt,
    cache: VerdictCache,
    *,
    on_progress: Callable[[JudgeProgress], None] = _ignore,
    rejudge_failed: bool = False,
    **settings: Any,
) -> Judged:
    judge = Judge(backend, cache, **({"retry_wait": wait_none()} | settings))
    outcome = judge.run(CORRECTNESS, prompt, items, on_progress, rejudge_failed=rejudge_failed)
    return Judged(
        CORRECTNESS.per_question(outcome.results), outcome.fingerprint, outcome.interrupted
    )


def cached_grades(
    items: Sequence[ChunkItem], fingerprint: str, cache: VerdictCache
) -> dict[str, tuple[ChunkGrade, ...]]:
    return CHUNK.per_question(read_cached(CHUNK, cache, Fingerprint(fingerprint, {}), items))
