"""Correctness: an answer against its question's reference answer → 0-2 (``judge.judging.graded``).

Asked for every answered question that has a ``reference_answer`` and for every out-of-scope
question (``answerable`` false), whose correct answer is a refusal, with or without a
reference; other questions get no correctness verdict (None, never a 0). The prompt
(``prompts/correctness.v1.md``, or ``judge.correctness.prompt``) shows the question, the
reference (``""`` when there is none) and the answer; the reply is ``{"correctness": 0-2,
"reason": "..."}`` (``CorrectnessPayload``, strict like the answer's payload).

The key hashes the question, the reference, whether the question is answerable and the answer:
the same answer to the same question against the same reference is judged once, across runs
and systems. Its replies are cached under a fingerprint of their own
(``correctness_fingerprint``), never served for another judgement; a ``CorrectnessVerdict``
is derived from the cached reply every time it is used.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator
from tenacity.wait import WaitBaseT

from judge.hashing import tagged_hash
from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.backends import BackendIdentity, JudgeBackend, JudgeRequest
from judge.judging.cache import VerdictCache
from judge.judging.chunks import REASON_MAX_CHARS
from judge.judging.graded import CorrectnessVerdict
from judge.judging.grading import (
    DEFAULT_RETRY_WAIT,
    Fingerprint,
    JudgeProgress,
    ask_each,
    read_payload,
    task_fingerprint,
    task_label,
)
from judge.judging.prompts import Prompt
from judge.judging.verdict import Reply

#: Bump when ``CorrectnessPayload`` changes (it is in the fingerprint, with the schema).
CORRECTNESS_SCHEMA_VERSION = 1


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
    return tagged_hash(
        {
            "task": "correctness",
            "question": question,
            "reference": reference or "",
            "answerable": answerable,
            "answer": answer,
        },
        32,
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


def lexical_correctness_rules(identity: BackendIdentity) -> str | None:
    """The model-free baseline's correctness rule version (in its fingerprint), None for a
    model."""
    if identity.kind != "lexical":
        return None
    from judge.judging.backends.lexical import CORRECTNESS_VERSION

    return CORRECTNESS_VERSION


def correctness_fingerprint(identity: BackendIdentity, prompt: Prompt) -> Fingerprint:
    """The fingerprint correctness verdicts are cached under (``grading.task_fingerprint``)."""
    return task_fingerprint(
        identity,
        prompt,
        correctness_schema(),
        CORRECTNESS_SCHEMA_VERSION,
        lexical_correctness_rules(identity),
    )


def correctness_request(prompt: Prompt, item: CorrectnessItem) -> JudgeRequest:
    """The request that asks for one answer's correctness."""
    return JudgeRequest(
        prompt=prompt.fill(
            question=item.question, reference=item.reference or "", answer=item.answer
        ),
        schema=correctness_schema(),
        question=item.question,
        context=[],
        answer=item.answer,
        task="correctness",
        reference=item.reference,
        answerable=item.answerable,
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
        status=read.status,
        correctness=payload.correctness if payload else None,
        reason=payload.reason if payload else "",
        error=read.error,
        raw_reply=reply.text,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        latency_s=reply.latency_s,
        cached=cached,
    )


class CorrectnessOutcome(NamedTuple):
    """The verdicts of the answers that were judged (all of them unless interrupted)."""

    verdicts: dict[str, CorrectnessVerdict]
    """Per question id."""
    fingerprint: Fingerprint
    interrupted: bool
    elapsed_s: float


def judge_correctness(
    items: Sequence[CorrectnessItem],
    backend: JudgeBackend,
    prompt: Prompt,
    cache: VerdictCache,
    *,
    concurrency: int = 1,
    max_attempts: int = 4,
    retry_wait: WaitBaseT = DEFAULT_RETRY_WAIT,
    on_progress: Callable[[JudgeProgress], None] = lambda _: None,
    rejudge_failed: bool = False,
) -> CorrectnessOutcome:
    """Judge every item's correctness, reusing cached replies; each new reply is cached as it
    arrives (``grading.ask_all``, which says what Ctrl-C does). Items of the same key are
    asked once. ``rejudge_failed``: a cached reply that gave no verdict is asked again."""
    fingerprint = correctness_fingerprint(backend.identity, prompt)
    judged = ask_each(
        items,
        functools.partial(correctness_request, prompt),
        correctness_for,
        lambda verdict: verdict.status == "ok",
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
    verdicts = {verdict.question_id: verdict for verdict in judged.results}
    return CorrectnessOutcome(verdicts, fingerprint, judged.interrupted, judged.elapsed_s)


def cached_correctness(
    items: Sequence[CorrectnessItem], fingerprint: str, cache: VerdictCache
) -> dict[str, CorrectnessVerdict]:
    """The verdicts of the items whose replies are in the cache for ``fingerprint`` (nothing
    is asked): what ``rerender`` re-derives."""
    replies = cache.get_many(fingerprint, (item.key for item in items))
    return {
        item.question_id: correctness_for(item, replies[item.key], cached=True)
        for item in items
        if item.key in replies
    }
