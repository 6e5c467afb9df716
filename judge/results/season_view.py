"""The season as data for a picture: per night, per type and metric, the value with its
interval, the gate's decision, and what changed under the numbers since the night before.

One ``SeasonView`` feeds both views of the season, ``reports/history.html``
(``judge.report.history_page``) and ``judge history`` in the terminal
(``judge.report.history_text``), so the two always show the same decisions and changes.

Each night is read from what its report folder keeps: its history line (hashes, judge parts,
the RAG system's settings) and its ``marks.json`` (``NightMarks``): the gate's decisions with
the questions that moved and their diagnosis, and the night's summary
(``judge.results.night_summary``: per type and metric the mean with its interval and n, the
judge, ``context_k`` and harness version of its manifest, its golden questions' count and
digest). A folder written before summaries were kept is summarised from its ``manifest.json``
and ``values.json`` by the same function. Never a whole record, and per night one small file:
a year of nights on 10,000 questions must draw in seconds.

Decisions per (section, type, metric), the strongest of the night's gate:

- ``collapsed``  a collapse (a share of the type's questions fell together);
- ``regressed``  a paired regression against the last compatible run or the pinned baseline;
- ``season``     a fall that stays, called over the season (``judge.results.season``);
- ``listed``     a move beyond the margin not shown to be more than noise (never failed);
- ``ok``         none of these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.grouped import ALL
from judge.results.compare import SEASON, Change, QuestionValues, SectionComparison
from judge.results.history import HistoryEntry, settings_changes
from judge.results.manifest import Manifest
from judge.results.night_summary import NightSummary, Point, summarise_night, type_points

#: ``marks.json``'s format: 2 added the night's summary (``night``); a file of format 1 is read
#: without it.
NIGHT_MARKS_FORMAT = 2

NightDecision = Literal["collapsed", "regressed", "season", "listed", "ok"]
#: Strongest first: a night's decision for a cell is the first of these its gate made.
DECISIONS: tuple[NightDecision, ...] = ("collapsed", "regressed", "season", "listed", "ok")
#: What each decision is called on the page and in the terminal (text, never colour alone).
DECISION_TEXT: dict[NightDecision, str] = {
    "collapsed": "collapse",
    "regressed": "regressed",
    "season": "fell over the season",
    "listed": "listed",
    "ok": "ok",
}
#: One character per decision, for the terminal's compact line and the page's point labels.
DECISION_MARK: dict[NightDecision, str] = {
    "collapsed": "X",
    "regressed": "v",
    "season": "S",
    "listed": "?",
    "ok": ".",
}

ChangeKind = Literal["judge", "golden", "corpus", "index", "settings", "harness"]
#: One letter per kind of change, drawn on the x-axis and printed in the terminal.
CHANGE_MARK: dict[ChangeKind, str] = {
    "judge": "J",
    "golden": "G",
    "corpus": "C",
    "index": "E",
    "settings": "R",
    "harness": "H",
}
#: The settings whose change is the index's (the embedder): marked ``index``, the rest
#: ``settings``.
INDEX_SETTINGS = ("embedding model", "embedding version", "embedding dimension", "embedding canary")
#: Questions that moved kept per cell and night (the largest moves first).
MOVED_KEPT = 20


class MovedQuestion(BaseModel):
    """One question whose value moved in a night's gate comparison, with its diagnosis."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    old: float
    new: float
    diagnosis: str


class NightMark(BaseModel):
    """The gate's decision on one (section, type, metric) of a night, with its change."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    section: str
    type: str
    metric: str
    decision: NightDecision
    delta: float
    low: float
    high: float
    n: int
    moved: tuple[MovedQuestion, ...] = ()


class NightMarks(BaseModel):
    """``marks.json`` of a report folder: its gate's decisions, read by the season's views
    without the whole record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: int = NIGHT_MARKS_FORMAT
    verdict: str
    marks: tuple[NightMark, ...] = ()
    night: NightSummary | None = None
    """The night's values per type and metric and the settings its changes are computed from
    (``judge.results.night_summary``); None in a folder written before it was kept."""


def _mark(change: Change, decision: NightDecision, diagnosis: Mapping[str, str]) -> NightMark:
    moved = tuple(
        MovedQuestion(
            id=m.question_id, old=m.old, new=m.new, diagnosis=diagnosis.get(m.question_id, "")
        )
        for m in change.moved[:MOVED_KEPT]
    )
    return NightMark(
        section=change.section,
        type=change.type,
        metric=change.metric,
        decision=decision,
        delta=change.delta,
        low=change.low,
        high=change.high,
        n=change.n,
        moved=moved,
    )


