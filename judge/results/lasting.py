"""Answers below the baseline (or the season) since a date: a small fall that stays, shown.

A fall too small to fail a night (three answers of 24 a point lower) is still a fall, and a
user who asks "since when is q02 wrong?" must find the answer in the night's output. So every
night lists, per question and metric, the answers that are below their reference tonight and
were on the nights before, back to the first night of the stretch:

- **reference**: the pinned baseline's value when there is one (``against`` "baseline"), else
  the question's median over the earlier compatible runs before the stretch (``against``
  "season": a fall that stays is not taken into its own reference);
- **listed**: below the reference tonight and on the compatible run before (at least
  ``MIN_NIGHTS`` runs in a row: one night below is what verdict noise does);
- **since**: the date of the first run of the stretch, with the values then (the reference)
  and now.

A question stays listed until it is back at its reference or the baseline is re-pinned
(against the season: while the runs before its stretch are in the window read, the latest
``WINDOW + RECENT - 1``). Whether the fall fails the night stays the gate's decision
(``judge.results.season``); this list never fails anything. Metrics: the judge's scores
(``judge.axes.SCORE_METRICS``) and retrieval's hit at the largest k (the relevant chunk gone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from judge.axes import SCORE_METRICS
from judge.results.compare import FIRST_IDS, Change, QuestionValues, Section
from judge.results.history import HistoryEntry
from judge.results.paired import EPS

# numpy is imported by the functions that compute with it (rendering a record needs none).
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    _Floats = npt.NDArray[np.float64]

#: Runs in a row below the reference before a question is listed.
MIN_NIGHTS = 2


class NightValues(NamedTuple):
    """One compatible run: its date (``YYYY-MM-DD``) and values."""

    date: str
    values: QuestionValues


class Lasting(NamedTuple):
    """One answer below its reference since ``since``."""

    question_id: str
    section: str
    metric: str
    since: str
    then: float
    """The reference: the pinned baseline's value, or the season's median."""
    now: float
    nights: int
    """Compatible runs in a row below, tonight included."""
    against: str
    """``baseline`` or ``season``."""

    def describe(self) -> str:
        """e.g. ``q02 judge faithfulness 2→1 since 2026-12-01 (4 runs, against the baseline)``."""
        return (
            f"{self.question_id} {self.section} {self.metric} {_value(self.then)}→"
            f"{_value(self.now)} since {self.since} ({self.nights} runs, against the "
            f"{self.against})"
        )


def _value(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}"


def _metrics(values: QuestionValues) -> list[tuple[Section, str]]:
    """The metrics a stretch is followed on: the judge's scores, retrieval's hit at the
    largest k."""
    judge = [("judge", m) for m in values.values.get("judge", {}) if m in SCORE_METRICS]
    hits = [m for m in values.values.get("retrieval", {}) if m.startswith("hit@")]
    largest = max(hits, key=lambda m: int(m.partition("@")[2] or 0), default=None)
    return [*judge, *([("retrieval", largest)] if largest else [])]  # type: ignore[list-item]


def _stretches(matrix: _Floats, fixed: _Floats) -> tuple[_Floats, _Floats]:
    """Per column of ``matrix`` (rows: runs, oldest first, tonight last; NaN: no value): the
    longest run of rows up to tonight below the reference, and that reference. ``fixed``: the
    pinned value (NaN where there is none: then the median of the runs before the stretch, at
    least MIN_NIGHTS of them, so that a fall that stays is not taken into its own reference)."""
    import numpy as np

    rows, cols = matrix.shape
    length = np.zeros(cols)
    reference = np.full(cols, np.nan)
    pinned = ~np.isnan(fixed)
    with np.errstate(invalid="ignore"):
        for k in range(MIN_NIGHTS, rows + 1):
            before = matrix[: rows - k]
            valued = np.count_nonzero(~np.isnan(before), axis=0) >= MIN_NIGHTS
            median = np.full(cols, np.nan)
            if valued.any():
                median[valued] = _nanmedian(before[:, valued])
            ref = np.where(pinned, fixed, median)
            below = np.all(matrix[rows - k :] < ref - EPS, axis=0)
            length = np.where(below, k, length)
            reference = np.where(below, ref, reference)
    return length, reference


def _nanmedian(matrix: _Floats) -> _Floats:
    """``np.nanmedian(matrix, axis=0)`` for columns with at least one value, by one sort (NaN
    sorts last): the middle value, or the mean of the two middle values, of each column's
    values. numpy's own goes through masked arrays for a short axis, which took most of a
    10,000-question night with a season of twenty runs."""
    import numpy as np

    ordered = np.sort(matrix, axis=0)
    n = np.count_nonzero(~np.isnan(matrix), axis=0)
    cols = np.arange(matrix.shape[1])
    low, high = ordered[(n - 1) // 2, cols], ordered[n // 2, cols]
    return np.asarray((low + high) / 2, dtype=float)


def lasting_falls(nights: Sequence[NightValues], pinned: QuestionValues | None) -> list[Lasting]:
    """The answers below their reference on the last ``MIN_NIGHTS`` or more of ``nights``
    (compatible runs, oldest first, tonight last), per question and metric, in tonight's order.
    ``pinned``: the baseline's values (the reference where it has one)."""
    import numpy as np

    if len(nights) < MIN_NIGHTS:
        return []
    tonight = nights[-1].values
    out: list[Lasting] = []
    nan = float("nan")
    for section, metric in _metrics(tonight):
        series = [n.values.values.get(section, {}).get(metric, {}) for n in nights]
        base = pinned.values.get(section, {}).get(metric, {}) if pinned is not None else {}
        ids = list(series[-1])
        gaps = [nan] * len(ids)  # run.get(q, nan) for each q, by map: in C
        matrix = np.asarray([list(map(run.get, ids, gaps)) for run in series], dtype=float)
        fixed = np.asarray(list(map(base.get, ids, gaps)), dtype=float)
        length, reference = _stretches(matrix, fixed)
        for i, qid in enumerate(ids):
            run = int(length[i])
            if run >= MIN_NIGHTS:
                against = "baseline" if qid in base else "season"
                since = nights[len(nights) - run].date
                then, now = float(reference[i]), float(matrix[-1, i])
                out.append(Lasting(qid, section, metric, since, then, now, run, against))
    return out


