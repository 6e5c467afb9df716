"""The chunk grade: the question and one retrieved chunk → a grade 0-3 (issue 23).

A grade on 0-3 in UMBRELA's sense (Upadhyay et al., 2024): 0 the chunk has nothing to do with
the question, 1 it is related but does not answer it, 2 it holds part of the answer, 3 it is
dedicated to the question and holds the exact answer. Graded for the top chunks of every
answered question, labelled or not: judged retrieval numbers where there are no labels,
possible missing labels where there are, and the judge's chunk labels measured against the
humans'.

The items are the top ``depth`` retrieved chunks of every answered question
(``judge.chunks.depth``, by default ``retrieval.context_k``: the chunks the generator saw).
Each is asked on its own, with ``prompts/chunk.v1.md`` (or ``judge.chunks.prompt``), and
replies ``{"grade": 0-3, "reason": "..."}`` (``ChunkPayload``: strict, as the answer's payload
is, so ``2.0``, ``"2"`` or ``true`` is a parse error, never a grade).

An item's key hashes the question's text and the chunk's id and text, not the question's id,
the rank or the system: the same chunk for the same question is graded once, across runs and
systems, and a grade given at rank 1 serves the chunk at rank 4 of another run. Its replies
are cached under a fingerprint of their own (``chunk_fingerprint``: the task and its schema
are in it), so a chunk grade is never served as another judgement's result.
The record keeps, per question, its chunks' grades in rank order (``QuestionRow.chunk_grades``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judge.config import Config
from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.lexical import CHUNK_VERSION, corpus_weights, grade_chunk_lexically
from judge.judging.grading import read_payload
from judge.judging.items import context_for
from judge.judging.prompts import Prompt, TaskPrompt
from judge.judging.tasks.base import (
    TaskDef,
    TaskSettings,
    payload_fingerprint,
    reply_fields,
    task_key,
)
from judge.judging.types import ChunkGrade, ContextChunk
from judge.judging.verdict import Reply

#: Bump when ``ChunkPayload`` changes (it is in the chunk fingerprint, with the schema).
CHUNK_SCHEMA_VERSION = 1
#: The bound of a reason (a chunk grade's, and the other judgements' that reuse it).
REASON_MAX_CHARS = 300
#: The grades a chunk can get (UMBRELA's 0-3).
CHUNK_SCALE: Final[tuple[int, ...]] = (0, 1, 2, 3)

CHUNK_PROMPT = TaskPrompt(
    "chunk", "judge.chunks.prompt", "prompts/chunk.v1.md", ("question", "chunk"), "chunk grade"
)


class ChunkPayload(BaseModel):
    """What the model must return for one chunk. Strict: only the integers 0-3 are grades."""

    model_config = ConfigDict(extra="forbid", strict=True)

    grade: Literal[0, 1, 2, 3]
    reason: str = Field(max_length=REASON_MAX_CHARS)
    """Bounded, as the answer's note is: a model looping inside the string under a grammar is
    cut at the bound and the JSON still completes."""

    @field_validator("grade", mode="before")
    @classmethod
    def _integer_only(cls, value: object) -> object:
        # Literal alone lets 2.0 and True through (2.0 == 2, True == 1).
        if type(value) is not int:
            raise ValueError(f"must be the integer 0, 1, 2 or 3, got {value!r}")
        return value


@functools.cache
def chunk_schema() -> dict[str, Any]:
    """The JSON schema of a chunk grade's reply, sent with every request (grammar-constrained
    where the backend supports it) and fingerprinted. Callers must not modify it."""
    return ChunkPayload.model_json_schema()


class ChunkItem(NamedTuple):
    """One retrieved chunk of one answered question, as the judge will see it."""

    question_id: str
    question: str
    chunk_id: str
    rank: int
    """1-based rank in the run's retrieved list."""
    text: str
    key: str
    """``chunk_key`` of the question's text and the chunk's id and text."""
    weights: CorpusWeights | None = None
    """The corpus's token weights, for the lexical baseline's grade (shared by every item of a
    run, computed on first use; None: every token weighs the same)."""


