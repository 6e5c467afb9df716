"""``judge.results.decision``: the first line, the exit code and the ``--json`` verdict of a
gated run are one decision (issue 33, item 1)."""

from __future__ import annotations

import pytest

from judge.results.bars import BarResult
from judge.results.decision import gate_decision
from judge.results.gate import Gate, bar_checks


def _gate(*bars: BarResult, missing: bool = False, failed: tuple[str, ...] = ()) -> Gate:
    return Gate(bar_checks(bars), [], ["judge"] if missing else [], failed=failed, total=30)


MET = BarResult("faithfulness", "factual", 1.9, 2.0, 8, 0)
CROSSED = BarResult("faithfulness", "factual", 1.9, 1.5, 8, 0)


@pytest.mark.parametrize("flags", [(False, False), (True, False), (False, True), (True, True)])
def test_a_crossed_bar_fails_the_line_and_the_exit_code_together(
    flags: tuple[bool, bool],
) -> None:
    crossed = gate_decision(_gate(MET, CROSSED), *flags)
    assert crossed.exit_code == 1
    assert crossed.first_line("nightly").startswith(
        "nightly: FAILED: bar: factual faithfulness 1.50 < 1.90 (8 questions)"
    )
    met = gate_decision(_gate(MET), *flags)
    assert (met.exit_code, met.first_line("nightly")) == (0, "nightly: ok: no regression")


def test_the_flags_decide_the_exit_code_and_the_verdict_says_why() -> None:
    gate = _gate(MET, missing=True)
    assert gate_decision(gate, False, False).exit_code == 0
    assert gate_decision(gate, False, True).exit_code == 1
    assert gate_decision(gate, False, True).verdict == gate.verdict
    assert (
        gate_decision(gate, False, True)
        .first_line("gate")
        .startswith("gate: no compatible earlier run or baseline for judge")
    )
    failed = _gate(MET, failed=("q01",))
    assert gate_decision(failed, True, False).exit_code == 1
    assert gate_decision(failed, True, False).verdict.startswith("FAILED: ")