def night_marks(
    verdict: str,
    comparisons: Iterable[SectionComparison],
    diagnosis: Mapping[str, str],
) -> NightMarks:
    """A night's marks from its comparisons (last run, baseline, season), the strongest
    decision per (section, type, metric); ``diagnosis``: question id → its diagnosis."""
    best: dict[tuple[str, str, str], NightMark] = {}
    for comp in comparisons:
        for change in comp.changes:
            decision = _decision(change, comp.baseline == SEASON)
            if decision == "ok":
                continue
            key = (change.section, change.type, change.metric)
            held = best.get(key)
            if held is None or DECISIONS.index(decision) < DECISIONS.index(held.decision):
                best[key] = _mark(change, decision, diagnosis)
    return NightMarks(verdict=verdict, marks=tuple(best.values()))


def _decision(change: Change, season: bool) -> NightDecision:
    if change.direction == "collapsed":
        return "collapsed"
    if change.direction == "regressed":
        return "season" if season else "regressed"
    if change.direction == "listed":
        return "listed"
    return "ok"


class NightInput(NamedTuple):
    """What one night's folder keeps that the season's views read (None: not readable).

    ``summary`` is the night's own (its ``marks.json``); without it the night is summarised
    from ``manifest`` and ``values`` (a folder written before summaries were kept). ``values``
    is also what the golden set's change is counted from when both nights have them."""

    entry: HistoryEntry
    manifest: Manifest | None
    values: QuestionValues | None
    marks: NightMarks | None
    summary: NightSummary | None = None


def night_summary(night: NightInput) -> NightSummary | None:
    """The night's summary: its own, else made from its manifest and values (None: neither
    values nor summary, a night drawn without points)."""
    if night.summary is not None:
        return night.summary
    if night.values is None:
        return None
    return summarise_night(night.manifest, night.values)


class Night(NamedTuple):
    folder: str
    started_at: str
    verdict: str


class SettingChange(NamedTuple):
    """Something that changed under the numbers on a night, against the night before."""

    night: int
    kind: ChangeKind
    text: str


class Series(NamedTuple):
    """One (type, metric) over the season."""

    type: str
    metric: str
    """``retrieval:recall@5``, ``judge:faithfulness``: section and metric."""
    points: list[Point | None]
    decisions: list[NightDecision]
    baseline: float | None
    """The pinned baseline's mean for this cell (None: no baseline, or not this metric)."""
    moved: dict[int, tuple[MovedQuestion, ...]]
    """Night → the questions that moved that night (only nights with a decision)."""


class SeasonView(NamedTuple):
    nights: list[Night]
    types: list[str]
    """``all`` first, then the types in the order the nights first show them."""
    metrics: list[str]
    series: dict[tuple[str, str], Series]
    """(type, metric) → its series."""
    changes: list[SettingChange]


def build_season(
    nights: Sequence[NightInput], baseline: QuestionValues | None = None
) -> SeasonView:
    """The season of ``nights`` (oldest first): each cell's points, decisions and moved
    questions, the pinned ``baseline``'s means, and what changed from night to night. Each
    night is drawn from its summary (``night_summary``): the same picture whether the night
    kept one or is summarised from its values here."""
    summaries = [night_summary(night) for night in nights]
    metrics: list[str] = []
    types: list[str] = [ALL]
    per_night: list[dict[str, dict[str, Point | None]]] = []
    for summary in summaries:
        charted = {} if summary is None else summary.points
        for metric, points in charted.items():
            metrics.extend(m for m in (metric,) if m not in metrics)
            types.extend(t for t in points if t not in types)
        per_night.append(charted)
    marked = [_marks_by_cell(night.marks) for night in nights]
    pinned = {m: type_points(baseline, m) for m in metrics} if baseline is not None else {}
    series = {
        (t, m): _series(t, m, marked, per_night, pinned.get(m, {})) for t in types for m in metrics
    }
    return SeasonView(
        nights=[
            Night(n.entry.folder, n.entry.started_at, n.marks.verdict if n.marks else "")
            for n in nights
        ],
        types=types,
        metrics=metrics,
        series=series,
        changes=_season_changes(nights, summaries),
    )


CellKey = tuple[str, str, str]
"""(section, type, metric) of a gate mark."""


def _series(
    type_name: str,
    metric: str,
    marked: Sequence[Mapping[CellKey, NightMark]],
    per_night: Sequence[Mapping[str, Mapping[str, Point | None]]],
    pinned: Mapping[str, Point | None],
) -> Series:
    section, _, name = metric.partition(":")
    key = (section, type_name, name)
    found = [cells.get(key) for cells in marked]
    decisions: list[NightDecision] = ["ok" if mark is None else mark.decision for mark in found]
    moved = {i: mark.moved for i, mark in enumerate(found) if mark is not None and mark.moved}
    pinned_point = pinned.get(type_name)
    empty: Mapping[str, Point | None] = {}
    return Series(
        type=type_name,
        metric=metric,
        points=[charted.get(metric, empty).get(type_name) for charted in per_night],
        decisions=decisions,
        baseline=None if pinned_point is None else pinned_point.mean,
        moved=moved,
    )


