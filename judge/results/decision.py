"""The one decision of a gated run: the verdict line and the exit code, made once.

``judge run`` prints ``gate: <verdict>``, ``judge nightly`` prints ``nightly: <verdict>`` as its
first line, and both write the same verdict and exit code into ``--json`` and let the JUnit
file fail where the exit code does: all from one ``Decision``, so no view can say "ok" while the
command fails (issue 33: a crossed bar once failed the nightly while its JSON said ok).
"""

from __future__ import annotations

from typing import NamedTuple

from judge.results.gate import Gate


class Decision(NamedTuple):
    """What a gated run decided, and under which flags."""

    verdict: str
    """The gate's one line (``judge.results.gate.Gate.verdict``)."""
    exit_code: int
    fail_on_regression: bool
    require_baseline: bool

    def first_line(self, command: str) -> str:
        """e.g. ``nightly: ok: no regression``: the line a command's output starts with."""
        return f"{command}: {self.verdict}"


def gate_decision(gate: Gate, fail_on_regression: bool, require_baseline: bool) -> Decision:
    """The verdict and the exit code of ``gate`` under the run's flags (a crossed bar always
    fails; the rest as the flags say: ``Gate.exit_code``)."""
    return Decision(
        gate.verdict,
        gate.exit_code(fail_on_regression, require_baseline),
        fail_on_regression,
        require_baseline,
    )
