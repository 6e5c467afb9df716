"""The judge's two further judgements, beside an answer's verdict (issue 23).

- A **chunk grade**: the question and one retrieved chunk → a grade on 0-3 in UMBRELA's sense
  (Upadhyay et al., 2024): 0 the chunk has nothing to do with the question, 1 it is related
  but does not answer it, 2 it holds part of the answer, 3 it is dedicated to the question and
  holds the exact answer. Graded for the top chunks of every answered question, labelled or
  not: judged retrieval numbers where there are no labels, possible missing labels where
  there are, and the judge's chunk labels measured against the humans'.
- A **correctness verdict**: the answer against the question's reference answer → 0-2 (a
  correct refusal of an out-of-scope question is correct), a third axis beside faithfulness
  and relevance.

Both go through the same backends, verdict cache, fingerprint, endpoint pool and batch files
as the answer judge (``judge.judging.grading.ask_all``); each has its own prompt file, its own
reply schema and its own fingerprint, so its replies are never served for another judgement.
Like a ``Verdict``, each is derived anew from the cached ``Reply`` every time it is used.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from judge.judging.types import Status

#: What a request asks the judge: an answer's verdict, one chunk's grade, or an answer's
#: correctness. The model-free baseline answers by it (``JudgeRequest.task``).
Task = Literal["answer", "chunk", "correctness"]
TASKS: Final[tuple[Task, ...]] = ("answer", "chunk", "correctness")

#: The grades a chunk can get (UMBRELA's 0-3).
CHUNK_SCALE: Final[tuple[int, ...]] = (0, 1, 2, 3)


class _Judgement(BaseModel):
    """What every further judgement keeps of its reply: the status it was read with, the
    reason, and the reply's text and cost (as a ``Verdict`` keeps them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    item_key: str
    """The cache key: a hash of everything the judge was shown."""
    status: Status
    reason: str = ""
    error: str | None = None
    raw_reply: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False


class ChunkGrade(_Judgement):
    """The judge's grade of one retrieved chunk for one question (``item_key``: a hash of the
    question's text and the chunk's id and text)."""

    chunk_id: str
    rank: int
    """1-based rank of the chunk in the run's retrieved list."""
    grade: int | None = None
    """0-3 for an ok grade, None otherwise (never a silent 0)."""


class CorrectnessVerdict(_Judgement):
    """The judge's verdict on one answer against the question's reference answer
    (``item_key``: a hash of the question, the reference and the answer)."""

    correctness: int | None = None
    """0-2 for an ok verdict, None otherwise (never a silent 0)."""
