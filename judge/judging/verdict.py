"""Verdicts are data: the judge's reply parsed, checked and kept, never turned into a 0.

``Reply`` is what a backend returns (raw text and metadata); it is what the cache stores.
``Verdict`` is derived from a reply every time it is used: parsing and evidence verification
are cheap and deterministic, so a fix to either applies to cached replies without re-judging.
The verdict's type (with ``SentenceCheck``, ``Status`` and ``Mode``) is in
``judge.judging.types``, where the record and the views read it without this module's logic.

Three reply shapes, one per prompt mode (``Mode``, chosen by the prompt file's placeholders,
``judge.judging.prompts``):

- ``quote``: ``{evidence, faithfulness, relevance, note}``; the quote is searched in the chunks
  (``judge.judging.evidence.verify_quote``);
- ``cited``: ``{evidence_sentence, faithfulness, relevance, note}``; the number of a context
  sentence as the prompt numbered them (0: none), resolved to that sentence, its chunk and span;
- ``sentences``: ``{sentences: [{n, verdict, evidence_sentence}], relevance, note}``: for each
  answer sentence ``supported``, ``unsupported`` or ``no_claim`` (it states nothing that could
  be checked: a greeting, a refusal, an offer to help) and the context sentence it cites.
  Every answer sentence must be there exactly once, and every cited number must exist, or the
  reply is a parse error. Faithfulness is not asked, it follows (``sentence_faithfulness``):
  among the sentences that claim something, all supported → 2, some → 1, none → 0; an answer
  with no such sentence (a refusal, a greeting) claims nothing unsupported → 2, flagged "no
  checkable sentence" for a person to look at, never NaN and never missing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judge.io.limits import bounded_reply
from judge.judging.evidence import Sentence, answer_sentences, cite, context_sentences, verify_quote
from judge.judging.injection import instruction_flags
from judge.judging.types import (
    ContextChunk,
    EvidenceMatch,
    Mode,
    SentenceCheck,
    Status,
    Verdict,
)

#: Bump when a payload changes (it is in the judge fingerprint through the schema too).
#: 2: the ``cited`` and ``sentences`` modes (the mode and its schema are fingerprinted).
SCHEMA_VERSION = 2

EVIDENCE_MAX_CHARS = 200


class VerdictPayload(BaseModel):
    """What the model must return. Field order is generation order: quote first, then score.

    Strict: ``true`` or ``"2"`` or ``2.0`` is not a score (lax parsing would read ``true`` as 1).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    evidence: str = Field(max_length=EVIDENCE_MAX_CHARS)
    """One sentence copied from the context ("" for a correct refusal)."""
    faithfulness: Literal[0, 1, 2]
    relevance: Literal[0, 1, 2]
    note: str = Field(max_length=80)
    """Bounded, like ``evidence``: under a grammar a model that loops inside a string is cut
    at the bound and the JSON still completes, instead of running to the token limit."""

    @field_validator("faithfulness", "relevance", mode="before")
    @classmethod
    def _integer_only(cls, value: object) -> object:
        return _score(value)


def _score(value: object) -> object:
    # Literal[0, 1, 2] alone lets 2.0 and True through (2.0 == 2, True == 1).
    if type(value) is not int:
        raise ValueError(f"must be the integer 0, 1 or 2, got {value!r}")
    return value


class CitedPayload(BaseModel):
    """The ``cited`` mode's reply: the number of a context sentence instead of a quote."""

    model_config = ConfigDict(extra="forbid", strict=True)

    evidence_sentence: int = Field(ge=0)
    """The number of the context sentence that best supports or contradicts the answer, as the
    prompt numbered them; 0 for none (a correct refusal)."""
    faithfulness: Literal[0, 1, 2]
    relevance: Literal[0, 1, 2]
    note: str = Field(max_length=80)

    @field_validator("faithfulness", "relevance", mode="before")
    @classmethod
    def _integer_only(cls, value: object) -> object:
        return _score(value)


SentenceVerdict = Literal["supported", "unsupported", "no_claim"]


class SentencePayload(BaseModel):
    """One answer sentence's verdict in the ``sentences`` mode's reply."""

    model_config = ConfigDict(extra="forbid", strict=True)

    n: int = Field(ge=1)
    verdict: SentenceVerdict
    evidence_sentence: int = Field(ge=0)


