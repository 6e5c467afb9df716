"""Verdicts are data: the judge's reply parsed, checked and kept, never turned into a 0.

``Reply`` is what a backend returns (raw text and metadata); it is what the cache stores.
``Verdict`` is derived from a reply every time it is used: parsing and evidence verification
are cheap and deterministic, so a fix to either applies to cached replies without re-judging.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judge.judging.evidence import EvidenceMatch, verify_quote
from judge.judging.injection import instruction_flags
from judge.judging.items import ContextChunk

#: Bump when VerdictPayload changes (it is in the judge fingerprint through the schema too).
SCHEMA_VERSION = 1

EVIDENCE_MAX_CHARS = 200

Status = Literal["ok", "parse_error", "backend_error", "truncated"]
STATUSES: tuple[Status, ...] = ("ok", "parse_error", "backend_error", "truncated")


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
        # Literal[0, 1, 2] alone lets 2.0 and True through (2.0 == 2, True == 1).
        if type(value) is not int:
            raise ValueError(f"must be the integer 0, 1 or 2, got {value!r}")
        return value


@functools.cache
def verdict_schema() -> dict[str, Any]:
    """The JSON schema sent to the backend (grammar-constrained where supported).

    Built once: it goes with every request. Callers must not modify it.
    """
    return VerdictPayload.model_json_schema()


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


#: How a prompt asks for evidence: ``quote`` (copy a sentence; the harness verifies it),
#: ``cited`` (the number of a numbered context sentence), ``sentences`` (a verdict and a cited
#: context sentence for every answer sentence). Chosen by the prompt file's placeholders.
Mode = Literal["quote", "cited", "sentences"]


class SentenceCheck(BaseModel):
    """The judge's verdict on one answer sentence (``sentences`` mode)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    """1-based, as the prompt numbered it."""
    text: str
    start: int
    """The sentence's span ``[start, end)`` in the answer text."""
    end: int
    verdict: Literal["supported", "unsupported", "no_claim"]
    evidence: EvidenceMatch | None = None
    """The context sentence it cites (kind ``cited``), None when it cites none."""
    evidence_text: str = ""


class Verdict(BaseModel):
    """The judgement of one answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    item_key: str
    status: Status
    faithfulness: int | None = None
    relevance: int | None = None
    evidence: str = ""
    note: str = ""
    match: EvidenceMatch | None = None
    review: tuple[str, ...] = ()
    """Reasons a person should look at this verdict (empty when nothing is suspicious)."""
    error: str | None = None
    raw_reply: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False
    score_probabilities: dict[str, tuple[float, float, float]] | None = None
    """The reply's score distributions (ok verdicts only), see ``Reply``."""
    mode: Mode = "quote"
    sentences: tuple[SentenceCheck, ...] | None = None
    """Per answer sentence, in ``sentences`` mode only."""

    @property
    def expected_scores(self) -> dict[str, float]:
        """Per axis with probabilities, the expected score 0·P(0) + 1·P(1) + 2·P(2) (empty
        without them; the integer score stays the most probable one)."""
        return {
            axis: probabilities[1] + 2 * probabilities[2]
            for axis, probabilities in (self.score_probabilities or {}).items()
        }

    @property
    def confidence(self) -> float | None:
        """The judge's probability of the scores it gave: the lower of the two axes' (None
        without probabilities, or for a verdict that is not ok)."""
        probabilities = self.score_probabilities
        if probabilities is None or self.faithfulness is None or self.relevance is None:
            return None
        chosen = {"faithfulness": self.faithfulness, "relevance": self.relevance}
        shares = [
            probabilities[axis][score] for axis, score in chosen.items() if axis in probabilities
        ]
        return min(shares) if shares else None


def json_problem(exc: json.JSONDecodeError) -> str:
    """The whole of a JSON error: what, where (line, column) and the text around it."""
    start = max(exc.pos - 20, 0)
    around = exc.doc[start : exc.pos + 20]
    return f"{exc.msg} at line {exc.lineno} column {exc.colno} (near {around!r})"


def make_verdict(
    question_id: str,
    item_key: str,
    reply: Reply,
    context: list[ContextChunk],
    answerable: bool,
    cached: bool = False,
    *,
    answer: str | None = None,
) -> Verdict:
    """Parse and check a reply; anything short of a valid, complete reply is a non-ok status.

    An ok verdict is also flagged when the item's ``answer`` (when given) or one of its chunks
    holds a judge-directed instruction (``judge.judging.injection``): the score may be the
    instruction's, not the judge's. Derived here, like the quote's flags, so a detector fix
    applies to cached replies.
    """
    common: dict[str, Any] = {
        "question_id": question_id,
        "item_key": item_key,
        "raw_reply": reply.text,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "latency_s": reply.latency_s,
        "cached": cached,
    }
    if reply.kind == "truncated":
        return Verdict(status="truncated", error=reply.detail, **common)
    if reply.kind == "error":
        return Verdict(status="backend_error", error=reply.detail, **common)
    if reply.finish_reason == "length":
        error = "reply cut off at the token limit (finish_reason 'length'); raise max_tokens"
        return Verdict(status="parse_error", error=error, **common)
    try:
        # strict=False: a raw control character inside a string (a newline in "note") is
        # read, not refused; some backends' grammars allow it and the meaning is plain.
        payload = VerdictPayload.model_validate(json.loads(reply.text, strict=False))
    except json.JSONDecodeError as exc:
        return Verdict(status="parse_error", error=f"not JSON: {json_problem(exc)}", **common)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()
        )
        return Verdict(status="parse_error", error=f"breaks the schema: {problems}", **common)
    match = verify_quote(payload.evidence, context)
    return Verdict(
        status="ok",
        faithfulness=payload.faithfulness,
        relevance=payload.relevance,
        evidence=payload.evidence,
        note=payload.note,
        match=match,
        review=quote_flags(payload.faithfulness, payload.evidence, match, answerable)
        + instruction_flags(answer, context),
        score_probabilities=reply.score_probabilities,
        **common,
    )


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
