"""The audit's result types (judge.audit.types): the properties that are facts of the data
alone (a disagreement's gap, an agreement's coverage, an estimate's variance and half width,
why a cell shows no number and what a reader of a shown interval must know), and the marks
file's format name and version that review.html writes and the import checks."""

from __future__ import annotations

import pytest

from judge.audit.types import (
    MARKS_FORMAT,
    MARKS_VERSION,
    MIN_LABELLED,
    Agreement,
    CorrectedCell,
    Disagreement,
    Interval,
    Moments,
    PooledCell,
    PpiEstimate,
)
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.types import Verdict
from judge.results.item_record import ItemRecord

ITEM = ItemRecord(
    question_id="q1",
    type="factual",
    split="",
    question="年額プランはいくらですか？",
    answer="3,800円です。",
    context=[],
    retrieval={},
    labels=[],
)


def _label(faithfulness: int, relevance: int) -> HumanLabel:
    return HumanLabel(
        question_id="q1",
        faithfulness=faithfulness,
        relevance=relevance,
        labeller="ana",
        answer_sha256=text_sha256(ITEM.answer),
    )


def _estimate(
    labelled: int = 12,
    unlabelled: int = 30,
    rectifier_variance: float = 0.24,
    human_variance: float = 0.5,
) -> PpiEstimate:
    moments = Moments(
        human_variance=human_variance,
        covariance=0.3,
        labelled_prediction_variance=0.4,
        unlabelled_prediction_variance=0.45,
        prediction_spread=0.44,
    )
    return PpiEstimate(
        estimate=1.5,
        interval=Interval(1.2, 1.8),
        lam=0.8,
        labelled=labelled,
        unlabelled=unlabelled,
        rectifier_variance=rectifier_variance,
        prediction_variance=0.3,
        z=1.96,
        moments=moments,
        rectifier_mean=0.1,
        plus_variance=0.05,
        t=2.2,
        value=1.5,
        shown=Interval(1.1, 1.9),
    )


def _cell(estimate: PpiEstimate | None, labelled: int = 12, matched: int = 0) -> CorrectedCell:
    return CorrectedCell(
        items=40,
        judged=38,
        judge_mean=1.6,
        labelled=labelled,
        labels=labelled,
        unused_labels=0,
        chosen_labels=0,
        estimate=estimate,
        halving=None,
        fit=estimate,
        matched=matched,
    )


def _agreement(n: int, labelled: int) -> Agreement:
    return Agreement("qwen", {}, None, None, n, [], labelled=labelled)


def test_a_disagreements_gap_adds_both_axes() -> None:
    verdict = Verdict(question_id="q1", item_key="k", status="ok", faithfulness=0, relevance=2)
    # |2 − 0| + |1 − 2| = 3
    assert Disagreement(ITEM, _label(2, 1), verdict).gap == 3
    # A verdict without scores counts them as 0: |2 − 0| + |2 − 0| = 4, the largest gap.
    failed = Verdict(question_id="q1", item_key="k", status="parse_error")
    assert Disagreement(ITEM, _label(2, 2), failed).gap == 4


def test_coverage_is_the_share_of_labels_scored_and_none_without_labels() -> None:
    assert _agreement(7, 10).coverage == 0.7
    assert _agreement(0, 10).coverage == 0.0
    assert _agreement(0, 0).coverage is None


def test_the_estimators_variance_and_half_width() -> None:
    # 0.24 / 12 + 0.3 / 30 = 0.02 + 0.01
    assert _estimate().variance == pytest.approx(0.03)
    # No unlabelled item: the labels' term alone, 0.24 / 12.
    assert _estimate(unlabelled=0).variance == pytest.approx(0.02)
    # (1.8 − 1.2) / 2
    assert _estimate().half_width == pytest.approx(0.3)


def test_a_cell_without_an_estimate_says_how_many_labels_it_has() -> None:
    assert _cell(None, labelled=3).note == f"too few labels (3 of {MIN_LABELLED})"
    assert MIN_LABELLED == 10
    assert _cell(_estimate()).note is None


def test_the_remark_names_why_an_interval_comes_from_the_pseudo_labels_alone() -> None:
    # Corrections that vary, or no interval at all: nothing to remark.
    assert _cell(_estimate()).remark is None
    assert _cell(None).remark is None
    # Every correction Y − λ·Ŷ alike: said for the reason that applies, first one first.
    alike = _estimate(rectifier_variance=0.0)
    assert _cell(alike, matched=12).remark == (
        "the judge matched all 12 labels; width from the pseudo-labels"
    )
    same_labels = _estimate(rectifier_variance=0.0, human_variance=0.0)
    assert _cell(same_labels, matched=5).remark == (
        "all 12 labels alike; width from the pseudo-labels"
    )
    assert _cell(alike, matched=5).remark == "every correction alike; width from the pseudo-labels"


def test_a_pooled_cell_without_a_number_says_how_many_labels_it_has() -> None:
    none = PooledCell(("factual",), (), 20, 8, 1.5, None, None, None)
    assert none.note == "too few labels (8 of 10)"
    shown = PooledCell(("factual",), (), 20, 12, 1.5, 1.4, Interval(1.2, 1.6), 0.01, (1.0,))
    assert shown.note is None


def test_the_marks_file_format_the_page_and_the_import_share() -> None:
    # Every exported marks file carries these (docs/review.md describes the format): changing
    # them refuses the files reviewers already hold, so a change must be deliberate.
    assert (MARKS_FORMAT, MARKS_VERSION) == ("judge-review-marks", 1)
