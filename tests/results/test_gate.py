"""The regression gate, through real `judge run`s on the tiny set, and on its own."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from judge.judging.backends.base import JudgeRequest
from judge.judging.verdict import Reply
from judge.pipeline.evaluate import evaluate
from judge.results.compare import GateRule, SectionComparison
from judge.results.gate import detectable, gate
from tests.conftest import latest_report, nonsense_run, run_lexical, worse_run
from tests.fakes import ScriptedBackend, good_reply, nonsense_scores_zero
from tests.results.helpers import fallen_change, use_backend

Tiny = Callable[..., Config]


def _run(config: Config, *extra: str) -> int:
    assert config.source is not None
    return main(["--config", str(config.source), "run", *extra])


def test_a_collapse_fails_the_gate_on_any_golden_set(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The tiny set has one question per type: no type alone can show anything, but every
    # answer turned to nonsense is a pooled collapse (type "all") of the judge's scores.
    use_backend(monkeypatch, ScriptedBackend(nonsense_scores_zero))
    assert _run(tiny(), "--fail-on-regression") == 0  # first run: nothing to compare
    assert "nothing compared" in capsys.readouterr().out
    assert _run(tiny(), "--fail-on-regression") == 0
    assert capsys.readouterr().out.rstrip().endswith("gate: ok: no regression")
    assert _run(tiny(run=nonsense_run()), "--fail-on-regression") == 1
    out = capsys.readouterr().out
    assert "gate: REGRESSED: collapsed over all questions: judge all faithfulness -2.000 [" in out
    report = latest_report(tiny(run=nonsense_run()))
    assert report["regressions"] > 0
    judge = next(c for c in report["comparisons"] if c["section"] == "judge")
    pooled = {c["metric"]: c for c in judge["changes"] if c["type"] == "all"}
    assert set(pooled) == {"faithfulness", "relevance"}
    assert pooled["faithfulness"]["direction"] == "collapsed" and pooled["faithfulness"]["n"] == 4
    assert len(pooled["faithfulness"]["moved"]) == 4
    # Without the flag the same collapse is reported but does not fail.
    assert _run(tiny(run=nonsense_run())) == 0


def test_one_question_moving_is_never_a_failure(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    # q1's relevant chunk from rank 1 to 5: one change is a coin's toss (p = 1/2), however far
    # the mean of a one-question type moves.
    assert run_lexical(tiny()) == 0
    assert run_lexical(tiny(run=worse_run()), "--fail-on-regression") == 0
    out = capsys.readouterr().out
    assert "gate: ok: no regression" in out
    report = latest_report(tiny(run=worse_run()))
    change = next(
        c
        for c in report["comparisons"][0]["changes"]
        if c["type"] == "factual" and c["metric"] == "mrr"
    )
    assert change["moved"] == [{"question_id": "q1", "old": 1.0, "new": 0.2}]
    assert (change["n"], change["low"], change["high"], change["p_fall"]) == (1, -0.8, -0.8, 0.5)
    assert change["direction"] == "noise"


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
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_backend(monkeypatch, ScriptedBackend(nonsense_scores_zero))
    config = tiny()
    assert _run(config) == 0
    first = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    assert _run(tiny(run=nonsense_run())) == 0
    second = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    _delete(config.reports.dir / second)
    capsys.readouterr()
    # Compared with the first run (the second is gone), the nonsense run collapses again.
    assert _run(tiny(run=nonsense_run()), "--fail-on-regression") == 1
    out = capsys.readouterr().out
    assert f"judge vs {first}: " in out and " regressed" in out
    assert (
        f"(the folders of 1 newer compatible run(s) are gone or unreadable ({second}): "
        "compared with the latest one still there)"
    ) in out
    # Every compatible folder gone: nothing to compare with, and the note says why.
    for folder in [p for p in config.reports.dir.iterdir() if p.name.startswith("20")]:
        _delete(folder)
    assert _run(tiny(), "--require-baseline") == 1
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


def test_each_flag_fails_the_run_on_its_own_checks() -> None:
    comparisons = [
        SectionComparison("judge", "20261128T000000Z-aaaaaaaa", [fallen_change("regressed")], ""),
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
        "(-0.333 [-0.583, -0.083], 12 questions, p 0.0001); moved: q01 2→1"
    )
    assert check.moves == (comparisons[0].changes[0],)


def test_the_same_fall_against_the_run_and_the_baseline_is_named_once() -> None:
    fell = fallen_change("regressed")
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
    small = fallen_change("listed", n=12)
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
        "ok: no regression; listed, not shown to be more than noise: "
        "judge factual faithfulness -0.333 [-0.583, -0.083] over 12 questions"
    )
    check = next(c for c in compared.checks if c.name == "judge vs last compatible run")
    assert check.passed and check.moves == (small,)
    assert check.message.startswith(
        "against 20261128T000000Z-aaaaaaaa: compared question by question, of 1 (type, metric) "
        "cells: 0 regressed, 0 improved, 1 listed (beyond the margin, not shown to be more than "
        "noise), 0 within noise; listed: ▽ factual faithfulness"
    )


def test_a_collapse_is_named_first_with_its_types() -> None:
    fell = fallen_change("regressed")
    collapse = fell._replace(type="negative", direction="collapsed", n=5, delta=-1.6)
    result = gate([SectionComparison("judge", "20261128T000000Z-aaaaaaaa", [fell, collapse], "")])
    assert result.verdict.startswith("REGRESSED: collapsed in negative: judge negative ")
    assert result.verdict.endswith("(and 1 more)")


def test_what_the_gate_can_call_per_type(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    # The sample's shape with 100 checks a night: one night's exact test needs 2^-k <=
    # 0.001 / 100, k = 17 falls with none rising, more than any type has; a collapse needs 80 %
    # of a type (and two) at the floor; the season, against 20 quiet runs, calls three
    # questions losing a point two nights running ((2/22)^6 = 5.6e-7 <= 0.01 / 150).
    seen = detectable({"factual": 12, "negative": 5, "one": 1, "big": 200}, 100, GateRule())
    assert [(d.type, d.collapse, d.shown, d.season) for d in seen] == [
        ("factual", 10, None, 3),
        ("negative", 4, None, 3),
        ("one", None, None, None),
        ("big", 160, 17, 21),  # beyond the 0.10 margin: 21 points over 200 questions
    ]
    assert seen[1].describe() == (
        "negative: 5 questions; tonight alone: a collapse (4 of 5 answers to the floor); over "
        "the season (from 5 earlier compatible runs): a fall that stays, from 3 questions "
        "losing a point two nights running after quiet nights"
    )
    # `judge check` says it before the first night.
    config = tiny()
    assert config.source is not None
    assert main(["--config", str(config.source), "check", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert "the gate can call (docs/gate.md):\n  factual: 1 question; tonight alone: only a " in out


def test_check_warns_when_a_set_cannot_be_gated_at_the_judges_error() -> None:
    from judge.results.gate import DEFAULT_VERDICT_ERROR, gating_warning

    small = {"factual": 3, "procedural": 3, "negative": 2, "out_of_scope": 2}
    assert gating_warning(small, 0.20) == (
        "with 2 questions a type and 20 % verdict error, about 4 in 10 seasons would raise a "
        "false alarm: add questions or pool types (docs/gate.md#what-a-golden-set-can-see)"
    )
    assert "at least 4 in 10" in (gating_warning(small, 0.30) or "")
    # At the documented default (10 %) a 3/3/2/2 set is at the 1-in-10 bound: no warning; the
    # sample's shape (12/8/5/5) never warns.
    assert DEFAULT_VERDICT_ERROR == 0.10 and gating_warning(small) is None
    assert gating_warning({"factual": 12, "procedural": 8, "negative": 5}, 0.30) is None
    assert gating_warning({"factual": 0}, 0.30) is None
