"""What a verdict's evidence is, said in the same words by report.md, judge show and
review.html; and a text cut at spans that never loses or repeats a character."""

from typing import Any

from judge.judging.types import EvidenceMatch, SentenceCheck, Verdict
from judge.report.evidence_text import cut_at_spans, evidence_origin


def test_evidence_origin_in_every_mode() -> None:
    base = Verdict(question_id="q1", item_key="k", status="ok", faithfulness=2, relevance=2)

    def origin(**changes: Any) -> str:
        return evidence_origin(base.model_copy(update=changes))

    def quote(kind: str, coverage: float = 1.0) -> EvidenceMatch:
        return EvidenceMatch(kind=kind, coverage=coverage)  # type: ignore[arg-type]

    assert origin(match=quote("exact")) == "quote (verified: exact)"
    assert origin(match=quote("normalised")) == "quote (verified: normalised)"
    assert origin(match=quote("partial", 0.93)) == "quote (not verified: partly found, 93%)"
    assert origin(match=quote("absent", 0.2)) == "quote (not verified: absent)"
    assert origin(match=quote("too_short", 0)) == "quote (not verified: too short)"
    assert origin(match=quote("empty", 0)) == "no quote"
    cited = EvidenceMatch(kind="cited", chunk_id="a/b", start=3, end=9, coverage=1)
    assert origin(mode="cited", match=cited) == (
        "cited sentence in a/b, characters 3–9 (real by construction; whether it supports the "
        "verdict is the reviewer's call)"
    )
    assert origin(mode="cited", match=quote("empty", 0)) == "no sentence cited"
    assert origin(mode="sentences", sentences=()) == (
        "sentence by sentence: no answer sentence with a claim to check"
    )
    one = SentenceCheck(n=1, text="x", start=0, end=1, verdict="supported", evidence=cited)
    two = SentenceCheck(n=2, text="y", start=1, end=2, verdict="unsupported")
    assert origin(mode="sentences", sentences=(one, two)).startswith(
        "sentence by sentence: 1 of 2 answer sentences cite a context sentence (real by "
    )
    assert evidence_origin(base.model_copy(update={"status": "parse_error"})) == ""


def test_cut_at_spans_never_loses_or_repeats_text() -> None:
    text = "abcdefghij"
    assert cut_at_spans(text, [(2, 4, "x"), (6, 8, "y")]) == [
        ("ab", None),
        ("cd", "x"),
        ("ef", None),
        ("gh", "y"),
        ("ij", None),
    ]
    # Out of order, overlapping, empty, negative or past the end: those spans are left out.
    bad = [(6, 8, "y"), (2, 4, "x"), (3, 7, "overlaps"), (5, 5, "empty"), (8, 11, "past")]
    pieces = cut_at_spans(text, [*bad, (-1, 1, "negative")])
    assert "".join(piece for piece, _ in pieces) == text
    assert [tag for _, tag in pieces if tag] == ["x", "y"]
    assert cut_at_spans("", [(0, 1, "x")]) == []
