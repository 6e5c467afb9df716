"""``judge.results.bars``: a bar fails below its floor, without a value or with failed
questions; two decimals never hide which side of the floor a value is; a suggested bar is
today's value minus the margin, rounded down (issue 22, item 2)."""

from __future__ import annotations

from judge.results.bars import BarResult, check_bars, suggest_bars
from judge.results.gate import bar_checks
from judge.results.tables import TypeTable
from tests.conftest import REPO


def _judge_table(rows: list[dict[str, str | int | float | None]]) -> TypeTable:
    return TypeTable(
        metrics=["faithfulness", "relevance"],
        count_columns=["n", "parse_error", "adapter_failed"],
        primary="faithfulness",
        weakest=None,
        rows=rows,
    )


RETRIEVAL = TypeTable(
    metrics=["recall@5"],
    count_columns=["n", "excluded"],
    primary="recall@5",
    weakest=None,
    rows=[{"type": "factual", "n": 12, "excluded": 0, "recall@5": 0.75}],
)


def test_a_bar_fails_below_its_floor_without_a_value_and_with_failed_questions() -> None:
    judge = _judge_table(
        [
            {
                "type": "factual",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": 1.42,
                "relevance": 1.9,
            },
            {
                "type": "negative",
                "n": 3,
                "parse_error": 1,
                "adapter_failed": 1,
                "faithfulness": 2.0,
                "relevance": 2.0,
            },
            {
                "type": "out_of_scope",
                "n": 0,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": None,
                "relevance": None,
            },
        ]
    )
    bars = {
        "faithfulness": {"factual": 1.6, "negative": 1.0, "out_of_scope": 1.0},
        "relevance": {"factual": 1.9},
        "recall@5": {"factual": 0.7},
    }
    results = check_bars(bars, judge, RETRIEVAL)
    lines = [r.line() for r in results]
    assert lines == [
        "bar: factual faithfulness 1.42 < 1.60 (12 questions)",
        "bar: negative faithfulness 2.00 ≥ 1.00 over 3 of 5 questions: 2 got no answer or no verdict",
        "bar: out_of_scope faithfulness has no value (0 questions), bar 1.00",
        "bar: factual relevance 1.90 ≥ 1.90 (12 questions)",
        "bar: factual recall@5 0.75 ≥ 0.70 (12 questions)",
    ]
    assert [r.passed for r in results] == [False, False, False, True, True]
    checks = bar_checks(results)
    assert [(c.name, c.passed, c.kind) for c in checks][:2] == [
        ("bar: factual faithfulness", False, "bar"),
        ("bar: negative faithfulness", False, "bar"),
    ]
    assert checks[0].message == lines[0]


def test_two_decimals_never_hide_which_side_of_the_floor_a_value_is() -> None:
    assert BarResult("faithfulness", "factual", 1.6, 1.597, 10, 0).line() == (
        "bar: factual faithfulness 1.597 < 1.600 (10 questions)"
    )


def test_suggest_is_todays_value_minus_the_margin_rounded_down() -> None:
    judge = _judge_table(
        [
            {
                "type": "factual",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": 1.333333,
                "relevance": 0.05,
            },
            {
                "type": "all",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": 1.333333,
                "relevance": 0.05,
            },
        ]
    )
    suggested = suggest_bars(
        ["faithfulness", "relevance", "recall@5"], judge, RETRIEVAL, ["factual", "negative"]
    )
    # 1.333333 - 0.10 = 1.233333 -> 1.23; 0.05 - 0.10 < 0 -> 0.0; 0.75 - 0.05 = 0.70 (not 0.69)
    assert [(s.metric, s.type, s.floor) for s in suggested] == [
        ("faithfulness", "factual", 1.23),
        ("relevance", "factual", 0.0),
        ("recall@5", "factual", 0.7),
    ]


def test_a_correctness_bar_is_over_the_ok_correctness_verdicts() -> None:
    judge = TypeTable(
        metrics=["faithfulness", "relevance", "correctness"],
        count_columns=[
            "n",
            "parse_error",
            "adapter_failed",
            "correctness_asked",
            "correctness_not_ok",
        ],
        primary="faithfulness",
        weakest=None,
        rows=[
            {
                "type": "factual",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "correctness_asked": 8,
                "correctness_not_ok": 1,
                "faithfulness": 1.5,
                "relevance": 1.5,
                "correctness": 1.25,
            },
        ],
    )
    bars = {"faithfulness": {"factual": 1.0}, "correctness": {"factual": 1.0}}
    # faithfulness: over the 12 answers, none failed (8 asked about correctness is no failure);
    # correctness: 8 asked, 1 not ok, so over 7 of 8
    assert [r.line() for r in check_bars(bars, judge, RETRIEVAL)] == [
        "bar: factual faithfulness 1.50 ≥ 1.00 (12 questions)",
        "bar: factual correctness 1.25 ≥ 1.00 over 7 of 8 questions: 1 got no answer or no verdict",
    ]


def test_every_optional_axis_is_counted_by_the_columns_the_judge_table_writes() -> None:
    """No metric name is special in ``judge.results.bars``: an optional axis is counted by its
    ``<axis>_asked`` and ``<axis>_not_ok`` columns, the names ``judge.results.tables`` writes."""
    from judge.axes import OPTIONAL_AXES
    from judge.results.tables import CORRECTNESS_ASKED, CORRECTNESS_NOT_OK

    assert OPTIONAL_AXES == ("correctness",)
    assert (CORRECTNESS_ASKED, CORRECTNESS_NOT_OK) == ("correctness_asked", "correctness_not_ok")
    source = (REPO / "judge" / "results" / "bars.py").read_text(encoding="utf-8")
    assert '"correctness"' not in source
