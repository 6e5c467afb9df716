"""The regression gate: did this run fall below the last compatible run or the pinned baseline?

Each comparison is one check (what CI systems show as one test case); so is "there was
something to compare with" for each section, and "answers were produced" (a golden question the
adapter failed for is a failure of the RAG system, never a smaller n). Whether a failed check
fails the command is the caller's choice (``--fail-on-regression``, ``--require-baseline``; the
nightly sets both).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from judge.errors import EXIT_OK, EXIT_REGRESSION
from judge.results.compare import SECTIONS, Change, Section, SectionComparison


class GateCheck(NamedTuple):
    name: str
    """e.g. "retrieval vs last compatible run", "judge vs baseline",
    "judge has something to compare with"."""
    passed: bool
    message: str
    kind: str
    """"regression" or "baseline": which flag makes a failure fail the command."""


class Gate(NamedTuple):
    checks: list[GateCheck]
    regressions: list[Change]
    missing: list[Section]
    """Sections with nothing compatible to compare with."""
    failed: tuple[str, ...] = ()
    """The golden questions the adapter gave no answer for, in golden-set order."""
    total: int = 0
    """How many golden questions there are."""

    @property
    def verdict(self) -> str:
        """One line: the first line of the nightly's output. Questions without an answer come
        first; when every question failed, the comparisons (of nothing) are left out."""
        compared = self._compared()
        if not self.failed:
            return compared
        head = f"FAILED: {failed_answers(self.failed, self.total)}"
        if len(self.failed) < self.total and self.regressions:
            return f"{head}; {compared}"
        return head

    def _compared(self) -> str:
        if self.regressions:
            return (
                f"REGRESSED: {len(self.regressions)} per-type metric(s) fell by more than the "
                "threshold"
            )
        if self.missing:
            return (
                f"no compatible earlier run or baseline for {' and '.join(self.missing)}: "
                "nothing compared"
            )
        return "ok: no regression beyond the threshold"

    def exit_code(self, fail_on_regression: bool, require_baseline: bool) -> int:
        """1 when a check that the flags enforce failed (as the JUnit file reports it)."""
        failed = (fail_on_regression and (self.regressions or self.failed)) or (
            require_baseline and self.missing
        )
        return EXIT_REGRESSION if failed else EXIT_OK


#: How many ids of failed questions a one-line message names.
FIRST_IDS = 5


def failed_answers(failed: Sequence[str], total: int) -> str:
    """e.g. "the adapter failed for 2 of 30 questions (q07, q12)"; past FIRST_IDS ids, "…"."""
    ids = ", ".join(failed[:FIRST_IDS]) + (", …" if len(failed) > FIRST_IDS else "")
    return f"the adapter failed for {len(failed)} of {total} questions ({ids})"


def gate(comparisons: list[SectionComparison], failed: Sequence[str] = (), total: int = 0) -> Gate:
    """The checks of one run: were the answers produced (``failed``: the golden questions the
    adapter gave no answer for, of ``total``), and its comparisons (with earlier runs and the
    pinned baseline)."""
    total = max(total, len(failed))
    checks = []
    for comp in comparisons:
        if comp.baseline is None:
            continue
        # Stable names (CI systems follow a test case by its name from night to night); the
        # folder compared with goes into the message.
        pinned = comp.baseline == "baseline"
        against = "the pinned baseline" if pinned else f"{comp.baseline}"
        regressions = comp.regressions
        message = (
            f"against {against}: " + "; ".join(c.describe() for c in regressions)
            if regressions
            else f"against {against}: {len(comp.changes)} metric(s) compared, none fell beyond "
            "the threshold"
        )
        name = f"{comp.section} vs {'baseline' if pinned else 'last compatible run'}"
        checks.append(GateCheck(name, not regressions, message, "regression"))
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
    regressions = [c for comp in comparisons for c in comp.regressions]
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
    return Gate(checks, regressions, missing, tuple(failed), total)