def lasting_text(lasting: Sequence[Lasting]) -> str | None:
    """The first line's count, e.g. ``3 answers below the baseline since 2026-12-01: q02, q10,
    q13`` (each answer once, the earliest date; "the baseline or the season" when both), or
    None when nothing is listed."""
    if not lasting:
        return None
    ids = list(dict.fromkeys(x.question_id for x in lasting))
    against = " or the ".join(dict.fromkeys(x.against for x in lasting))
    since = min(x.since for x in lasting)
    shown = ", ".join(ids[:FIRST_IDS]) + (
        f" and {len(ids) - FIRST_IDS} more" if len(ids) > FIRST_IDS else ""
    )
    answers = "answer" if len(ids) == 1 else "answers"
    return f"{len(ids)} {answers} below the {against} since {since}: {shown}"


def lasting_nights(
    entry: HistoryEntry,
    history: Sequence[HistoryEntry],
    current: QuestionValues,
    earlier_values: Callable[[str], QuestionValues | None],
    window: int,
) -> list[NightValues]:
    """Tonight and the latest ``window`` earlier runs of the same golden set judged the same
    way (the judge's fingerprint), oldest first, with their dates; a run whose folder is gone
    is left out, and runs of the same content are read once (the same answers and judge: the
    same values)."""
    runs = [
        e
        for e in history
        if e.folder != entry.folder
        and e.golden_hash == entry.golden_hash
        and e.judge_fingerprint == entry.judge_fingerprint
    ][-window:]
    read: dict[str, QuestionValues | None] = {}
    nights = []
    for e in runs:
        if e.run_hash not in read:
            read[e.run_hash] = earlier_values(e.folder)
        values = read[e.run_hash]
        if values is not None:
            nights.append(NightValues(e.started_at[:10], values))
    return [*nights, NightValues(entry.started_at[:10], current)]


def ended_notes(
    previous: tuple[Sequence[Change], Sequence[Lasting]] | None,
    since: str,
    regressions: Sequence[Change],
    lasting: Sequence[Lasting],
) -> list[str]:
    """What the run before had and tonight has not: its regressions (``the fall of 2026-12-03
    ended: judge factual faithfulness, … no longer below``) and its listed answers (``q02, q10
    back at their reference: the fall ended``). ``previous``: the run before's gate's regressions
    and listed answers; ``since``: its date."""
    if previous is None:
        return []
    fell, listed_before = previous
    now = {(c.section, c.type, c.metric) for c in regressions}
    before = dict.fromkeys((c.section, c.type, c.metric) for c in fell)
    gone = [k for k in before if k not in now]
    notes = []
    if gone:
        cells = ", ".join(" ".join(k) for k in gone[:FIRST_IDS])
        more = f" and {len(gone) - FIRST_IDS} more" if len(gone) > FIRST_IDS else ""
        notes.append(f"the fall of {since} ended: {cells}{more} no longer below")
    listed = {x.question_id for x in lasting}
    back = list(dict.fromkeys(x.question_id for x in listed_before if x.question_id not in listed))
    if back:
        ids = ", ".join(back[:FIRST_IDS]) + (
            f" and {len(back) - FIRST_IDS} more" if len(back) > FIRST_IDS else ""
        )
        notes.append(
            f"{ids} back at {'its' if len(back) == 1 else 'their'} reference: the fall ended"
        )
    return notes