class SentencesPayload(BaseModel):
    """The ``sentences`` mode's reply: a verdict per answer sentence, then relevance. There is
    no faithfulness field: it follows from the sentences (``sentence_faithfulness``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    sentences: list[SentencePayload] = Field(min_length=1)
    relevance: Literal[0, 1, 2]
    note: str = Field(max_length=80)

    @field_validator("relevance", mode="before")
    @classmethod
    def _integer_only(cls, value: object) -> object:
        return _score(value)


_PAYLOADS: dict[str, type[BaseModel]] = {
    "quote": VerdictPayload,
    "cited": CitedPayload,
    "sentences": SentencesPayload,
}


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every ``$ref`` to its ``$defs`` replaced by the definition: one plain
    object, as every backend's schema-to-grammar converter reads it."""
    definitions = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return walk(definitions[reference.removeprefix("#/$defs/")])
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    inlined: dict[str, Any] = walk(schema)
    return inlined


@functools.cache
def verdict_schema(mode: Mode = "quote") -> dict[str, Any]:
    """The JSON schema of a mode's reply, sent to the backend (grammar-constrained where
    supported) and fingerprinted.

    Built once per mode: it goes with every request. Callers must not modify it.
    """
    return _inlined(_PAYLOADS[mode].model_json_schema())


def request_schema(mode: Mode, answer: str) -> dict[str, Any]:
    """The schema sent with one request: the mode's, and in ``sentences`` mode with the array
    bounded to the answer's number of sentences (``minItems`` = ``maxItems``), so that a
    grammar lets the model write exactly one entry per sentence. The other bounds (each ``n``
    once, cited numbers that exist) no grammar can express: they are checked after parsing."""
    schema = verdict_schema(mode)
    if mode != "sentences":
        return schema
    count = len(answer_sentences(answer))
    array = {**schema["properties"]["sentences"], "minItems": count, "maxItems": count}
    return {**schema, "properties": {**schema["properties"], "sentences": array}}


class Reply(BaseModel):
    """One backend answer for one item, or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["reply", "truncated", "error"] = "reply"
    """reply: the model answered; truncated: the prompt did not fit; error: the backend failed."""
    text: str = ""
    finish_reason: str | None = None
    """"stop" for a complete reply; "length" means it was cut off at the token limit."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    detail: str | None = None
    """Why the reply is missing (truncated or error)."""
    score_probabilities: dict[str, tuple[float, float, float]] | None = None
    """Per axis, the model's P(0), P(1), P(2) at the score's token, where the backend reports
    token probabilities (``judge.judging.confidence``); None where it does not."""

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        """A reply over ``judge.io.limits.MAX_REPLY_KB`` becomes a failed one saying why."""
        return bounded_reply(data)


def json_problem(exc: json.JSONDecodeError) -> str:
    """The whole of a JSON error: what, where (line, column) and the text around it."""
    start = max(exc.pos - 20, 0)
    around = exc.doc[start : exc.pos + 20]
    return f"{exc.msg} at line {exc.lineno} column {exc.colno} (near {around!r})"


#: ``json.loads(text, strict=False)`` without building a decoder per reply (json.loads does
#: when given options). strict=False: a raw control character inside a string (a newline in
#: "note") is read, not refused; some backends' grammars allow it and the meaning is plain.
_LENIENT_JSON = json.JSONDecoder(strict=False)


class ReplyProblem(Exception):
    """A reply that parsed but cannot be a verdict (the whole message says why)."""


