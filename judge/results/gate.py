"""The regression gate: did this run fall below the last compatible run or the pinned baseline?

Each comparison is one check (what CI systems show as one test case); so is "there was
something to compare with" for each section. Whether a failed check fails the command is the
caller's choice (``--fail-on-regression``, ``--require-baseline``; the nightly sets both).
"""

from __future__ import annotations

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

    @property
    def verdict(self) -> str:
        """One line: the first line of the nightly's output."""
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
        failed = (fail_on_regression and self.regressions) or (require_baseline and self.missing)
        return EXIT_REGRESSION if failed else EXIT_OK


def gate(comparisons: list[SectionComparison]) -> Gate:
    """The checks of one run's comparisons (with earlier runs and the pinned baseline)."""
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
    return Gate(checks, regressions, missing)
