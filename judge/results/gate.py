"""The regression gate: did this run fall below the last compatible run or the pinned baseline,
and did every question get an answer and a verdict?

Each comparison is one check (what CI systems show as one test case); so is "there was
something to compare with" for each section, "answers were produced" (a golden question the
adapter failed for is a failure of the RAG system, never a smaller n) and "answers were judged"
(an answer the judge gave no verdict for: parse_error, backend_error, truncated). A comparison
fails only on a paired regression (``judge.results.paired``): a change in a type too small to
call is listed, never failed. Whether a failed check fails the command is the caller's choice
(``--fail-on-regression``, ``--require-baseline``; the nightly sets both).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from typing import NamedTuple

from judge.axes import JUDGE_VALUES, present_axes
from judge.errors import EXIT_OK, EXIT_REGRESSION
from judge.grouped import ALL
from judge.results.bars import BarResult
from judge.results.compare import (
    COLLAPSE_SHARE,
    FIRST_IDS,
    SEASON,
    SECTIONS,
    Change,
    GateRule,
    Section,
    SectionComparison,
)
from judge.results.lasting import Lasting, lasting_text
from judge.results.season import MIN_REFERENCE, RECENT, WINDOW


class GateCheck(NamedTuple):
    name: str
    """e.g. "retrieval vs last compatible run", "judge vs baseline",
    "judge has something to compare with", "answers were judged"."""
    passed: bool
    message: str
    kind: str
    """"regression" or "baseline": which flag makes a failure fail the command; "bar": a
    per-type bar, which always does (the run checks bars only when asked)."""
    moves: tuple[Change, ...] = ()
    """The comparison's changes that are not noise (collapses, regressions, improvements,
    listed moves), with their numbers: what JUnit and the JSON summary carry per check."""


def _distinct(changes: Sequence[Change]) -> list[Change]:
    """One change per (section, type, metric): the same fall against the last run and the
    baseline is one fall."""
    seen: dict[tuple[str, str, str], Change] = {}
    for c in changes:
        seen.setdefault((c.section, c.type, c.metric), c)
    return list(seen.values())


class Gate(NamedTuple):
    checks: list[GateCheck]
    regressions: list[Change]
    missing: list[Section]
    """Sections with nothing compatible to compare with."""
    failed: tuple[str, ...] = ()
    """The golden questions the adapter gave no answer for, in golden-set order."""
    total: int = 0
    """How many golden questions there are."""
    unjudged: tuple[str, ...] = ()
    """The answers the judge gave no verdict for (status not ok), in golden-set order."""
    judged: int = 0
    """How many answers were given to the judge."""
    listed: tuple[Change, ...] = ()
    """Moves beyond the margin not shown to be more than noise: reported, never failed."""
    notes: tuple[str, ...] = ()
    """What a reader of the verdict must know beside it, e.g. that the embedding version changed
    since the run compared with (``judge.results.history.compared_settings_note``)."""
    lasting: tuple[Lasting, ...] = ()
    """Answers below the baseline (or the season) for two runs or more, with the date they
    fell (``judge.results.lasting``): always shown, never failed by themselves."""

    @property
    def bar_checks(self) -> list[GateCheck]:
        """The per-type bars the run checked (``bar_checks``; none unless it was asked to)."""
        return [check for check in self.checks if check.kind == "bar"]

    @property
    def crossed_bars(self) -> list[GateCheck]:
        return [check for check in self.bar_checks if not check.passed]

    @property
    def verdict(self) -> str:
        """One line: the first line of the nightly's output. A crossed bar comes first, then
        questions without an answer or a verdict; when every question failed, the comparisons
        (of nothing) are left out; the notes last."""
        notes = "".join(f"; {note}" for note in self.notes)
        verdict = self._verdict() + notes
        crossed = self.crossed_bars
        if crossed:
            more = f" (and {len(crossed) - 1} more)" if len(crossed) > 1 else ""
            return f"FAILED: {crossed[0].message}{more}; {verdict}"
        return verdict

    def _verdict(self) -> str:
        compared = self._compared()
        problems = []
        if self.failed:
            problems.append(failed_answers(self.failed, self.total))
        if self.unjudged:
            problems.append(unjudged_answers(self.unjudged, self.judged))
        if not problems:
            return compared
        head = "FAILED: " + "; ".join(problems)
        if len(self.failed) < self.total and self.regressions:
            return f"{head}; {compared}"
        return head

    def _compared(self) -> str:
        below = lasting_text(self.lasting)
        told = self._told()
        if below is None:
            return told
        if told.startswith("ok: no regression"):
            return "ok; " + below + told.removeprefix("ok: no regression")
        return f"{told}; {below}"

    def _told(self) -> str:
        if self.regressions:
            fell = _distinct(self.regressions)
            collapsed = [c for c in fell if c.direction == "collapsed"]
            if collapsed:
                # The types first (a pooled collapse is "over all questions"), and the first
                # type's collapse as the example.
                typed = [c for c in collapsed if c.type != ALL]
                where = [f"in {', '.join(dict.fromkeys(c.type for c in typed))}"] if typed else []
                if len(typed) < len(collapsed):
                    where.append("over all questions")
                shown = (typed or collapsed)[0]
                rest = len(fell) - 1
                more = f" (and {rest} more)" if rest else ""
                return f"REGRESSED: collapsed {' and '.join(where)}: {shown.headline()}{more}"
            more = f" (and {len(fell) - 1} more)" if len(fell) > 1 else ""
            return f"REGRESSED: {fell[0].headline()}{more}"
        if self.missing:
            return (
                f"no compatible earlier run or baseline for {' and '.join(self.missing)}: "
                "nothing compared"
            )
        listed = _distinct(self.listed)
        if listed:
            more = f" (and {len(listed) - 1} more)" if len(listed) > 1 else ""
            return (
                f"ok: no regression; listed, {listed[0].listed_why()}: {listed[0].headline()}{more}"
            )
        return "ok: no regression"

    def exit_code(self, fail_on_regression: bool, require_baseline: bool) -> int:
        """1 when a check that the flags enforce failed (as the JUnit file reports it); a
        crossed bar always fails."""
        failed = (
            (fail_on_regression and (self.regressions or self.failed or self.unjudged))
            or (require_baseline and self.missing)
            or self.crossed_bars
        )
        return EXIT_REGRESSION if failed else EXIT_OK


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids[:FIRST_IDS]) + (", …" if len(ids) > FIRST_IDS else "")


def failed_answers(failed: Sequence[str], total: int) -> str:
    """e.g. "the adapter failed for 2 of 30 questions (q07, q12)"; past FIRST_IDS ids, "…"."""
    return f"the adapter failed for {len(failed)} of {total} questions ({_ids(failed)})"


def unjudged_answers(unjudged: Sequence[str], judged: int) -> str:
    """e.g. "the judge gave no verdict for 2 of 30 answers (q07, q12)"; past FIRST_IDS ids, "…"."""
    return f"the judge gave no verdict for {len(unjudged)} of {judged} answers ({_ids(unjudged)})"


def _comparison_check(comp: SectionComparison) -> GateCheck:
    # Stable names (CI systems follow a test case by its name from night to night); the
    # folder compared with goes into the message.
    pinned = comp.baseline == "baseline"
    season = comp.baseline == SEASON
    against = (
        "the pinned baseline"
        if pinned
        else f"the season ({comp.note})"
        if season
        else f"{comp.baseline}"
    )
    regressions = comp.regressions
    if regressions:
        message = f"against {against}: " + "; ".join(c.describe() for c in regressions)
    else:
        message = f"against {against}: compared question by question, {comp.counts_text()}"
    if comp.listed:
        message += "; listed: " + "; ".join(c.describe() for c in comp.listed)
    what = "baseline" if pinned else "the season" if season else "last compatible run"
    name = f"{comp.section} vs {what}"
    return GateCheck(name, not regressions, message, "regression", tuple(comp.moved))


def gate(
    comparisons: list[SectionComparison],
    failed: Sequence[str] = (),
    total: int = 0,
    unjudged: Sequence[str] = (),
    judged: int = 0,
    notes: Sequence[str] = (),
    lasting: Sequence[Lasting] = (),
) -> Gate:
    """The checks of one run: were the answers produced (``failed``: the golden questions the
    adapter gave no answer for, of ``total``), were they judged (``unjudged``: the answers
    without a verdict, of ``judged``), and its comparisons (with earlier runs and the pinned
    baseline); ``lasting``: the answers below since a date (``judge.results.lasting``)."""
    total = max(total, len(failed))
    judged = max(judged, len(unjudged))
    checks = [_comparison_check(comp) for comp in comparisons if comp.baseline is not None]
    missing = [
        section
        for section in SECTIONS
        if not any(c.baseline is not None for c in comparisons if c.section == section)
    ]
    checks += _baseline_checks(comparisons, missing)
    checks += _answer_checks(failed, total, unjudged, judged)
    regressions = [c for comp in comparisons for c in comp.regressions]
    listed = tuple(c for comp in comparisons for c in comp.listed)
    return Gate(
        checks,
        regressions,
        missing,
        tuple(failed),
        total,
        tuple(unjudged),
        judged,
        listed,
        tuple(notes),
        tuple(lasting),
    )


def _baseline_checks(
    comparisons: list[SectionComparison], missing: Sequence[str]
) -> list[GateCheck]:
    """Per section, whether the run had something to compare with (``missing``: the sections
    that had not); where it had not, the comparisons' notes say why."""
    checks = []
    for section in SECTIONS:
        why = [c.note for c in comparisons if c.section == section and c.baseline is None]
        checks.append(
            GateCheck(
                f"{section} has something to compare with",
                section not in missing,
                "; ".join(why) if section in missing else "compared",
                "baseline",
            )
        )
    return checks


