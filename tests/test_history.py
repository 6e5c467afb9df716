"""History, comparison and the regression gate, through real `judge run`s on the tiny set."""

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.results.history import (
    HistoryEntry,
    append_history,
    compare_metrics,
    read_history,
)
from tests.conftest import CORPUS, QUESTIONS, REPO, RUN

Tiny = Callable[..., Config]


def _run(config: Config, *extra: str) -> int:
    assert config.source is not None
    return main(["--config", str(config.source), "run", "--backend", "lexical", *extra])


def _latest_report(config: Config) -> dict[str, Any]:
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    return json.loads((config.reports.dir / folder / "report.json").read_text(encoding="utf-8"))


def _worse_run() -> list[dict[str, Any]]:
    """The tiny run with q1's relevant chunk pushed from rank 1 to rank 5 (a retrieval regression)."""
    run = copy.deepcopy(RUN)
    filler = [{"chunk_id": c["chunk_id"]} for c in CORPUS if c["chunk_id"] != "pricing/plans"]
    run[1]["retrieved"] = [*filler, {"chunk_id": "pricing/plans"}]
    return run


def test_compare_metrics_directions() -> None:
    old = {"factual": {"recall@5": 0.80, "mrr": 0.5, "faithfulness": None}}
    new = {"factual": {"recall@5": 0.70, "mrr": 0.53, "faithfulness": 1.5}}
    changes = {c.metric: c for c in compare_metrics("retrieval", old, new, 0.05)}
    assert changes["recall@5"].direction == "regressed"
    assert changes["recall@5"].delta == pytest.approx(-0.10)
    assert changes["mrr"].direction == "noise"
    assert "faithfulness" not in changes  # no value before: nothing to compare


def test_regression_fails_the_gate(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tiny(), "--fail-on-regression") == 0  # first run: nothing to compare
    assert "nothing compared" in capsys.readouterr().out
    assert _run(tiny(), "--fail-on-regression") == 0
    assert capsys.readouterr().out.rstrip().endswith("gate: ok: no regression beyond the threshold")
    assert _run(tiny(run=_worse_run()), "--fail-on-regression") == 1
    out = capsys.readouterr().out
    assert "gate: REGRESSED" in out
    assert "▼ factual mrr: 1.000 → 0.200 (-0.800)" in out
    report = _latest_report(tiny(run=_worse_run()))
    assert report["regressions"] > 0
    # Without the flag the same regression is reported but does not fail.
    assert _run(tiny(run=_worse_run())) == 0


def test_no_baseline_passes_unless_required(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tiny(), "--fail-on-regression") == 0
    assert (
        "no compatible earlier run or baseline for retrieval and judge" in capsys.readouterr().out
    )
    (tiny().reports.dir / "history.jsonl").unlink()
    assert _run(tiny(), "--fail-on-regression", "--require-baseline") == 1


def test_changed_golden_set_is_not_compared(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tiny()) == 0
    questions = copy.deepcopy(QUESTIONS)
    questions[0]["question"] = "年額プランの値段は？"
    assert _run(tiny(questions=questions), "--fail-on-regression") == 0
    out = capsys.readouterr().out
    assert "retrieval: the golden set changed since the last run: not compared" in out
    assert "judge: the golden set changed since the last run: not compared" in out
    report = _latest_report(tiny(questions=questions))
    assert all(c["against"] is None for c in report["comparisons"])


def test_changed_corpus_is_noted_and_still_compared(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tiny()) == 0
    corpus = copy.deepcopy(CORPUS)
    corpus[4]["text"] += "Androidにも対応しています。"
    assert _run(tiny(corpus=corpus)) == 0
    out = capsys.readouterr().out
    assert "retrieval vs " in out and "(the corpus changed since that run" in out
    report = _latest_report(tiny(corpus=corpus))
    assert all(c["against"] is not None for c in report["comparisons"])


