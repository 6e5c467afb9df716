"""The judging package's public data (judge.judging.types): what counts as a found quote, the
expected scores and the confidence a verdict derives from its score probabilities, frozen and
strict verdicts, a context chunk as the record keeps it, and the stability report's counts and
rows."""

from __future__ import annotations

import pydantic
import pytest

from judge.judging.types import (
    MODES,
    STATUSES,
    VARIANTS,
    ContextChunk,
    Count,
    EvidenceMatch,
    FlaggedVerdict,
    StabilityReport,
    VariantFlags,
    VariantRow,
    Verdict,
)


def _verdict(**fields: object) -> Verdict:
    return Verdict.model_validate({"question_id": "q1", "item_key": "k", "status": "ok"} | fields)


@pytest.mark.parametrize(
    ("kind", "found", "cited"),
    [
        ("exact", True, False),
        ("normalised", True, False),
        ("partial", False, False),
        ("absent", False, False),
        ("too_short", False, False),
        ("empty", False, False),
        # A sentence pointed at by its number is real by construction, never "found".
        ("cited", False, True),
    ],
)
def test_only_an_exact_or_normalised_quote_is_found(kind: str, found: bool, cited: bool) -> None:
    match = EvidenceMatch.model_validate({"kind": kind})
    assert (match.found, match.cited) == (found, cited)


def test_the_expected_score_weighs_each_score_by_its_probability() -> None:
    verdict = _verdict(
        faithfulness=2,
        relevance=1,
        score_probabilities={"faithfulness": (0.1, 0.3, 0.6), "relevance": (0.2, 0.5, 0.3)},
    )
    # 0·0.1 + 1·0.3 + 2·0.6 = 1.5 and 0·0.2 + 1·0.5 + 2·0.3 = 1.1
    assert verdict.expected_scores == pytest.approx({"faithfulness": 1.5, "relevance": 1.1})
    assert _verdict(faithfulness=2, relevance=2).expected_scores == {}


def test_the_confidence_is_the_lower_probability_of_the_scores_given() -> None:
    both = {"faithfulness": (0.1, 0.3, 0.6), "relevance": (0.2, 0.5, 0.3)}
    # P(F = 2) = 0.6, P(R = 1) = 0.5: the lower one.
    assert _verdict(faithfulness=2, relevance=1, score_probabilities=both).confidence == 0.5
    # One axis with probabilities: its own.
    one = {"relevance": (0.0, 0.25, 0.75)}
    assert _verdict(faithfulness=0, relevance=2, score_probabilities=one).confidence == 0.75
    # None without probabilities, without scores (not ok), or with none for either axis.
    assert _verdict(faithfulness=2, relevance=2).confidence is None
    failed = _verdict(status="parse_error", score_probabilities=both)
    assert failed.confidence is None
    other = {"correctness": (0.0, 0.0, 1.0)}
    assert _verdict(faithfulness=2, relevance=2, score_probabilities=other).confidence is None


def test_a_verdict_is_frozen_and_refuses_unknown_fields_and_statuses() -> None:
    verdict = _verdict(faithfulness=2, relevance=2)
    with pytest.raises(pydantic.ValidationError):
        verdict.faithfulness = 1  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="extra"):
        _verdict(score=2)
    with pytest.raises(pydantic.ValidationError, match="status"):
        _verdict(status="maybe")
    assert STATUSES == ("ok", "parse_error", "backend_error", "truncated")
    assert MODES == ("quote", "cited", "sentences")
    assert verdict.mode == "quote" and verdict.sentences is None


def test_a_context_chunk_is_read_and_written_as_rank_chunk_id_text() -> None:
    verdict = _verdict(match={"kind": "exact", "chunk_id": "規程/1", "start": 0, "end": 3})
    assert verdict.match == EvidenceMatch(kind="exact", chunk_id="規程/1", start=0, end=3)
    chunk = ContextChunk(1, "規程/1", "年額3,800円です。")
    adapter = pydantic.TypeAdapter(ContextChunk)
    assert adapter.dump_python(chunk) == {
        "rank": 1,
        "chunk_id": "規程/1",
        "text": "年額3,800円です。",
    }
    assert (
        adapter.validate_json('{"rank": 1, "chunk_id": "規程/1", "text": "年額3,800円です。"}')
        == chunk
    )


def test_a_count_and_its_share() -> None:
    assert Count(3, 4).share == 0.75
    assert Count(0, 0).share is None  # nothing counted: no share, not 0 %


def _row(variant: str, question_type: str, pairs: int) -> VariantRow:
    zero = {"faithfulness": Count(0, pairs), "relevance": Count(0, pairs)}
    return VariantRow(variant, question_type, pairs, 0, 0, pairs, zero, zero, Count(0, pairs))  # type: ignore[arg-type]


def test_the_stability_report_finds_a_variants_row_all_by_default() -> None:
    rows = tuple(
        _row(variant, question_type, pairs)
        for variant in VARIANTS
        for question_type, pairs in (("factual", 3), ("all", 5))
    )
    report = StabilityReport(
        "lexical", "fp", 7, 10, ("q1",), ("factual",), rows, (), (), 10, 0, 0.1
    )
    assert report.row("shuffled") is rows[3]  # ("shuffled", "all")
    assert report.row("injection_ja", "factual") is rows[6]
    with pytest.raises(StopIteration):
        report.row("reversed", "negative")


def test_flags_count_the_flagged_verdicts_of_the_judged() -> None:
    flagged = (FlaggedVerdict("q1", "ok", ("instruction in the answer",)),)
    assert VariantFlags("injection_en", 4, flagged).count == Count(1, 4)
    assert VariantFlags(None, 0, ()).count == Count(0, 0)
