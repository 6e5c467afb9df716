"""The regression gate, through real `judge run`s on the tiny set, and on its own."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from judge.judging.backends import JudgeRequest
from judge.judging.verdict import Reply
from judge.pipeline import evaluate
from judge.results.compare import Change, Moved, SectionComparison
from judge.results.gate import gate
from tests.conftest import latest_report, run_lexical, worse_run
from tests.fakes import ScriptedBackend, good_reply
from tests.results.helpers import one_question_counts, use_backend

Tiny = Callable[..., Config]

#: q1's mrr from 1 to 0.2 (its relevant chunk from rank 1 to 5), one question: its interval is
#: the point -0.8.
MRR_FELL = "▼ factual mrr: 1.000 → 0.200 (-0.800 [-0.800, -0.800], 1 question); moved: q1 1→0.200"


def test_regression_fails_the_gate(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    tiny = one_question_counts(tiny)
    assert run_lexical(tiny(), "--fail-on-regression") == 0  # first run: nothing to compare
    assert "nothing compared" in capsys.readouterr().out
    assert run_lexical(tiny(), "--fail-on-regression") == 0
    assert capsys.readouterr().out.rstrip().endswith("gate: ok: no regression")
    assert run_lexical(tiny(run=worse_run()), "--fail-on-regression") == 1
    out = capsys.readouterr().out
    assert "gate: REGRESSED: retrieval factual mrr -0.800 [-0.800, -0.800] over 1 question" in out
    assert MRR_FELL in out
    report = latest_report(tiny(run=worse_run()))
    assert report["regressions"] > 0
    change = next(
        c
        for c in report["comparisons"][0]["changes"]
        if c["type"] == "factual" and c["metric"] == "mrr"
    )
    assert change["moved"] == [{"question_id": "q1", "old": 1.0, "new": 0.2}]
    assert (change["n"], change["low"], change["high"]) == (1, -0.8, -0.8)
    # Without the flag the same regression is reported but does not fail.
    assert run_lexical(tiny(run=worse_run())) == 0


def test_a_type_below_the_minimum_is_listed_never_failed(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    # The default minimum is 8 questions; the tiny set has 1 per type.
    assert run_lexical(tiny()) == 0
    assert run_lexical(tiny(run=worse_run()), "--fail-on-regression") == 0
    out = capsys.readouterr().out
    assert "gate: ok: no regression; listed, too few questions to call: retrieval factual " in out
    assert "▽ factual mrr: 1.000 → 0.200 (-0.800 [-0.800, -0.800], 1 question), too few " in out


def test_no_baseline_passes_unless_required(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_lexical(tiny(), "--fail-on-regression") == 0
    assert (
        "no compatible earlier run or baseline for retrieval and judge" in capsys.readouterr().out
    )
    (tiny().reports.dir / "history.jsonl").unlink()
    assert run_lexical(tiny(), "--fail-on-regression", "--require-baseline") == 1


def _delete(folder: Path) -> None:
    """Delete a report folder, leaving an empty directory of its name: runs in the same second
    would otherwise reuse the name (``ReportsDir.new_folder_name`` skips only names that exist),
    which these tests do not mean to test."""
    shutil.rmtree(folder)
    folder.mkdir()


def test_a_deleted_folder_falls_back_to_the_latest_one_still_there(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = one_question_counts(tiny)
    config = tiny()
    assert run_lexical(config) == 0
    first = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    assert run_lexical(tiny(run=worse_run())) == 0
    second = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    _delete(config.reports.dir / second)
    capsys.readouterr()
    # Compared with the first run (the second is gone), the worse run regresses again.
    assert run_lexical(tiny(run=worse_run()), "--fail-on-regression") == 1
    out = capsys.readouterr().out
    assert f"retrieval vs {first}: 6 regressed" in out
    assert (
        f"(the folders of 1 newer compatible run(s) are gone or unreadable ({second}): "
        "compared with the latest one still there)"
    ) in out
    # Every compatible folder gone: nothing to compare with, and the note says why.
    for folder in [p for p in config.reports.dir.iterdir() if p.name.startswith("20")]:
        _delete(folder)
    assert run_lexical(tiny(), "--require-baseline") == 1
    out = capsys.readouterr().out
    assert (
        "retrieval: the folders of the 3 compatible earlier run(s) are gone or unreadable (" in out
    )


def _unparsable_for_q2(request: JudgeRequest) -> Reply:
    if request.question.startswith("バックアップから"):
        return Reply(text="{not json", finish_reason="stop")
    return good_reply(request)


def test_an_answer_without_a_verdict_fails_the_gate_on_its_own(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    result = evaluate(config, backend=ScriptedBackend(_unparsable_for_q2))
    assert result.gate.unjudged == ("q2",) and result.gate.judged == 4
    check = next(c for c in result.gate.checks if c.name == "answers were judged")
    assert not check.passed and check.kind == "regression"
    assert check.message == "the judge gave no verdict for 1 of 4 answers (q2)"
    assert result.gate.exit_code(fail_on_regression=True, require_baseline=False) == 1
    assert result.gate.exit_code(fail_on_regression=False, require_baseline=False) == 0

    # The nightly names it in its first line, and exits 1.
    use_backend(monkeypatch, ScriptedBackend(_unparsable_for_q2))
    summary = tmp_path / "summary.json"
    assert main(["--config", str(config.source), "nightly", "--json", str(summary)]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "nightly: FAILED: the judge gave no verdict for 1 of 4 answers (q2)"
    assert json.loads(summary.read_text(encoding="utf-8"))["unjudged"] == ["q2"]

    # Every verdict ok (the failed reply judged again): the check passes, and says over how many.
    ok = evaluate(config, backend=ScriptedBackend(good_reply), rejudge_failed=True)
    check = next(c for c in ok.gate.checks if c.name == "answers were judged")
    assert check.passed and check.message == "the judge gave a verdict for all 4 answers"


def _change(direction: str, n: int = 12) -> Change:
    return Change(
        "judge",
        "factual",
        "faithfulness",
        n,
        2.0,
        5 / 3,
        -1 / 3,
        -7 / 12,
        -1 / 12,
        0.1,
        direction,  # type: ignore[arg-type]
        (Moved("q01", 2.0, 1.0),),
    )


def test_each_flag_fails_the_run_on_its_own_checks() -> None:
    comparisons = [
        SectionComparison("judge", "20261128T000000Z-aaaaaaaa", [_change("regressed")], ""),
        SectionComparison("retrieval", None, [], "no earlier run with these retrieval settings"),
    ]
    result = gate(comparisons)
    assert result.verdict == (
        "REGRESSED: judge factual faithfulness -0.333 [-0.583, -0.083] over 12 questions"
    )
    assert result.missing == ["retrieval"]
    # A regression and a missing section: either flag alone fails the run.
    assert result.exit_code(fail_on_regression=True, require_baseline=False) == 1
    assert result.exit_code(fail_on_regression=False, require_baseline=True) == 1
    assert result.exit_code(fail_on_regression=False, require_baseline=False) == 0
    names = {c.name: c for c in result.checks}
    assert set(names) == {
        "judge vs last compatible run",
        "retrieval has something to compare with",
        "judge has something to compare with",
        "answers were produced",
        "answers were judged",
    }
    check = names["judge vs last compatible run"]
    assert not check.passed and check.kind == "regression"
    assert check.message == (
        "against 20261128T000000Z-aaaaaaaa: ▼ factual faithfulness: 2.000 → 1.667 "
        "(-0.333 [-0.583, -0.083], 12 questions); moved: q01 2→1"
    )


def test_the_same_fall_against_the_run_and_the_baseline_is_named_once() -> None:
    fell = _change("regressed")
    other = fell._replace(metric="full_marks")
    comparisons = [
        SectionComparison("judge", "20261128T000000Z-aaaaaaaa", [fell, other], ""),
        SectionComparison("judge", "baseline", [fell], ""),
    ]
    result = gate(comparisons)
    assert result.verdict.endswith("over 12 questions (and 1 more)")
    assert [c.name for c in result.checks if not c.passed] == [
        "judge vs last compatible run",
        "judge vs baseline",
        "retrieval has something to compare with",
    ]


def test_a_listed_change_passes_and_says_so() -> None:
    small = _change("too_few", n=5)._replace(type="negative", delta=-0.4, low=-1.2, high=0.0)
    result = gate([SectionComparison("judge", "20261128T000000Z-aaaaaaaa", [small], "")])
    assert result.regressions == [] and result.listed == (small,)
    assert result.verdict == (
        "no compatible earlier run or baseline for retrieval: nothing compared"
    )
    compared = gate(
        [
            SectionComparison("judge", "20261128T000000Z-aaaaaaaa", [small], ""),
            SectionComparison("retrieval", "20261128T000000Z-aaaaaaaa", [], ""),
        ]
    )
    assert compared.verdict == (
        "ok: no regression; listed, too few questions to call: "
        "judge negative faithfulness -0.400 [-1.200, +0.000] over 5 questions"
    )
    check = next(c for c in compared.checks if c.name == "judge vs last compatible run")
    assert check.passed
    assert check.message.startswith(
        "against 20261128T000000Z-aaaaaaaa: 1 per-type metric(s) compared question by question, "
        "none regressed (0 improved, 1 listed in types too small to call, 0 within noise); "
        "listed: ▽ negative faithfulness"
    )
