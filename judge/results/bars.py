"""Per-type bars, the article's way: a floor per metric and question type, checked on a run's
per-type tables, and suggested from today's values minus a margin.

A bar is crossed when the type's mean is below its floor, when the type has no value at all
(nothing measured is not a pass), or when some of the type's questions got no answer or no
verdict: those are failures of the run, never a smaller n that lets the mean pass
(``judge.results.gate`` counts them the same way). Every bar, crossed or not, has one line that
says so, the line ``judge run --bars``, the gate's checks and the pytest plugin all show.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from judge.axes import OPTIONAL_AXES, metric_scale
from judge.grouped import ALL
from judge.results.tables import ADAPTER_FAILED, NOT_OK, TypeTable

#: The default margins of ``judge bars suggest``: "today's value minus about 0.05" on 0-1
#: shares, the same step on the judge's 0-2 scores (as the gate's ``margin_share`` and
#: ``margin_score``).
SUGGEST_MARGIN_SHARE = 0.05
SUGGEST_MARGIN_SCORE = 0.10
#: Floors are written with this many decimals, rounded down (a floor never above today's
#: value minus the margin).
FLOOR_DECIMALS = 2


class BarResult(NamedTuple):
    """One bar checked on one run."""

    metric: str
    type: str
    floor: float
    value: float | None
    """The type's mean (None: no question of the type has a value)."""
    n: int
    """The questions the mean is over."""
    missing: int
    """The type's questions with no answer or no verdict (not in the mean)."""

    @property
    def passed(self) -> bool:
        return self.value is not None and self.value >= self.floor and not self.missing

    @property
    def name(self) -> str:
        """The stable name of its check or test case, e.g. ``factual faithfulness``."""
        return f"{self.type} {self.metric}"

    def line(self) -> str:
        """e.g. ``bar: factual faithfulness 1.42 < 1.60 (12 questions)``."""
        head = f"bar: {self.name}"
        if self.value is None:
            questions = self._questions(self.n + self.missing)
            return f"{head} has no value ({questions}), bar {self.floor:.2f}"
        value, floor = _shown(self.value, self.floor)
        sign = "≥" if self.value >= self.floor else "<"
        if not self.missing:
            return f"{head} {value} {sign} {floor} ({self._questions(self.n)})"
        return (
            f"{head} {value} {sign} {floor} over {self.n} of {self.n + self.missing} questions: "
            f"{self.missing} got no answer or no verdict"
        )

    @staticmethod
    def _questions(n: int) -> str:
        return f"{n} question" + ("" if n == 1 else "s")


def _shown(value: float, floor: float) -> tuple[str, str]:
    """Value and floor with two decimals, or more where two would hide which is larger
    (1.597 < 1.60 reads wrong as "1.60 < 1.60")."""
    for decimals in range(FLOOR_DECIMALS, 7):
        shown = f"{value:.{decimals}f}", f"{floor:.{decimals}f}"
        if (float(shown[0]) >= float(shown[1])) == (value >= floor):
            return shown
    return f"{value:.6f}", f"{floor:.6f}"


class _Counted(NamedTuple):
    """How a row counts one metric's questions: the column of those it was asked of (None: the
    row's ``n``), the column of those among them with no value (subtracted), and the columns of
    its failures."""

    asked: str | None
    not_ok: str | None
    failures: tuple[str, ...]


def _counted(table: TypeTable, metric: str) -> _Counted:
    """An optional axis (``judge.axes.OPTIONAL_AXES``: correctness) has counts of its own in the
    judge table, ``<axis>_asked`` and ``<axis>_not_ok`` (``judge.results.tables``): its mean is
    over the ok verdicts of the questions it was asked of (a question without a reference answer
    is not asked, which is no failure), its failures its verdicts that are not ok and the
    adapter's failures. The answer's scores count the judge table's non-ok statuses and the
    adapter's failures; retrieval the adapter's failures only (its other counts, out-of-scope
    and unlabelled questions, are not failures). So a bar counts a metric's questions as the
    gate does, whatever other judgements are on."""
    if metric in OPTIONAL_AXES:
        asked, not_ok = f"{metric}_asked", f"{metric}_not_ok"
        return _Counted(asked, not_ok, (not_ok, ADAPTER_FAILED))
    if "faithfulness" in table.metrics:
        return _Counted(None, None, (*NOT_OK, ADAPTER_FAILED))
    return _Counted(None, None, (ADAPTER_FAILED,))


