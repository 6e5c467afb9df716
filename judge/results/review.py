"""Why a judged answer needs a person's look: the one definition every view counts.

The verdict's own flags (``judge.judging.verdict``: status not ok, quote checks, injection)
plus what needs the human labels or the golden chunks: a disagreement with a label, a
faithful verdict whose evidence comes from a chunk the golden set does not list, a quote
not verified, unsupported sentences, low confidence. The run record keeps the result per
question (``judge.record.QuestionRow.triage``); the console, report.md, report.json and
review.html show those same questions and count them the same way.
"""

from __future__ import annotations

from typing import NamedTuple

from judge.judging.confidence import LOW_CONFIDENCE
from judge.judging.verdict import SentenceCheck, Verdict, review_reasons
from judge.results.item_record import ItemRecord


def unsupported(verdict: Verdict) -> list[SentenceCheck]:
    """The answer sentences the judge found unsupported (none outside sentence mode)."""
    return [s for s in verdict.sentences or () if s.verdict == "unsupported"]


#: The triage filters: flag key → what the filter shows (in the page's filter list).
TRIAGE_FLAGS: dict[str, str] = {
    "disagrees": "disagrees with a human label",
    "foreign_quote": "faithfulness 2, quote from a non-golden chunk",
    "unverified_quote": "quote not verified",
    "not_ok": "verdict status not ok",
    "adapter_failed": "adapter failed (no answer)",
    "verdict_flags": "flagged by the verdict's checks",
    "low_confidence": "low judge confidence",
    "unsupported_sentences": "unsupported sentence(s)",
}


#: What a found quote is; anything else with a quote is not verified.
_VERIFIED = ("exact", "normalised")


#: Flags that are the judge's findings, not doubts about its verdict: an unsupported answer
#: sentence lowers faithfulness and is listed on its own (report.md's "Unsupported answer
#: sentences", a filter of the review page), but does not by itself make a question one to look at.
FINDINGS = frozenset({"unsupported_sentences"})


class Triage(NamedTuple):
    """Why an item deserves a look: flag keys (for filters) and the sentences shown."""

    flags: list[str]
    reasons: list[str]
    gap: int
    """The largest score difference between the judge and one human label (F and R summed)."""

    @property
    def needs_review(self) -> bool:
        """A doubt about the verdict (any flag but a finding): what every view counts."""
        return any(flag not in FINDINGS for flag in self.flags)


def triage(item: ItemRecord, verdict: Verdict) -> Triage:
    """The triage flags of one judged item (``TRIAGE_FLAGS``)."""
    flags: list[str] = []
    reasons = list(review_reasons(verdict))
    if verdict.status != "ok" or verdict.faithfulness is None or verdict.relevance is None:
        return Triage(["not_ok"], reasons, 0)
    if verdict.review:
        flags.append("verdict_flags")
    bad = unsupported(verdict)
    if bad:
        flags.append("unsupported_sentences")
        numbers = ", ".join(str(check.n) for check in bad)
        reasons.append(
            f"unsupported sentence{'s' if len(bad) > 1 else ''} {numbers} "
            f"(of {len(verdict.sentences or ())})"
        )
    judge_f, judge_r = verdict.faithfulness, verdict.relevance
    differing = [
        label
        for label in item.labels
        if (label.faithfulness, label.relevance) != (judge_f, judge_r)
    ]
    gap = max(
        (abs(lab.faithfulness - judge_f) + abs(lab.relevance - judge_r) for lab in differing),
        default=0,
    )
    if differing:
        flags.append("disagrees")
        humans = ", ".join(
            f"{lab.labeller} F{lab.faithfulness} R{lab.relevance}" for lab in differing
        )
        reasons.append(f"disagrees with a human label: {humans} (judge F{judge_f} R{judge_r})")
    match = verdict.match
    golden = item.relevant_chunks
    # Only where the golden chunks are known and there are some: an unlabelled question or an
    # out-of-scope one says nothing about where the evidence should come from.
    if judge_f == 2 and match and match.chunk_id and golden and match.chunk_id not in golden:
        flags.append("foreign_quote")
        what = "cited sentence" if match.cited else "quote"
        reasons.append(
            f"faithful, but the {what} comes from {match.chunk_id}, not a golden chunk "
            f"({', '.join(golden)})"
        )
    # An empty quote is legitimate (a refusal, or nothing to quote for a 0) unless the
    # verdict's own checks flagged it. Only quotes are verified: a sentence cited by number is
    # context text by construction (whether it supports the verdict is what the reviewer reads;
    # a missing citation is among the verdict's own flags).
    if (
        verdict.mode == "quote"
        and match
        and match.kind not in _VERIFIED
        and (match.kind != "empty" or verdict.review)
    ):
        flags.append("unverified_quote")
        # The verdict's flags are all about the quote: say it once.
        if not verdict.review:
            reasons.append(f"quote not verified ({match.kind.replace('_', ' ')})")
    confidence = verdict.confidence
    if confidence is not None and confidence < LOW_CONFIDENCE:
        flags.append("low_confidence")
        reasons.append(f"low judge confidence: {confidence:.0%} on the scores it gave")
    return Triage(flags, reasons, gap)


#: The triage of a question with nothing to look at (or no verdict to look at).
NO_TRIAGE = Triage([], [], 0)
