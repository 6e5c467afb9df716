"""The judge's axes and the scales of its per-question metrics: one home, which the other
modules agree with."""

from __future__ import annotations

import ast
from pathlib import Path

from judge import axes
from judge.axes import (
    AXES,
    EXPECTED_METRICS,
    FULL_MARKS,
    JUDGE_METRIC_SCALES,
    JUDGE_TABLE_METRICS,
    JUDGE_VALUES,
    SCALE,
    SCORE_METRICS,
    expected_metric,
    metric_scale,
)


def test_the_axes_and_their_scale() -> None:
    assert AXES == ("faithfulness", "relevance")
    assert SCALE == (0, 1, 2)
    assert FULL_MARKS == (2, 2)
    assert expected_metric("relevance") == "expected_relevance"
    assert EXPECTED_METRICS == ("expected_faithfulness", "expected_relevance")


def test_scores_are_on_0_2_and_everything_else_on_0_1() -> None:
    assert {
        "faithfulness",
        "relevance",
        "correctness",
        "expected_faithfulness",
        "expected_relevance",
    } == SCORE_METRICS
    assert [metric_scale(m) for m in JUDGE_VALUES] == [
        "score",
        "score",
        "share",
        "share",
        "share",
        "share",
    ]
    # Retrieval metrics (and any metric the judge does not score) are shares.
    assert metric_scale("ndcg@5") == metric_scale("mrr") == "share"
    assert set(JUDGE_METRIC_SCALES) == {*JUDGE_VALUES, *EXPECTED_METRICS, "correctness"}
    # The optional axis is a score like the others: the season, the gate's margins and the
    # collapses read one definition of it.
    assert metric_scale("correctness") == "score"


def test_the_results_modules_take_their_metric_lists_from_here() -> None:
    """One home: the results modules hold these very objects, not copies."""
    from judge.results import compare, tables, values

    assert values.JUDGE_VALUES is JUDGE_VALUES
    assert tuple(tables.JUDGE_METRICS) == JUDGE_TABLE_METRICS
    assert tables.EXPECTED_METRICS is EXPECTED_METRICS
    assert compare.SCORE_METRICS is SCORE_METRICS
    assert set(JUDGE_TABLE_METRICS) <= set(JUDGE_VALUES)


def test_the_judging_layer_takes_the_axes_from_here() -> None:
    from judge.audit import stats
    from judge.judging import confidence, stability

    assert confidence.AXES is AXES and stats.AXES is AXES
    assert confidence.SCORES == ("0", "1", "2")
    assert stability.AXES is AXES


def test_it_is_a_leaf() -> None:
    tree = ast.parse(Path(axes.__file__).read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not [m for m in imported if m and m.split(".")[0] == "judge"], imported