def _answer_checks(
    failed: Sequence[str], total: int, unjudged: Sequence[str], judged: int
) -> list[GateCheck]:
    """Whether the adapter answered every question and the judge gave every answer a verdict."""
    produced = GateCheck(
        "answers were produced",
        not failed,
        failed_answers(failed, total)
        if failed
        else f"the adapter answered all {total} questions"
        if total
        else "the adapter answered every question",
        "regression",
    )
    verdicts = GateCheck(
        "answers were judged",
        not unjudged,
        unjudged_answers(unjudged, judged)
        if unjudged
        else f"the judge gave a verdict for all {judged} answers"
        if judged
        else "the judge gave a verdict for every answer",
        "regression",
    )
    return [produced, verdicts]


class Detectable(NamedTuple):
    """What the gate can call in one question type of a golden set (``judge check`` and
    report.md say it before the first night)."""

    type: str
    questions: int
    collapse: int | None
    """Answers that must fall to the floor at once for a collapse (None: fewer than two
    questions, which only a pooled collapse or the season can see)."""
    shown: int | None
    """Questions that must fall, none rising, for one night's exact test to show a fall within
    the night's family-wise level (None: more than the type has)."""
    season: int | None
    """Questions that must lose a point two nights running, against a full window of quiet
    earlier runs, for the season to call it (None: more than the type has)."""

    def describe(self) -> str:
        """e.g. ``negative: 5 questions; tonight alone: a collapse (4 of 5 answers to the
        floor); over the season: a fall that stays, from 2 questions losing a point two nights
        running after quiet nights``."""
        parts = [f"{self.type}: {self.questions} question" + ("" if self.questions == 1 else "s")]
        tonight = (
            f"a collapse ({self.collapse} of {self.questions} answers to the floor)"
            if self.collapse is not None
            else "only a collapse of the whole set (pooled)"
        )
        if self.shown is not None:
            tonight += f" or {self.shown} questions falling with none rising"
        parts.append(f"tonight alone: {tonight}")
        if self.season is not None:
            parts.append(
                f"over the season (from {MIN_REFERENCE} earlier compatible runs): a fall that "
                f"stays, from {self.season} question"
                + ("" if self.season == 1 else "s")
                + " losing a point two nights running after quiet nights"
            )
        return "; ".join(parts)


