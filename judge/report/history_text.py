"""``judge history`` in the terminal: the season for a user on SSH, from the same
``SeasonView`` as ``reports/history.html`` (so the two show the same decisions and changes).

Per type (``all`` first) and metric, the last nights as one compact line: each night's mean
followed by the gate's mark (``X`` collapse, ``v`` regressed, ``S`` fell over the season, ``?``
listed, ``.`` ok; ``-`` no value), then the last night's value with its 95 % interval and n.
Then what changed under the numbers, with dates, each with its letter (J the judge, G the golden
set, C the corpus, E the index's embedder, R the run's other settings, H the harness).
"""

from __future__ import annotations

from judge.results.night_summary import Point
from judge.results.season_view import (
    CHANGE_MARK,
    DECISION_MARK,
    DECISION_TEXT,
    SeasonView,
    Series,
)

#: Nights shown per line by default.
LAST_NIGHTS = 10
#: The width of a metric's name in its line.
NAME_WIDTH = 16


def _cell(point: Point | None, mark: str) -> str:
    return "   -  " if point is None else f"{point.mean:5.3f}{mark}"


def _last(series: Series) -> str:
    for point in reversed(series.points):
        if point is not None:
            return f"last {point.mean:.3f} [{point.low:.3f}, {point.high:.3f}], n {point.n}"
    return "no value"


def series_line(series: Series, first: int) -> str:
    """One (type, metric): its nights from ``first`` on, each value with its mark."""
    cells = [
        _cell(point, DECISION_MARK[decision])
        for point, decision in zip(series.points[first:], series.decisions[first:], strict=True)
    ]
    name = series.metric.partition(":")[2]
    return f"  {name:<{NAME_WIDTH}} {' '.join(cells)}  ({_last(series)})"


def history_lines(view: SeasonView, last: int = LAST_NIGHTS, where: str = "") -> list[str]:
    """The season's lines: a head, per type and metric a compact line of the last ``last``
    nights, then the changes under the numbers within them, with dates."""
    if not view.nights:
        return ["no nights with a readable report folder yet; run 'judge run' first"]
    first = max(0, len(view.nights) - last)
    shown = view.nights[first:]
    head = (
        f"season: {len(view.nights)} night(s); the last {len(shown)} shown, "
        f"{shown[0].started_at[:10]} to {shown[-1].started_at[:10]}"
    )
    lines = [head + (f" (picture: {where})" if where else "")]
    lines.append(
        "marks: " + " · ".join(f"{DECISION_MARK[d]} {t}" for d, t in DECISION_TEXT.items())
    )
    for type_name in view.types:
        rows = [
            view.series[(type_name, metric)]
            for metric in view.metrics
            if any(p is not None for p in view.series[(type_name, metric)].points[first:])
        ]
        if rows:
            lines.append(type_name)
            lines.extend(series_line(series, first) for series in rows)
    changes = [c for c in view.changes if c.night >= first]
    lines.append("changes under the numbers:" if changes else "changes under the numbers: none")
    for change in changes:
        night = view.nights[change.night]
        lines.append(
            f"  {night.started_at[:10]} {CHANGE_MARK[change.kind]} {change.kind}: {change.text}"
            f" ({night.folder})"
        )
    return lines