def make_verdict(
    question_id: str,
    item_key: str,
    reply: Reply,
    context: list[ContextChunk],
    answerable: bool,
    cached: bool = False,
    *,
    answer: str | None = None,
    mode: Mode = "quote",
) -> Verdict:
    """Parse and check a reply; anything short of a valid, complete reply is a non-ok status.

    ``mode`` is the prompt's (``Prompt.mode``): it says which reply shape to expect. The
    ``sentences`` mode needs the ``answer``, whose sentences the reply judges.

    An ok verdict is also flagged when the item's ``answer`` (when given) or one of its chunks
    holds a judge-directed instruction (``judge.judging.injection``): the score may be the
    instruction's, not the judge's. Derived here, like the quote's flags, so a detector fix
    applies to cached replies.
    """
    if mode == "sentences" and answer is None:
        raise ValueError("make_verdict: the sentences mode needs the answer (answer=...)")
    common: dict[str, Any] = {
        "question_id": question_id,
        "item_key": item_key,
        "raw_reply": reply.text,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "latency_s": reply.latency_s,
        "cached": cached,
        "mode": mode,
    }
    unusable = _unusable(reply)
    if unusable is not None:
        status, error = unusable
        return Verdict(status=status, error=error, **common)
    try:
        judged = _judged(reply.text, mode, context, answerable, answer or "")
    except (json.JSONDecodeError, ValidationError, ReplyProblem) as exc:
        return Verdict(status="parse_error", error=_parse_error(exc), **common)
    review = judged.pop("review") + instruction_flags(answer, context)
    return Verdict(
        status="ok",
        **judged,
        review=review,
        score_probabilities=reply.score_probabilities,
        **common,
    )


def _unusable(reply: Reply) -> tuple[Status, str | None] | None:
    """Why a reply cannot be parsed at all (the status and error of its verdict), or None: the
    prompt did not fit, the backend failed, or the model was cut off at the token limit."""
    if reply.kind == "truncated":
        return "truncated", reply.detail
    if reply.kind == "error":
        return "backend_error", reply.detail
    if reply.finish_reason == "length":
        return (
            "parse_error",
            "reply cut off at the token limit (finish_reason 'length'); raise max_tokens",
        )
    return None


def _judged(
    text: str, mode: Mode, context: list[ContextChunk], answerable: bool, answer: str
) -> dict[str, Any]:
    """A reply's text read as ``mode``'s payload and resolved against the context: the
    verdict's fields, its own review flags under ``review``.

    Raises ``json.JSONDecodeError`` (not JSON), ``ValidationError`` (not the schema) or
    ``ReplyProblem`` (the schema, but not a possible verdict)."""
    parsed = _LENIENT_JSON.decode(text)
    payload = _PAYLOADS[mode].model_validate(parsed)
    if isinstance(payload, VerdictPayload):
        return _quoted(payload, context, answerable)
    if isinstance(payload, CitedPayload):
        return _cited(payload, context, answerable)
    assert isinstance(payload, SentencesPayload)
    return _by_sentence(payload, context, answer)


