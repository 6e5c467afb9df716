"""``judge history`` in the terminal: the same decisions and changes as history.html, from one
set of nights."""

from __future__ import annotations

from judge.report.history_page import season_page_data
from judge.report.history_text import history_lines, series_line
from judge.results.night_summary import Point
from judge.results.season_view import DECISION_MARK, Series
from tests.report import history_screens as screens


def _parse(lines: list[str]) -> tuple[dict[tuple[str, str], list[str]], list[tuple[str, str]]]:
    """(type, metric) → the marks of its nights, and the changes as (date, letter + text)."""
    marks: dict[tuple[str, str], list[str]] = {}
    changes: list[tuple[str, str]] = []
    type_name = ""
    in_changes = False
    for line in lines[2:]:
        if line.startswith("changes under the numbers"):
            in_changes = True
        elif in_changes:
            date, _, rest = line.strip().partition(" ")
            changes.append((date, rest))
        elif not line.startswith(" "):
            type_name = line
        else:
            name, *cells = line.split("(")[0].split()
            marks[(type_name, name)] = [c[-1] if c != "-" else "-" for c in cells]
    return marks, changes


def test_the_terminal_shows_the_pages_decisions_and_changes() -> None:
    view = screens.season()
    data = season_page_data(view)
    marks, changes = _parse(history_lines(view, last=screens.NIGHTS))
    page_marks = {
        (type_name, metric.partition(":")[2]): [
            DECISION_MARK[d] if p is not None else "-"
            for d, p in zip(cell["decisions"], cell["points"], strict=True)
        ]
        for type_name, cells in data["cells"].items()
        for metric, cell in cells.items()
    }
    assert marks == page_marks
    assert marks[("factual", "faithfulness")][screens.COLLAPSE] == "X"
    assert [i for i, m in enumerate(marks[("procedural", "recall@5")]) if m == "S"] == list(
        screens.SEASON_FALL
    )
    page_changes = [
        (data["nights"][night]["date"][:10], f"{letter} {kind}: {text}")
        for night, kind, letter, text in data["changes"]
    ]
    assert [(date, rest.split(" (2026")[0]) for date, rest in changes] == page_changes
    assert changes[0][0] == "2026-11-09" and changes[0][1].startswith("E index: the embedding")


def test_the_last_nights_only_and_their_changes() -> None:
    lines = history_lines(screens.season(), last=5)
    assert lines[0].startswith("season: 30 night(s); the last 5 shown, 2026-11-26 to 2026-11-30")
    assert lines[-1] == "changes under the numbers: none"
    faith = next(line for line in lines if line.strip().startswith("faithfulness"))
    assert len(faith.split("(")[0].split()) == 1 + 5


def test_a_night_without_a_value_is_a_dash() -> None:
    series = Series(
        "all", "judge:faithfulness", [None, Point(1.5, 1.2, 1.8, 10)], ["ok", "listed"], None, {}
    )
    line = series_line(series, 0)
    assert line.split("(")[0].split() == ["faithfulness", "-", "1.500?"]
    assert line.endswith("(last 1.500 [1.200, 1.800], n 10)")


def test_no_nights() -> None:
    view = screens.season()._replace(nights=[])
    assert history_lines(view) == [
        "no nights with a readable report folder yet; run 'judge run' first"
    ]