def _marks_by_cell(marks: NightMarks | None) -> dict[CellKey, NightMark]:
    """A night's marks by (section, type, metric), each cell's first (``night_marks`` keeps
    one per cell)."""
    cells: dict[CellKey, NightMark] = {}
    for mark in () if marks is None else marks.marks:
        cells.setdefault((mark.section, mark.type, mark.metric), mark)
    return cells


def season_changes(nights: Sequence[NightInput]) -> list[SettingChange]:
    """What changed under the numbers, night by night against the night before: the judge, the
    golden set, the corpus, the index (embedder, by name, version, dimension or canaries), the
    run's other settings and ``context_k``, the harness version."""
    return _season_changes(nights, [night_summary(night) for night in nights])


def _season_changes(
    nights: Sequence[NightInput], summaries: Sequence[NightSummary | None]
) -> list[SettingChange]:
    changes: list[SettingChange] = []
    for index in range(1, len(nights)):
        pair = (nights[index - 1], nights[index])
        for kind, text in _night_changes(pair, (summaries[index - 1], summaries[index])):
            changes.append(SettingChange(index, kind, text))
    return changes


def _short(value: object) -> str:
    text = "not stated" if value is None else str(value)
    return text[:12] if len(text) > 16 and " " not in text else text


def night_changes(before: NightInput, after: NightInput) -> list[tuple[ChangeKind, str]]:
    """The changes between two consecutive nights, each as (kind, one line)."""
    return _night_changes((before, after), (night_summary(before), night_summary(after)))


Pair = tuple[NightInput, NightInput]
SummaryPair = tuple[NightSummary | None, NightSummary | None]


def _night_changes(nights: Pair, summaries: SummaryPair) -> list[tuple[ChangeKind, str]]:
    """``night_changes`` with the two nights' summaries made once (``build_season``)."""
    before, after = nights
    s0, s1 = summaries
    out: list[tuple[ChangeKind, str]] = []
    out.extend(("judge", text) for text in _judge_changes(nights, summaries))
    if before.entry.golden_hash != after.entry.golden_hash:
        out.append(("golden", _golden_change(nights, summaries)))
    if before.entry.corpus_hash != after.entry.corpus_hash:
        out.append(("corpus", "the corpus changed (its content hash differs)"))
    for text in settings_changes(before.entry.settings, after.entry.settings):
        index = text.startswith(tuple(f"the {s}" for s in INDEX_SETTINGS))
        out.append(("index" if index else "settings", text))
    if s0 is not None and s1 is not None and None not in (s0.context_k, s1.context_k):
        if s0.context_k != s1.context_k:
            out.append(("settings", f"context_k ({s0.context_k} → {s1.context_k})"))
        if s0.harness != s1.harness:
            text = f"the harness version ({_short(s0.harness)} → {_short(s1.harness)})"
            out.append(("harness", text))
    return out


def _judge_changes(nights: Pair, summaries: SummaryPair) -> list[str]:
    """The judge's prompt, model, digest or backend, from the nights' summaries (their
    manifests), else the history lines' judge parts."""
    a, b = (None if s is None else s.judge for s in summaries)
    if a is not None and b is not None:
        pairs = {
            "backend": (a.backend, b.backend),
            "model": (a.model, b.model),
            "digest": (a.digest, b.digest),
            "prompt": (a.prompt_sha256, b.prompt_sha256),
        }
    else:
        pa, pb = nights[0].entry.judge_parts, nights[1].entry.judge_parts
        pairs = {
            key: (pa.get(part), pb.get(part))
            for key, part in (
                ("backend", "backend"),
                ("model", "model"),
                ("digest", "digest"),
                ("prompt", "prompt_sha256"),
            )
        }
    return [
        f"the judge {what} ({_short(old)} → {_short(new)})"
        for what, (old, new) in pairs.items()
        if old != new
    ]


def golden_counts_needed(nights: Pair, summaries: SummaryPair) -> bool:
    """Whether the golden set's change between two nights needs their values to be counted:
    its hash changed, their question ids differ, and one of them has no values at hand."""
    if nights[0].entry.golden_hash == nights[1].entry.golden_hash:
        return False
    if nights[0].values is not None and nights[1].values is not None:
        return False
    s0, s1 = summaries
    return s0 is None or s1 is None or s0.golden.ids_sha256 != s1.golden.ids_sha256


def _golden_change(nights: Pair, summaries: SummaryPair) -> str:
    """The golden set's change in words: questions added and retired (counted from both
    nights' values), or the same questions edited (their ids' digests equal)."""
    before, after = (night.values for night in nights)
    if before is not None and after is not None:
        added = len(after.types.keys() - before.types.keys())
        retired = len(before.types.keys() - after.types.keys())
    elif None in summaries or golden_counts_needed(nights, summaries):
        return "the golden set changed"
    else:
        added = retired = 0
    if not added and not retired:
        return "the golden set changed (same questions: labels or texts edited)"
    return f"the golden set changed ({added} question(s) added, {retired} retired)"
