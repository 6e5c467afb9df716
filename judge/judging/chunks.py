"""Grading retrieved chunks: the question and one chunk → a grade 0-3 (``judge.judging.graded``).

The items are the top ``depth`` retrieved chunks of every answered question (labelled or not;
``judge.chunks.depth``, by default ``retrieval.context_k``: the chunks the generator saw). Each
is asked on its own, with ``prompts/chunk.v1.md`` (or ``judge.chunks.prompt``), and replies
``{"grade": 0-3, "reason": "..."}`` (``ChunkPayload``: strict, as the answer's payload is, so
``2.0``, ``"2"`` or ``true`` is a parse error, never a grade).

An item's key hashes the question's text and the chunk's id and text, not the question's id,
the rank or the system: the same chunk for the same question is graded once, across runs and
systems, and a grade given at rank 1 serves the chunk at rank 4 of another run. Its replies
are cached under a fingerprint of their own (``chunk_fingerprint``: the task and its schema
are in it), so a chunk grade is never served as an answer's verdict or a correctness verdict.
A ``ChunkGrade`` is derived from the cached reply every time it is used, as a ``Verdict`` is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator
from tenacity.wait import WaitBaseT

from judge.hashing import tagged_hash
from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.backends import BackendIdentity, JudgeBackend, JudgeRequest
from judge.judging.cache import VerdictCache
from judge.judging.graded import ChunkGrade
from judge.judging.grading import (
    DEFAULT_RETRY_WAIT,
    Fingerprint,
    JudgeProgress,
    ask_each,
    read_payload,
    task_fingerprint,
    task_label,
)
from judge.judging.items import context_for
from judge.judging.prompts import Prompt
from judge.judging.verdict import Reply

#: Bump when ``ChunkPayload`` changes (it is in the chunk fingerprint, with the schema).
CHUNK_SCHEMA_VERSION = 1
#: The bound of a reason (a chunk grade's and a correctness verdict's).
REASON_MAX_CHARS = 300


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


def chunk_key(question: str, chunk_id: str, text: str) -> str:
    """The cache key of one chunk grade: what the judge sees (the question and the chunk), and
    the chunk's id, so that two chunks of the same text keep grades of their own (a grade is
    reported per chunk id)."""
    return tagged_hash({"task": "chunk", "question": question, "chunk": [chunk_id, text]}, 32)


def build_chunk_items(golden: GoldenSet, run: Run, depth: int) -> list[ChunkItem]:
    """The top ``depth`` retrieved chunks of every golden question the run answered, in golden
    order then rank (``judge.judging.items.context_for``: the text as the generator saw it)."""
    items = []
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
                )
            )
    return items


def chunk_depth(configured: int | None, context_k: int) -> int:
    """How many top chunks of each question are graded: ``judge.chunks.depth``, unset the
    ``retrieval.context_k`` the generator saw."""
    return context_k if configured is None else configured


def lexical_chunk_rules(identity: BackendIdentity) -> str | None:
    """The model-free baseline's chunk rule version (in its fingerprint), None for a model."""
    if identity.kind != "lexical":
        return None
    from judge.judging.backends.lexical import CHUNK_VERSION

    return CHUNK_VERSION


def chunk_fingerprint(identity: BackendIdentity, prompt: Prompt) -> Fingerprint:
    """The fingerprint chunk grades are cached under (``grading.task_fingerprint``)."""
    return task_fingerprint(
        identity, prompt, chunk_schema(), CHUNK_SCHEMA_VERSION, lexical_chunk_rules(identity)
    )


def chunk_request(prompt: Prompt, item: ChunkItem) -> JudgeRequest:
    """The request that asks for one chunk's grade: the rendered prompt and schema, and the
    inputs (the model-free baseline reads those: the chunk as the one context chunk)."""
    from judge.judging.types import ContextChunk

    return JudgeRequest(
        prompt=prompt.fill(question=item.question, chunk=item.text),
        schema=chunk_schema(),
        question=item.question,
        context=[ContextChunk(item.rank, item.chunk_id, item.text)],
        answer="",
        task="chunk",
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
        status=read.status,
        grade=payload.grade if payload else None,
        reason=payload.reason if payload else "",
        error=read.error,
        raw_reply=reply.text,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        latency_s=reply.latency_s,
        cached=cached,
    )


class ChunkOutcome(NamedTuple):
    """The grades of the chunks that were graded (all of them unless interrupted)."""

    grades: dict[str, tuple[ChunkGrade, ...]]
    """Per question id, its chunks' grades in rank order."""
    fingerprint: Fingerprint
    interrupted: bool
    elapsed_s: float

    @property
    def graded(self) -> int:
        """Chunks with a grade (of any status)."""
        return sum(len(grades) for grades in self.grades.values())


def _in_rank_order(grades: Iterable[ChunkGrade]) -> dict[str, tuple[ChunkGrade, ...]]:
    """Per question id, its chunks' grades in rank order."""
    out: dict[str, list[ChunkGrade]] = {}
    for grade in grades:
        out.setdefault(grade.question_id, []).append(grade)
    return {qid: tuple(sorted(found, key=lambda g: g.rank)) for qid, found in out.items()}


def grade_chunks(
    items: Sequence[ChunkItem],
    backend: JudgeBackend,
    prompt: Prompt,
    cache: VerdictCache,
    *,
    concurrency: int = 1,
    max_attempts: int = 4,
    retry_wait: WaitBaseT = DEFAULT_RETRY_WAIT,
    on_progress: Callable[[JudgeProgress], None] = lambda _: None,
    rejudge_failed: bool = False,
) -> ChunkOutcome:
    """Grade every chunk item, reusing cached replies; each new reply is cached as it arrives
    (``grading.ask_all``, which says what Ctrl-C does: what was graded stays in the cache).
    Items of the same key are asked once. ``rejudge_failed``: a cached reply that gave no
    grade is asked again."""
    fingerprint = chunk_fingerprint(backend.identity, prompt)
    graded = ask_each(
        items,
        functools.partial(chunk_request, prompt),
        grade_for,
        lambda grade: grade.status == "ok",
        backend,
        cache,
        fingerprint,
        task_label(backend.identity, prompt),
        concurrency=concurrency,
        max_attempts=max_attempts,
        retry_wait=retry_wait,
        on_progress=on_progress,
        rejudge_failed=rejudge_failed,
    )
    return ChunkOutcome(
        _in_rank_order(graded.results), fingerprint, graded.interrupted, graded.elapsed_s
    )


def cached_grades(
    items: Sequence[ChunkItem], fingerprint: str, cache: VerdictCache
) -> dict[str, tuple[ChunkGrade, ...]]:
    """The grades of the items whose replies are in the cache for ``fingerprint`` (nothing is
    asked): what ``rerender`` re-derives."""
    replies = cache.get_many(fingerprint, (item.key for item in items))
    return _in_rank_order(
        grade_for(item, replies[item.key], True) for item in items if item.key in replies
    )