def _parse_error(exc: json.JSONDecodeError | ValidationError | ReplyProblem) -> str:
    """The error of a verdict whose reply ``_judged`` refused, in one line."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {json_problem(exc)}"
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()
        )
        return f"breaks the schema: {problems}"
    return f"breaks the schema: {exc}"


def _quoted(
    payload: VerdictPayload, context: list[ContextChunk], answerable: bool
) -> dict[str, Any]:
    match = verify_quote(payload.evidence, context)
    return {
        "faithfulness": payload.faithfulness,
        "relevance": payload.relevance,
        "note": payload.note,
        "evidence": payload.evidence,
        "match": match,
        "review": quote_flags(payload.faithfulness, payload.evidence, match, answerable),
    }


def _numbered(number: int, numbered: list[Sentence], where: str) -> Sentence | None:
    """The context sentence a reply cites (None for 0); a number past the last one is a
    reply that cannot be a verdict."""
    if number == 0:
        return None
    if number > len(numbered):
        raise ReplyProblem(f"{where} cites sentence {number} of {len(numbered)}")
    return numbered[number - 1]


def _cited(payload: CitedPayload, context: list[ContextChunk], answerable: bool) -> dict[str, Any]:
    sentence = _numbered(payload.evidence_sentence, context_sentences(context), "evidence_sentence")
    flags = []
    if sentence is None and payload.faithfulness > 0 and answerable:
        claim = "faithful" if payload.faithfulness == 2 else "partly faithful (1)"
        flags.append(f"{claim}, but cites no context sentence (the question is answerable)")
    return {
        "faithfulness": payload.faithfulness,
        "relevance": payload.relevance,
        "note": payload.note,
        "evidence": sentence.text if sentence else "",
        "match": cite(sentence) if sentence else EvidenceMatch(kind="empty"),
        "review": tuple(flags),
    }


#: The review flag of an answer none of whose sentences claims anything.
NO_CHECKABLE_SENTENCE = "no checkable sentence (faithfulness 2: the answer claims nothing)"


def sentence_faithfulness(verdicts: Sequence[str]) -> int:
    """Faithfulness from the answer sentences' verdicts, by the documented rule.

    Among the sentences that claim something (verdict not ``no_claim``): all ``supported`` → 2,
    some → 1, none → 0. An answer with no such sentence (a refusal, a greeting) claims nothing
    that could be unsupported → 2 (``make_verdict`` flags it for review); never NaN.
    """
    checkable = [v for v in verdicts if v != "no_claim"]
    supported = sum(v == "supported" for v in checkable)
    if supported == len(checkable):
        return 2
    return 1 if supported else 0


def _listed(numbers: Sequence[int], most: int = 12) -> str:
    shown = ", ".join(map(str, numbers[:most]))
    return shown + (f", … ({len(numbers)} in all)" if len(numbers) > most else "")


def _by_sentence(
    payload: SentencesPayload, context: list[ContextChunk], answer: str
) -> dict[str, Any]:
    sentences = answer_sentences(answer)
    given = [entry.n for entry in payload.sentences]
    if sorted(given) != list(range(1, len(sentences) + 1)):
        count = len(sentences)
        raise ReplyProblem(
            f"sentences must judge each of the answer's {count} sentence{'s' * (count != 1)} "
            f"once (n = 1 to {count}); got n = {_listed(given)}"
        )
    numbered = context_sentences(context)
    checks = []
    for entry in sorted(payload.sentences, key=lambda e: e.n):
        own = sentences[entry.n - 1]
        cited = _numbered(entry.evidence_sentence, numbered, f"sentence {entry.n}")
        checks.append(
            SentenceCheck(
                n=entry.n,
                text=own.text,
                start=own.start,
                end=own.end,
                verdict=entry.verdict,
                evidence=cite(cited) if cited else None,
                evidence_text=cited.text if cited else "",
            )
        )
    flags = []
    if all(check.verdict == "no_claim" for check in checks):
        flags.append(NO_CHECKABLE_SENTENCE)
    flags += [
        f"sentence {check.n}: supported, but cites no context sentence"
        for check in checks
        if check.verdict == "supported" and check.evidence is None
    ]
    # Existing displays show one piece of evidence: the first supported sentence's citation.
    first = next((c for c in checks if c.verdict == "supported" and c.evidence), None)
    return {
        "faithfulness": sentence_faithfulness([check.verdict for check in checks]),
        "relevance": payload.relevance,
        "note": payload.note,
        "evidence": first.evidence_text if first else "",
        "match": first.evidence if first and first.evidence else EvidenceMatch(kind="empty"),
        "sentences": tuple(checks),
        "review": tuple(flags),
    }


def quote_flags(
    faithfulness: int, evidence: str, match: EvidenceMatch, answerable: bool
) -> tuple[str, ...]:
    """Why a verdict's quote does not back its score: the verdict's own review flags.

    Any faithfulness above 0 claims support in the context, so 1 needs evidence as much as 2
    does: a faithfulness-1 verdict quoting "1" is as unfounded as a faithfulness-2 one. A 0
    claims nothing, so only a partly found quote (a misquote, whatever the score) is flagged
    there. Data only: flags that need the human labels or the golden chunks are the review
    page's (``judge.report.review_page``).
    """
    claim = "faithful" if faithfulness == 2 else "partly faithful (1)"
    flags = []
    if faithfulness > 0 and match.kind == "absent":
        flags.append(f"{claim}, but the quote is not in the context")
    if faithfulness > 0 and match.kind == "too_short":
        # Short once normalised, yet the raw text may be long (spaces, quote marks): bounded.
        quote = evidence.strip()
        shown = json.dumps(quote if len(quote) <= 20 else quote[:19] + "…", ensure_ascii=False)
        flags.append(f"{claim}, but the quote {shown} is too short to be evidence")
    if faithfulness > 0 and match.kind == "empty" and answerable:
        flags.append(f"{claim}, but no quote (the question is answerable)")
    if match.kind == "partial":
        flags.append(f"quote only partly found ({match.coverage:.0%})")
    return tuple(flags)


def review_reasons(verdict: Verdict) -> list[str]:
    """Why a person should look at this verdict: its status if not ok, else its flags."""
    if verdict.status != "ok":
        return [f"{verdict.status}: {verdict.error}"]
    return list(verdict.review)