def test_a_prompt_edit_does_not_change_the_lexical_baseline(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "judge.v2.md"
    prompt.write_text(
        (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    config = tiny()
    assert config.source is not None
    args = ["--config", str(config.source), "run", "--backend", "lexical", "--prompt", str(prompt)]
    assert main(args) == 0
    prompt.write_text(
        prompt.read_text(encoding="utf-8") + "\nOne more rubric line.\n", encoding="utf-8"
    )
    assert main(args) == 0
    out = capsys.readouterr().out
    # The baseline ignores the prompt: same fingerprint, everything from the cache, and its
    # metrics are compared like any run's.
    assert "(4 from the cache)" in out
    assert "judge vs " in out and "prompt edit since" not in out


def test_history_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import judge.results.history as history

    monkeypatch.setattr(history, "MAX_ENTRIES", 5)
    path = tmp_path / "history.jsonl"
    for i in range(8):
        entry = HistoryEntry(
            folder=f"run{i}",
            started_at="2026-11-29T00:00:00+00:00",
            golden_hash="g",
            corpus_hash="c",
            run_hash="r",
            retrieval_fingerprint="rf",
            judge_fingerprint="jf",
            judge_parts={},
            metrics={"retrieval": {}, "judge": {}},
            status_counts={},
        )
        append_history(path, entry)
    assert [e.folder for e in read_history(path)] == ["run3", "run4", "run5", "run6", "run7"]


def test_damaged_history_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('{"folder": 1}\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"history.jsonl:1: not a history entry"):
        read_history(path)


def test_baseline_pin_ratchet_and_gate(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    assert _run(tiny(run=_worse_run())) == 0
    assert main(["--config", toml, "baseline", "pin"]) == 0
    baseline = json.loads(config.reports.baseline.read_text(encoding="utf-8"))
    assert baseline["metrics"]["retrieval"]["factual"]["mrr"] == pytest.approx(0.2)
    # Pinning again would silently replace (possibly lower) it: refused without --replace.
    assert main(["--config", toml, "baseline", "pin"]) == 2
    assert "judge baseline ratchet" in capsys.readouterr().err
    # A better run ratchets it up ...
    assert _run(tiny()) == 0
    assert main(["--config", toml, "baseline", "ratchet"]) == 0
    assert "factual mrr: 0.200 → 1.000" in capsys.readouterr().out
    # ... a worse run never lowers it, and now fails the gate against it.
    assert _run(tiny(run=_worse_run())) == 0
    assert main(["--config", toml, "baseline", "ratchet"]) == 0
    assert "0 metric(s) raised, none lowered" in capsys.readouterr().out
    assert (
        json.loads(config.reports.baseline.read_text(encoding="utf-8"))["metrics"]["retrieval"][
            "factual"
        ]["mrr"]
        == 1.0
    )
    assert _run(tiny(run=_worse_run()), "--fail-on-regression") == 1
    assert "retrieval vs baseline: " in capsys.readouterr().out


def test_nightly_prints_its_verdict_first(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert config.source is not None
    toml = config.source
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "lexical"\n'),
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "nightly"]) == 1  # no baseline yet: a nightly must not pass
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0]
        == "nightly: no compatible earlier run or baseline for retrieval and judge: nothing compared"
    )
    assert out[1].startswith("judge: lexical")
    assert main(["--config", str(toml), "nightly"]) == 0
    assert (
        capsys.readouterr().out.splitlines()[0] == "nightly: ok: no regression beyond the threshold"
    )


def test_a_second_run_is_refused_while_the_lock_is_held(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.results.lock import run_lock

    config = tiny()
    with run_lock(config.reports.dir):
        assert _run(config) == 2
    assert "another judge run (pid " in capsys.readouterr().err
    assert _run(config) == 0  # released with its holder


def test_show_diff_and_rerender(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    assert _run(config) == 0
    first = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    assert _run(tiny(run=_worse_run())) == 0
    second = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    capsys.readouterr()
    assert main(["--config", toml, "show", "q2"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("q2 · procedural · tune · faithfulness")
    assert "⟦" in shown and "⟧" in shown  # the quote, marked without colours off a terminal
    assert main(["--config", toml, "diff", first, second]) == 0
    diff = capsys.readouterr().out
    assert "note: the RAG output differs between the two runs" in diff
    assert "▼ factual mrr: 1.000 → 0.200 (-0.800)" in diff
    report_md = config.reports.dir / second / "report.md"
    report_md.write_text("damaged", encoding="utf-8")
    assert main(["--config", toml, "report", second]) == 0
    assert report_md.read_text(encoding="utf-8").startswith(f"# Report {second}")
    assert main(["--config", toml, "show", "q9"]) == 2


def test_prompt_edit_lists_flipped_verdicts_and_agreement(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge whose verdict on q2 depends on a rubric line: editing the prompt flips q2."""
    from judge.hashing import text_sha256
    from judge.judging import backends
    from judge.judging.verdict import Reply
    from tests.fakes import ScriptedBackend, good_reply

    def script(request: Any) -> Reply:
        if "lose a faithfulness point" in request.prompt and request.question.startswith(
            "バックアップから"
        ):
            quote = request.context[0].text.split("。")[0] + "。"
            payload = {"evidence": quote, "faithfulness": 1, "relevance": 2, "note": "order"}
            return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")
        return good_reply(request)

    monkeypatch.setitem(backends.BACKENDS, "lexical", lambda config: ScriptedBackend(script))
    labels = tmp_path / "labels.jsonl"
    answer = RUN[2]["answer"]
    labels.write_text(
        json.dumps(
            {
                "question_id": "q2",
                "answer_sha256": text_sha256(answer),
                "faithfulness": 1,
                "relevance": 2,
                "labeller": "ana",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    config = tiny(extra_toml=f'labels = "{labels}"\n')
    assert config.source is not None
    prompt = tmp_path / "judge.v2.md"
    original = (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8")
    prompt.write_text(original, encoding="utf-8")
    args = ["--config", str(config.source), "run", "--backend", "lexical", "--prompt", str(prompt)]
    assert main(args) == 0
    prompt.write_text(
        original + "\nSteps in the wrong order lose a faithfulness point.\n", encoding="utf-8"
    )
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "verdicts changed" in out and "  q2: F2 R2 (ok) → F1 R2 (ok)" in out
    assert "agreement with 1 human labels (both scores): 0.0% → 100.0%" in out
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    assert "## Since the prompt edit" in report_md
    assert "| q2 | F2 R2 | F1 R2 |" in report_md
    assert "0.0% → 100.0%" in report_md
