"""``judge.report.comparisons_text``: report.md's comparisons with earlier runs: a line per
comparison naming what it was against and its counts, a table of the cells where a question
moved (values, interval, p, direction, the questions named up to ten), and the rule's words."""

from __future__ import annotations

from judge.report.comparisons_text import (
    DIRECTION_WORDS,
    MOVED_IN_ROW,
    comparison_lines,
    rule_line,
)
from judge.results.compare import SEASON, Change, GateRule, Moved, SectionComparison

TABLE_HEAD = [
    "",
    "  | type | metric | pairs | old | new | change [95 % interval] | p | direction "
    "| questions that moved |",
    "  |---|---|---:|---:|---:|---|---:|---|---|",
]


def _change(direction: str = "noise", moved: tuple[Moved, ...] = (), **fields: object) -> Change:
    values: dict[str, object] = {
        "section": "judge",
        "type": "factual",
        "metric": "faithfulness",
        "n": 12,
        "old": 2.0,
        "new": 1.6666666,
        "delta": -0.3333333,
        "low": -0.5833333,
        "high": -0.0833333,
        "margin": 0.1,
        "direction": direction,
        "moved": moved,
        "p_fall": 0.00048828125,
        "p_rise": 1.0,
    }
    return Change(**(values | fields))  # type: ignore[arg-type]


def test_a_comparison_without_an_earlier_run_is_its_note() -> None:
    none = SectionComparison("retrieval", None, [], "no compatible earlier run")
    assert comparison_lines([none], "the baseline (x)") == [
        "- **retrieval** against —: no compatible earlier run"
    ]


def test_a_comparison_where_nothing_moved_is_one_line_of_counts() -> None:
    quiet = SectionComparison("judge", "20261201T000000Z-abcd", [_change(), _change()], "")
    assert comparison_lines([quiet], "unused") == [
        "- **judge** against 20261201T000000Z-abcd: of 2 (type, metric) cells: 0 regressed, "
        "0 improved, 0 listed (beyond the margin, not shown to be more than noise), 2 within "
        "noise; 2 of 2 with no question changed"
    ]


def test_a_regression_is_a_row_of_the_table_against_the_baseline_named() -> None:
    moved = (Moved("q1", 2, 0), Moved("q7", 2, 1.5))
    comp = SectionComparison("judge", "baseline", [_change("regressed", moved), _change()], "n")
    lines = comparison_lines([comp], "the baseline (b.json)")
    assert lines[0] == (
        "- **judge** against the baseline (b.json): of 2 (type, metric) cells: 1 regressed, "
        "0 improved, 0 listed (beyond the margin, not shown to be more than noise), 1 within "
        "noise; 1 of 2 with no question changed (n)"
    )
    assert lines[1:4] == TABLE_HEAD
    assert lines[4] == (
        "  | factual | faithfulness | 12 | 2.000 | 1.667 | -0.333 [-0.583, -0.083] | 0.0005 "
        "| **regressed** | q1 2→0, q7 2→1.500 |"
    )
    assert lines[5:] == [""]


def test_a_rise_shows_its_own_p_and_a_season_its_nights() -> None:
    up = _change("improved", (Moved("q2", 0, 1),), delta=0.25, p_rise=0.00001, nights=3)
    comp = SectionComparison("retrieval", SEASON, [up], "")
    lines = comparison_lines([comp], "unused")
    assert lines[0].startswith("- **retrieval** against the season: of 1 (type, metric) cells")
    assert "| 2.000 | 1.667 (3 nights) | +0.250 [" in lines[4]
    assert "| < 0.0001 | improved | q2 0→1 |" in lines[4]


def test_a_row_names_ten_questions_and_counts_the_rest() -> None:
    moved = tuple(Moved(f"q{i:02d}", 1, 0) for i in range(12))
    lines = comparison_lines([SectionComparison("judge", "f", [_change("listed", moved)], "")], "")
    assert MOVED_IN_ROW == 10
    assert lines[4].endswith(
        "| listed (not shown) | q00 1→0, q01 1→0, q02 1→0, q03 1→0, "
        "q04 1→0, q05 1→0, q06 1→0, q07 1→0, q08 1→0, q09 1→0, … (2 more) |"
    )


def test_data_in_a_comparison_is_escaped_for_markdown() -> None:
    comp = SectionComparison("judge", "run|x", [_change("collapsed", (Moved("q|1", 2, 0),))], "")
    lines = comparison_lines([comp], "")
    assert lines[0].startswith(
        "- **judge** against run\\|x: of 1 (type, metric) cells: 1 collapsed, "
    )
    assert lines[4].endswith("| **collapsed** | q\\|1 2→0 |")


def test_every_direction_has_its_words() -> None:
    assert DIRECTION_WORDS == {
        "collapsed": "**collapsed**",
        "regressed": "**regressed**",
        "improved": "improved",
        "listed": "listed (not shown)",
        "noise": "noise",
    }


def test_the_rule_line_ends_with_the_rules_own_words() -> None:
    rule = GateRule()
    line = rule_line(rule)
    assert line.startswith(
        "Compared question by question (docs/gate.md): a type's metric regressed"
    )
    assert f"({rule.describe()})." in line
    assert "margin 0.05 on 0-1 metrics, 0.1 on 0-2 scores" in line
    assert line.endswith("is listed, never a regression.")
