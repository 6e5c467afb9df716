"""The season as data for a picture: per night, per type and metric, the value with its
interval, the gate's decision, and what changed under the numbers since the night before.

One ``SeasonView`` feeds both views of the season, ``reports/history.html``
(``judge.report.history_page``) and ``judge history`` in the terminal
(``judge.report.history_text``), so the two always show the same decisions and changes.

Each night is read from what its report folder keeps: its history line (hashes, judge parts,
the RAG system's settings), its ``manifest.json`` (the judge's prompt file, model and digest,
``context_k``, the harness version), its ``values.json`` (the values question by question: the
means and intervals drawn, and the golden questions added or retired) and its gate marks
(``NightMarks``: the decisions and the questions that moved, with their diagnosis). Never a
whole record: a year of nights on 10,000 questions must draw in seconds.

Decisions per (section, type, metric), the strongest of the night's gate:

- ``collapsed``  a collapse (a share of the type's questions fell together);
- ``regressed``  a paired regression against the last compatible run or the pinned baseline;
- ``season``     a fall that stays, called over the season (``judge.results.season``);
- ``listed``     a move beyond the margin not shown to be more than noise (never failed);
- ``ok``         none of these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.axes import SCORE_METRICS
from judge.grouped import ALL
from judge.results.compare import SEASON, Change, QuestionValues, SectionComparison
from judge.results.history import HistoryEntry, settings_changes
from judge.results.manifest import Manifest

NIGHT_MARKS_FORMAT = 1

Decision = Literal["collapsed", "regressed", "season", "listed", "ok"]
#: Strongest first: a night's decision for a cell is the first of these its gate made.
DECISIONS: tuple[Decision, ...] = ("collapsed", "regressed", "season", "listed", "ok")
#: What each decision is called on the page and in the terminal (text, never colour alone).
DECISION_TEXT: dict[Decision, str] = {
    "collapsed": "collapse",
    "regressed": "regressed",
    "season": "fell over the season",
    "listed": "listed",
    "ok": "ok",
}
#: One character per decision, for the terminal's compact line and the page's point labels.
DECISION_MARK: dict[Decision, str] = {
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
#: The judge metrics charted, in order; retrieval metrics are those at ``context_k``.
CHARTED_JUDGE = ("faithfulness", "relevance", "correctness", "ok_share")
CHARTED_RETRIEVAL = ("recall", "ndcg", "hit")
#: Questions that moved kept per cell and night (the largest moves first).
MOVED_KEPT = 20
#: z of a two-sided 95 % normal interval.
Z95 = 1.959964


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
    decision: Decision
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


def _mark(change: Change, decision: Decision, diagnosis: Mapping[str, str]) -> NightMark:
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


def _decision(change: Change, season: bool) -> Decision:
    if change.direction == "collapsed":
        return "collapsed"
    if change.direction == "regressed":
        return "season" if season else "regressed"
    if change.direction == "listed":
        return "listed"
    return "ok"


class NightInput(NamedTuple):
    """What one night's folder keeps that the season's views read (None: not readable)."""

    entry: HistoryEntry
    manifest: Manifest | None
    values: QuestionValues | None
    marks: NightMarks | None


class Point(NamedTuple):
    """One night's value of a cell: the mean with its 95 % interval over ``n`` questions."""

    mean: float
    low: float
    high: float
    n: int


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
    decisions: list[Decision]
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


def point(values: Sequence[float], top: float = 1.0) -> Point | None:
    """The mean of ``values`` (each in 0..``top``) with its 95 % interval (None: no values):
    Wilson's for values that are all 0 or ``top`` (a share of full marks: honest at the ends,
    where a normal interval shrinks to nothing), else the normal interval of the mean cut to
    0..``top``."""
    n = len(values)
    if n == 0:
        return None
    mean = math.fsum(values) / n
    if all(v in (0.0, top) for v in values):
        share = mean / top
        z2 = Z95 * Z95
        centre = (share + z2 / (2 * n)) / (1 + z2 / n)
        half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
        # The bounds hold the mean exactly (at 0 or 1 rounding would leave it just outside).
        low, high = top * max(0.0, centre - half), top * min(1.0, centre + half)
        return Point(mean, min(low, mean), max(high, mean), n)
    if n == 1:
        return Point(mean, mean, mean, 1)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = Z95 * math.sqrt(var / n)
    return Point(mean, max(0.0, mean - half), min(top, mean + half), n)


def charted_metrics(values: QuestionValues, context_k: int) -> list[str]:
    """The metrics a night's values chart: retrieval at ``context_k`` (and MRR), then the
    judge's, as ``section:metric``."""
    retrieval = values.values.get("retrieval", {})
    wanted = [f"{m}@{context_k}" for m in CHARTED_RETRIEVAL] + ["mrr"]
    charted = [f"retrieval:{m}" for m in wanted if m in retrieval]
    judge = values.values.get("judge", {})
    return charted + [f"judge:{m}" for m in CHARTED_JUDGE if m in judge]


def type_points(values: QuestionValues, metric: str) -> dict[str, Point | None]:
    """Per type (and ``all``) the point of one ``section:metric`` of a night."""
    section, _, name = metric.partition(":")
    per_question = values.values.get(section, {}).get(name, {})  # type: ignore[call-overload]
    grouped: dict[str, list[float]] = {ALL: []}
    for qid, value in per_question.items():
        grouped[ALL].append(value)
        grouped.setdefault(values.types.get(qid, "?"), []).append(value)
    top = 2.0 if name in SCORE_METRICS else 1.0
    return {t: point(v, top) for t, v in grouped.items()}


