"""The regression gate, through real `judge run`s on the tiny set."""

from collections.abc import Callable

import pytest

from judge.config import Config
from tests.conftest import latest_report, run_lexical, worse_run

Tiny = Callable[..., Config]


def test_regression_fails_the_gate(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_lexical(tiny(), "--fail-on-regression") == 0  # first run: nothing to compare
    assert "nothing compared" in capsys.readouterr().out
    assert run_lexical(tiny(), "--fail-on-regression") == 0
    assert capsys.readouterr().out.rstrip().endswith("gate: ok: no regression beyond the threshold")
    assert run_lexical(tiny(run=worse_run()), "--fail-on-regression") == 1
    out = capsys.readouterr().out
    assert "gate: REGRESSED" in out
    assert "▼ factual mrr: 1.000 → 0.200 (-0.800)" in out
    report = latest_report(tiny(run=worse_run()))
    assert report["regressions"] > 0
    # Without the flag the same regression is reported but does not fail.
    assert run_lexical(tiny(run=worse_run())) == 0


def test_no_baseline_passes_unless_required(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_lexical(tiny(), "--fail-on-regression") == 0
    assert (
        "no compatible earlier run or baseline for retrieval and judge" in capsys.readouterr().out
    )
    (tiny().reports.dir / "history.jsonl").unlink()
    assert run_lexical(tiny(), "--fail-on-regression", "--require-baseline") == 1


def test_each_flag_fails_the_run_on_its_own_checks() -> None:
    from judge.results.compare import Change, SectionComparison
    from judge.results.gate import gate

    fell = Change("retrieval", "factual", "mrr", 1.0, 0.2, -0.8, "regressed")
    comparisons = [
        SectionComparison("retrieval", "20261128T000000Z-aaaaaaaa", [fell], ""),
        SectionComparison("judge", None, [], "no earlier run with this judge configuration"),
    ]
    result = gate(comparisons)
    assert result.verdict.startswith("REGRESSED: 1 per-type metric(s)")
    assert result.missing == ["judge"]
    # A regression and a missing section: either flag alone fails the run.
    assert result.exit_code(fail_on_regression=True, require_baseline=False) == 1
    assert result.exit_code(fail_on_regression=False, require_baseline=True) == 1
    assert result.exit_code(fail_on_regression=False, require_baseline=False) == 0
    names = {c.name: c for c in result.checks}
    assert set(names) == {
        "retrieval vs last compatible run",
        "retrieval has something to compare with",
        "judge has something to compare with",
        "answers were produced",
    }
    check = names["retrieval vs last compatible run"]
    assert not check.passed and check.kind == "regression"
    assert check.message == (
        "against 20261128T000000Z-aaaaaaaa: ▼ factual mrr: 1.000 → 0.200 (-0.800)"
    )