def _count(row: Mapping[str, object], column: str | None) -> int:
    value = row.get(column or "n", 0)
    return value if isinstance(value, int) else 0


def _failures(table: TypeTable, row: Mapping[str, object], metric: str) -> int:
    """A row's questions with no answer or no verdict for ``metric`` (``_counted``)."""
    return sum(_count(row, column) for column in _counted(table, metric).failures)


def _over(table: TypeTable, row: Mapping[str, object], metric: str) -> int:
    """How many questions the row's mean of ``metric`` is over (``_counted``)."""
    counted = _counted(table, metric)
    not_ok = _count(row, counted.not_ok) if counted.not_ok else 0
    return _count(row, counted.asked) - not_ok


def check_bars(
    bars: Mapping[str, Mapping[str, float]], judge: TypeTable, retrieval: TypeTable
) -> list[BarResult]:
    """Every bar against the run's per-type tables, in the order of the ``[bars]`` table."""
    results = []
    for metric, floors in bars.items():
        table = judge if metric in judge.metrics else retrieval
        rows = {str(row["type"]): row for row in table.rows}
        for qtype, floor in floors.items():
            row = rows.get(qtype, {})
            value = row.get(metric)
            results.append(
                BarResult(
                    metric,
                    qtype,
                    float(floor),
                    float(value) if isinstance(value, int | float) else None,
                    _over(table, row, metric),
                    _failures(table, row, metric) if row else 0,
                )
            )
    return results


def crossed(results: Iterable[BarResult]) -> list[BarResult]:
    return [r for r in results if not r.passed]


class Suggested(NamedTuple):
    """One suggested floor, with the value it came from."""

    metric: str
    type: str
    floor: float
    value: float
    n: int


def suggest_bars(
    metrics: Sequence[str],
    judge: TypeTable,
    retrieval: TypeTable,
    types: Sequence[str],
    margin_share: float = SUGGEST_MARGIN_SHARE,
    margin_score: float = SUGGEST_MARGIN_SCORE,
) -> list[Suggested]:
    """Per metric and type (in ``types`` order; ``all`` is left out: bars are per type), today's
    mean minus the metric's margin, rounded down to ``FLOOR_DECIMALS`` and never below 0. A type
    without a value (out-of-scope questions for retrieval) gets no bar."""
    out = []
    step = 10**FLOOR_DECIMALS
    for metric in metrics:
        table = judge if metric in judge.metrics else retrieval
        rows = {str(row["type"]): row for row in table.rows}
        margin = margin_score if metric_scale(metric) == "score" else margin_share
        for qtype in types:
            if qtype == ALL:
                continue
            row = rows.get(qtype, {})
            value, n = row.get(metric), row.get("n", 0)
            if not isinstance(value, int | float) or not isinstance(n, int):
                continue
            # 1e-9: 0.29 * 100 is 28.999999999999996, whose floor would lose a hundredth.
            floor = max(0.0, math.floor((value - margin) * step + 1e-9) / step)
            out.append(Suggested(metric, qtype, floor, float(value), n))
    return out


def _key(name: str) -> str:
    """A TOML key: bare when it can be (``faithfulness``), quoted otherwise (``"recall@5"``)."""
    if name and all(c.isascii() and (c.isalnum() or c in "_-") for c in name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bars_toml(suggested: Sequence[Suggested], source: str, margins: str) -> str:
    """The ``[bars]`` table to paste into judge.toml: one sub-table per metric, each floor
    with the value it came from as a comment."""
    lines = [
        f"# Per-type bars (judge bars suggest): today's values in {source}",
        f"# minus {margins}. A run below a floor fails (judge run --bars, judge",
        "# nightly, pytest --judge-config); raise the floors as the results improve.",
        "[bars]",
    ]
    metrics = list(dict.fromkeys(s.metric for s in suggested))
    for metric in metrics:
        lines.extend(["", f"[bars.{_key(metric)}]"])
        for s in suggested:
            if s.metric == metric:
                n = f"{s.n} question" + ("" if s.n == 1 else "s")
                lines.append(
                    f"{_key(s.type)} = {s.floor:.{FLOOR_DECIMALS}f}  # today {s.value:.3f} ({n})"
                )
    return "\n".join(lines) + "\n"