def build_season(
    nights: Sequence[NightInput], baseline: QuestionValues | None = None
) -> SeasonView:
    """The season of ``nights`` (oldest first): each cell's points, decisions and moved
    questions, the pinned ``baseline``'s means, and what changed from night to night."""
    metrics: list[str] = []
    types: list[str] = [ALL]
    per_night: list[dict[str, dict[str, Point | None]]] = []
    for night in nights:
        charted: dict[str, dict[str, Point | None]] = {}
        if night.values is not None:
            for metric in charted_metrics(night.values, _context_k(night)):
                charted[metric] = type_points(night.values, metric)
                metrics.extend(m for m in (metric,) if m not in metrics)
                types.extend(t for t in charted[metric] if t not in types)
        per_night.append(charted)
    series = {(t, m): _series(t, m, nights, per_night, baseline) for t in types for m in metrics}
    return SeasonView(
        nights=[
            Night(n.entry.folder, n.entry.started_at, n.marks.verdict if n.marks else "")
            for n in nights
        ],
        types=types,
        metrics=metrics,
        series=series,
        changes=season_changes(nights),
    )


def _context_k(night: NightInput) -> int:
    return 5 if night.manifest is None else night.manifest.config.retrieval.context_k


def _series(
    type_name: str,
    metric: str,
    nights: Sequence[NightInput],
    per_night: Sequence[Mapping[str, Mapping[str, Point | None]]],
    baseline: QuestionValues | None,
) -> Series:
    section, _, name = metric.partition(":")
    decisions: list[Decision] = []
    moved: dict[int, tuple[MovedQuestion, ...]] = {}
    for index, night in enumerate(nights):
        mark = _cell_mark(night.marks, section, type_name, name)
        decisions.append("ok" if mark is None else mark.decision)
        if mark is not None and mark.moved:
            moved[index] = mark.moved
    pinned = None
    if baseline is not None:
        pinned_point = type_points(baseline, metric).get(type_name)
        pinned = None if pinned_point is None else pinned_point.mean
    return Series(
        type=type_name,
        metric=metric,
        points=[charted.get(metric, {}).get(type_name) for charted in per_night],
        decisions=decisions,
        baseline=pinned,
        moved=moved,
    )


def _cell_mark(
    marks: NightMarks | None, section: str, type_name: str, metric: str
) -> NightMark | None:
    if marks is None:
        return None
    for mark in marks.marks:
        if mark.section == section and mark.type == type_name and mark.metric == metric:
            return mark
    return None


def season_changes(nights: Sequence[NightInput]) -> list[SettingChange]:
    """What changed under the numbers, night by night against the night before: the judge, the
    golden set, the corpus, the index (embedder, by name, version, dimension or canaries), the
    run's other settings and ``context_k``, the harness version."""
    changes: list[SettingChange] = []
    for index in range(1, len(nights)):
        before, after = nights[index - 1], nights[index]
        for kind, text in night_changes(before, after):
            changes.append(SettingChange(index, kind, text))
    return changes


def _short(value: object) -> str:
    text = "not stated" if value is None else str(value)
    return text[:12] if len(text) > 16 and " " not in text else text


def night_changes(before: NightInput, after: NightInput) -> list[tuple[ChangeKind, str]]:
    """The changes between two consecutive nights, each as (kind, one line)."""
    out: list[tuple[ChangeKind, str]] = []
    out.extend(("judge", text) for text in _judge_changes(before, after))
    if before.entry.golden_hash != after.entry.golden_hash:
        out.append(("golden", _golden_change(before.values, after.values)))
    if before.entry.corpus_hash != after.entry.corpus_hash:
        out.append(("corpus", "the corpus changed (its content hash differs)"))
    for text in settings_changes(before.entry.settings, after.entry.settings):
        index = text.startswith(tuple(f"the {s}" for s in INDEX_SETTINGS))
        out.append(("index" if index else "settings", text))
    if before.manifest is not None and after.manifest is not None:
        k0 = before.manifest.config.retrieval.context_k
        k1 = after.manifest.config.retrieval.context_k
        if k0 != k1:
            out.append(("settings", f"context_k ({k0} → {k1})"))
        v0, v1 = before.manifest.versions.get("judge"), after.manifest.versions.get("judge")
        if v0 != v1:
            out.append(("harness", f"the harness version ({_short(v0)} → {_short(v1)})"))
    return out


def _judge_changes(before: NightInput, after: NightInput) -> list[str]:
    """The judge's prompt, model, digest or backend, from the manifests (else the history
    lines' judge parts)."""
    if before.manifest is not None and after.manifest is not None:
        a, b = before.manifest.judge, after.manifest.judge
        pairs = {
            "backend": (a.backend, b.backend),
            "model": (a.model, b.model),
            "digest": (a.digest, b.digest),
            "prompt": (a.prompt_sha256, b.prompt_sha256),
        }
    else:
        pa, pb = before.entry.judge_parts, after.entry.judge_parts
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


def _golden_change(before: QuestionValues | None, after: QuestionValues | None) -> str:
    if before is None or after is None:
        return "the golden set changed"
    added = len(after.types.keys() - before.types.keys())
    retired = len(before.types.keys() - after.types.keys())
    if not added and not retired:
        return "the golden set changed (same questions: labels or texts edited)"
    return f"the golden set changed ({added} question(s) added, {retired} retired)"