def detectable(per_type: dict[str, int], family: int, rule: GateRule) -> list[Detectable]:
    """Per type: the smallest collapse (``judge.results.compare.collapsed``); the fewest falls
    with none rising that one night's exact test shows when ``family`` checks are made together
    (Holm's first step: the smallest p-value must be at most level / family; falls of one step
    and no rise give p = 2^-k); and the fewest questions losing a point on two nights that the
    season calls against WINDOW quiet runs (p = (2 / (2 + WINDOW))^(2k), with the season's
    family: half the night's checks, each at RECENT lengths), and beyond the score margin."""
    needed = math.ceil(math.log2(max(1, family) / rule.level) - 1e-12)
    season_family = max(1, family // 2) * RECENT
    share = 2 / (2 + WINDOW)
    over_season = math.ceil(
        math.log(rule.season_level / season_family) / (2 * math.log(share)) - 1e-12
    )
    return [
        Detectable(
            name,
            n,
            max(2, math.ceil(COLLAPSE_SHARE * n - 1e-9)) if n >= 2 else None,
            needed if needed <= n else None,
            season if season <= n else None,
        )
        for name, n in per_type.items()
        # beyond the margin too: k points over n questions must exceed margin_score
        for season in [max(over_season, math.floor(rule.margin_score * n + 1e-9) + 1)]
    ]


#: The judge's metrics a night compares per type (``judge.results.values``; ``sentences_supported``
#: only in sentences mode, left out of the count).
GATE_JUDGE_METRICS: tuple[str, ...] = tuple(m for m in JUDGE_VALUES if m != "sentences_supported")


def gate_judge_metrics(present: Collection[str] = ()) -> tuple[str, ...]:
    """The judge's metrics a night compares per type for a run whose metrics (or axes) are
    ``present``: ``GATE_JUDGE_METRICS`` and the optional axes the run has (``correctness``,
    compared and gated like relevance): the night's Holm family counts them only then."""
    return (*GATE_JUDGE_METRICS, *present_axes(present))


def night_family(
    per_type: dict[str, int], answerable: dict[str, int], metrics: int, judge_metrics: int
) -> int:
    """How many (type, metric) checks one night makes against the last run and the baseline:
    the judge's metrics for every type with questions, retrieval's for every type with
    labelled chunks."""
    judged = sum(1 for n in per_type.values() if n)
    scored = sum(1 for n in answerable.values() if n)
    return 2 * (judged * judge_metrics + scored * metrics)


def bar_checks(results: Sequence[BarResult]) -> list[GateCheck]:
    """One check per per-type bar (``judge.results.bars``), named ``bar: <type> <metric>`` so a
    CI system follows each bar from night to night; its message is the bar's line. Kind
    ``"bar"``: ``judge run --bars`` and the nightly with a ``[bars]`` table enforce them."""
    return [GateCheck(f"bar: {r.name}", r.passed, r.line(), "bar") for r in results]


#: The verdict error assumed when no audit measured it: docs/gate.md's simulations.
DEFAULT_VERDICT_ERROR = 0.10
#: 30-night seasons with a false alarm on a golden set whose smallest types hold two or three
#: questions (3/3/2/2), by verdict error, as bench/gate_sim.py measured them (docs/gate.md:
#: collapses of a two-question type on a noisy night). Types of five or more: at most 3 %.
SMALL_TYPE_ALARMS = ((0.0, 0.0), (0.05, 0.0), (0.10, 0.10), (0.20, 0.43))
#: A type this small or smaller makes the warning possible.
SMALL_TYPE = 3


def gating_warning(per_type: dict[str, int], error: float = DEFAULT_VERDICT_ERROR) -> str | None:
    """``judge check``'s warning when a golden set cannot be gated at the judge's verdict error
    (``error``: the audit's when labels measured it, else ``DEFAULT_VERDICT_ERROR``): the share
    of 30-night seasons with a false alarm, interpolated in ``SMALL_TYPE_ALARMS`` (beyond its
    last error, its last figure: at least that many), said when it is above 1 in 10, e.g.
    "with 2 questions a type and 20 % verdict error, about 4 in 10 seasons would raise a false
    alarm: add questions or pool types". None otherwise."""
    sizes = [n for n in per_type.values() if n > 0]
    if not sizes or min(sizes) > SMALL_TYPE:
        return None
    share = SMALL_TYPE_ALARMS[-1][1]
    for (e0, a0), (e1, a1) in itertools.pairwise(SMALL_TYPE_ALARMS):
        if e0 <= error <= e1:
            share = a0 + (a1 - a0) * (error - e0) / (e1 - e0)
            break
    if share <= 0.10 + 1e-9:
        return None
    smallest = min(sizes)
    about = "at least" if error > SMALL_TYPE_ALARMS[-1][0] else "about"
    return (
        f"with {smallest} question{'s' if smallest > 1 else ''} a type and {error * 100:.0f} % "
        f"verdict error, {about} {round(share * 10)} in 10 seasons would raise a false alarm: "
        "add questions or pool types (docs/gate.md#what-a-golden-set-can-see)"
    )