class CorpusWeights:
    """The corpus's token weights (``lexical.corpus_weights``), computed on first use: only the
    lexical baseline asks for them, so a model judge never pays for the pass over the corpus."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._texts = texts
        self._weights: dict[str, float] | None = None

    def get(self) -> dict[str, float]:
        if self._weights is None:
            self._weights = corpus_weights(self._texts)
        return self._weights


def chunk_key(question: str, chunk_id: str, text: str) -> str:
    """The cache key of one chunk grade: what the judge sees (the question and the chunk), and
    the chunk's id, so that two chunks of the same text keep grades of their own (a grade is
    reported per chunk id)."""
    return task_key("chunk", question=question, chunk=[chunk_id, text])


def build_chunk_items(golden: GoldenSet, run: Run, depth: int) -> list[ChunkItem]:
    """The top ``depth`` retrieved chunks of every golden question the run answered, in golden
    order then rank (``judge.judging.items.context_for``: the text as the generator saw it)."""
    items = []
    weights = CorpusWeights([chunk.text for chunk in golden.corpus.values()])
    for question in golden.questions:
        record = run.records.get(question.id)
        if record is None:
            continue  # the adapter failed for it; reported with the run
        for chunk in context_for(record, golden.corpus, depth):
            items.append(
                ChunkItem(
                    question.id,
                    question.question,
                    chunk.chunk_id,
                    chunk.rank,
                    chunk.text,
                    chunk_key(question.question, chunk.chunk_id, chunk.text),
                    weights,
                )
            )
    return items


def chunk_depth(configured: int | None, context_k: int) -> int:
    """How many top chunks of each question are graded: ``judge.chunks.depth``, unset the
    ``retrieval.context_k`` the generator saw."""
    return context_k if configured is None else configured


def depth_of(config: Config) -> int:
    """``chunk_depth`` of a configuration."""
    return chunk_depth(config.judge.chunks.depth, config.retrieval.context_k)


#: The fingerprint chunk grades are cached under (``grading.task_fingerprint``).
chunk_fingerprint = payload_fingerprint(chunk_schema, CHUNK_SCHEMA_VERSION, CHUNK_VERSION)


def chunk_request(prompt: Prompt, item: ChunkItem) -> JudgeRequest:
    """The request that asks for one chunk's grade: the rendered prompt and schema, and the
    inputs (the chunk as the one context chunk), with the baseline's rule for them."""
    return JudgeRequest(
        prompt=prompt.fill(question=item.question, chunk=item.text),
        schema=chunk_schema(),
        question=item.question,
        context=[ContextChunk(item.rank, item.chunk_id, item.text)],
        answer="",
        task="chunk",
        baseline=lambda _refusals: grade_chunk_lexically(
            item.question, item.text, item.weights.get() if item.weights else None
        ),
    )


def grade_for(item: ChunkItem, reply: Reply, cached: bool) -> ChunkGrade:
    """The grade of one reply, derived anew (a parser fix applies to cached replies); anything
    short of a complete, valid reply is a non-ok status with no grade (``read_payload``)."""
    read = read_payload(reply, ChunkPayload)
    payload = read.payload
    assert payload is None or isinstance(payload, ChunkPayload)
    return ChunkGrade(
        question_id=item.question_id,
        chunk_id=item.chunk_id,
        rank=item.rank,
        item_key=item.key,
        grade=payload.grade if payload else None,
        **reply_fields(read, reply, cached, payload.reason if payload else ""),
    )


def in_rank_order(grades: Iterable[ChunkGrade]) -> dict[str, tuple[ChunkGrade, ...]]:
    """Per question id, its chunks' grades in rank order."""
    out: dict[str, list[ChunkGrade]] = {}
    for grade in grades:
        out.setdefault(grade.question_id, []).append(grade)
    return {qid: tuple(sorted(found, key=lambda g: g.rank)) for qid, found in out.items()}


def grades_as_then(
    rederived: tuple[ChunkGrade, ...], saved: tuple[ChunkGrade, ...]
) -> tuple[ChunkGrade, ...]:
    """Re-derived grades, each marked cached as it was in the run (by chunk id)."""
    before = {g.chunk_id: g.cached for g in saved}
    return tuple(
        g.model_copy(update={"cached": before[g.chunk_id]}) if g.chunk_id in before else g
        for g in rederived
    )


def _describe(items: Sequence[ChunkItem], config: Config) -> str:
    questions = len({item.question_id for item in items})
    return f"chunk grades (top {depth_of(config)} chunks of {questions} answers)"


def _progress(items: Sequence[ChunkItem], graded: Mapping[str, tuple[ChunkGrade, ...]]) -> str:
    unique = len({item.key for item in items})
    done = len({g.item_key for grades in graded.values() for g in grades})
    return f"{done} of {unique} chunks graded"


CHUNK: TaskDef[ChunkItem, ChunkGrade, tuple[ChunkGrade, ...]] = TaskDef(
    name="chunk",
    table="judge.chunks",
    prompt=CHUNK_PROMPT,
    settings=lambda config: TaskSettings(config.judge.chunks.enabled, config.judge.chunks.prompt),
    items=lambda golden, run, config: build_chunk_items(golden, run, depth_of(config)),
    request=chunk_request,
    parse=lambda item, reply, cached, _parts: grade_for(item, reply, cached),
    fingerprint=chunk_fingerprint,
    per_question=in_rank_order,
    as_then=grades_as_then,
    describe=_describe,
    progress=_progress,
    all_done="every chunk graded",
    row_field="chunk_grades",
)
