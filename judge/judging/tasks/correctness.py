"""Correctness: an answer against its question's reference answer → 0-2 (issue 23).

A third axis beside faithfulness and relevance. Asked for every answered question that has a
``reference_answer`` and for every out-of-scope question (``answerable`` false), whose correct
answer is a refusal, with or without a reference; other questions get no correctness verdict
(None, never a 0). The prompt (``prompts/correctness.v1.md``, or ``judge.correctness.prompt``)
shows the question, the reference (``""`` when there is none) and the answer; the reply is
``{"correctness": 0-2, "reason": "..."}`` (``CorrectnessPayload``, strict like the answer's
payload).

The key hashes the question, the reference, whether the question is answerable and the answer:
the same answer to the same question against the same reference is judged once, across runs
and systems. Its replies are cached under a fingerprint of their own
(``correctness_fingerprint``), never served for another judgement. The record keeps one
verdict per question (``QuestionRow.correctness``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.lexical import CORRECTNESS_VERSION, correctness_lexically
from judge.judging.grading import read_payload
from judge.judging.prompts import Prompt, TaskPrompt
from judge.judging.tasks.base import (
    TaskDef,
    TaskSettings,
    by_question,
    cached_as_then,
    payload_fingerprint,
    reply_fields,
    task_key,
)
from judge.judging.tasks.chunk import REASON_MAX_CHARS
from judge.judging.types import CorrectnessVerdict
from judge.judging.verdict import Reply

#: Bump when ``CorrectnessPayload`` changes (it is in the fingerprint, with the schema).
CORRECTNESS_SCHEMA_VERSION = 1

CORRECTNESS_PROMPT = TaskPrompt(
    "correctness",
    "judge.correctness.prompt",
    "prompts/correctness.v1.md",
    ("question", "reference", "answer"),
    "correctness verdict",
)


class CorrectnessPayload(BaseModel):
    """What the model must return for one answer. Strict: only the integers 0-2 are scores."""

    model_config = ConfigDict(extra="forbid", strict=True)

    correctness: Literal[0, 1, 2]
    reason: str = Field(max_length=REASON_MAX_CHARS)

    @field_validator("correctness", mode="before")
    @classmethod
    def _integer_only(cls, value: object) -> object:
        # Literal alone lets 2.0 and True through (2.0 == 2, True == 1).
        if type(value) is not int:
            raise ValueError(f"must be the integer 0, 1 or 2, got {value!r}")
        return value


@functools.cache
def correctness_schema() -> dict[str, Any]:
    """The JSON schema of a correctness reply, sent with every request and fingerprinted.
    Callers must not modify it."""
    return CorrectnessPayload.model_json_schema()


class CorrectnessItem(NamedTuple):
    """One answer to judge against its reference."""

    question_id: str
    question: str
    reference: str | None
    """The question's ``reference_answer``; None for an out-of-scope question without one."""
    answerable: bool
    answer: str
    key: str


def correctness_key(question: str, reference: str | None, answerable: bool, answer: str) -> str:
    """The cache key of one correctness verdict: everything the judge (or the baseline) sees."""
    return task_key(
        "correctness",
        question=question,
        reference=reference or "",
        answerable=answerable,
        answer=answer,
    )


def build_correctness_items(golden: GoldenSet, run: Run) -> list[CorrectnessItem]:
    """One item per answered golden question with a reference answer or out of scope, in
    golden order."""
    items = []
    for question in golden.questions:
        record = run.records.get(question.id)
        reference = question.reference_answer or None
        if record is None or (reference is None and question.answerable):
            continue
        items.append(
            CorrectnessItem(
                question.id,
                question.question,
                reference,
                question.answerable,
                record.answer,
                correctness_key(question.question, reference, question.answerable, record.answer),
            )
        )
    return items


#: The fingerprint correctness verdicts are cached under (``grading.task_fingerprint``).
correctness_fingerprint = payload_fingerprint(
    correctness_schema, CORRECTNESS_SCHEMA_VERSION, CORRECTNESS_VERSION
)


def correctness_request(prompt: Prompt, item: CorrectnessItem) -> JudgeRequest:
    """The request that asks for one answer's correctness, with the baseline's rule for it."""
    return JudgeRequest(
        prompt=prompt.fill(
            question=item.question, reference=item.reference or "", answer=item.answer
        ),
        schema=correctness_schema(),
        question=item.question,
        context=[],
        answer=item.answer,
        task="correctness",
        baseline=lambda refusals: correctness_lexically(
            item.answer, item.reference, item.answerable, refusals
        ),
    )


def correctness_for(item: CorrectnessItem, reply: Reply, cached: bool) -> CorrectnessVerdict:
    """The verdict of one reply, derived anew; anything short of a complete, valid reply is a
    non-ok status with no score (``grading.read_payload``)."""
    read = read_payload(reply, CorrectnessPayload)
    payload = read.payload
    assert payload is None or isinstance(payload, CorrectnessPayload)
    return CorrectnessVerdict(
        question_id=item.question_id,
        item_key=item.key,
        correctness=payload.correctness if payload else None,
        **reply_fields(read, reply, cached, payload.reason if payload else ""),
    )


def _progress(items: Sequence[CorrectnessItem], judged: Mapping[str, CorrectnessVerdict]) -> str:
    return f"{len(judged)} of {len(items)} answers judged for correctness"


CORRECTNESS: TaskDef[CorrectnessItem, CorrectnessVerdict, CorrectnessVerdict] = TaskDef(
    name="correctness",
    table="judge.correctness",
    prompt=CORRECTNESS_PROMPT,
    settings=lambda config: TaskSettings(
        config.judge.correctness.enabled, config.judge.correctness.prompt
    ),
    items=lambda golden, run, _config: build_correctness_items(golden, run),
    request=correctness_request,
    parse=lambda item, reply, cached, _parts: correctness_for(item, reply, cached),
    fingerprint=correctness_fingerprint,
    per_question=by_question,
    as_then=cached_as_then,
    describe=lambda _items, _config: (
        "correctness (answers with a reference answer or out of scope)"
    ),
    progress=_progress,
    all_done="every answer judged for correctness",
    row_field="correctness",
)
