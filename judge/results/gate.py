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

from collections.abc import Sequence
from typing import NamedTuple

from judge.errors import EXIT_OK, EXIT_REGRESSION
from judge.results.compare import FIRST_IDS, SECTIONS, Change, Section, SectionComparison


class GateCheck(NamedTuple):
    name: str
    """e.g. "retrieval vs last compatible run", "judge vs baseline",
    "judge has something to compare with", "answers were judged"."""
    passed: bool
    message: str
    kind: str
    """"regression" or "baseline": which flag makes a failure fail the command."""


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
    """Moves beyond the margin in types too small to call: reported, never failed."""

    @property
    def verdict(self) -> str:
        """One line: the first line of the nightly's output. Questions without an answer or a
        verdict come first; when every question failed, the comparisons (of nothing) are left
        out."""
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
        if self.regressions:
            fell = _distinct(self.regressions)
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
                f"ok: no regression; listed, too few questions to call: {listed[0].headline()}"
                f"{more}"
            )
        return "ok: no regression"

    def exit_code(self, fail_on_regression: bool, require_baseline: bool) -> int:
        """1 when a check that the flags enforce failed (as the JUnit file reports it)."""
        failed = (fail_on_regression and (self.regressions or self.failed or self.unjudged)) or (
            require_baseline and self.missing
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
    against = "the pinned baseline" if pinned else f"{comp.baseline}"
    regressions = comp.regressions
    if regressions:
        message = f"against {against}: " + "; ".join(c.describe() for c in regressions)
    else:
        counts = comp.counts()
        message = (
            f"against {against}: {len(comp.changes)} per-type metric(s) compared question by "
            f"question, none regressed ({counts['improved']} improved, {counts['too_few']} "
            f"listed in types too small to call, {counts['noise']} within noise)"
        )
        if comp.listed:
            message += "; listed: " + "; ".join(c.describe() for c in comp.listed)
    name = f"{comp.section} vs {'baseline' if pinned else 'last compatible run'}"
    return GateCheck(name, not regressions, message, "regression")


def gate(
    comparisons: list[SectionComparison],
    failed: Sequence[str] = (),
    total: int = 0,
    unjudged: Sequence[str] = (),
    judged: int = 0,
) -> Gate:
    """The checks of one run: were the answers produced (``failed``: the golden questions the
    adapter gave no answer for, of ``total``), were they judged (``unjudged``: the answers
    without a verdict, of ``judged``), and its comparisons (with earlier runs and the pinned
    baseline)."""
    total = max(total, len(failed))
    judged = max(judged, len(unjudged))
    checks = [_comparison_check(comp) for comp in comparisons if comp.baseline is not None]
    missing = [
        section
        for section in SECTIONS
        if not any(c.baseline is not None for c in comparisons if c.section == section)
    ]
    for section in SECTIONS:
        notes = [c.note for c in comparisons if c.section == section and c.baseline is None]
        checks.append(
            GateCheck(
                f"{section} has something to compare with",
                section not in missing,
                "; ".join(notes) if section in missing else "compared",
                "baseline",
            )
        )
    checks.append(
        GateCheck(
            "answers were produced",
            not failed,
            failed_answers(failed, total)
            if failed
            else f"the adapter answered all {total} questions"
            if total
            else "the adapter answered every question",
            "regression",
        )
    )
    checks.append(
        GateCheck(
            "answers were judged",
            not unjudged,
            unjudged_answers(unjudged, judged)
            if unjudged
            else f"the judge gave a verdict for all {judged} answers"
            if judged
            else "the judge gave a verdict for every answer",
            "regression",
        )
    )
    regressions = [c for comp in comparisons for c in comp.regressions]
    listed = tuple(c for comp in comparisons for c in comp.listed)
    return Gate(checks, regressions, missing, tuple(failed), total, tuple(unjudged), judged, listed)
