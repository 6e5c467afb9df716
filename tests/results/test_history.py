"""The run history: which earlier run is comparable, a bounded file, damaged lines named."""

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.results.history import HistoryEntry, append_history, read_history
from tests.conftest import CORPUS, QUESTIONS, latest_report, run_lexical

Tiny = Callable[..., Config]


def test_changed_golden_set_is_not_compared(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_lexical(tiny()) == 0
    questions = copy.deepcopy(QUESTIONS)
    questions[0]["question"] = "年額プランの値段は？"
    assert run_lexical(tiny(questions=questions), "--fail-on-regression") == 0
    out = capsys.readouterr().out
    assert "retrieval: the golden set changed since the last run: not compared" in out
    assert "judge: the golden set changed since the last run: not compared" in out
    report = latest_report(tiny(questions=questions))
    assert all(c["against"] is None for c in report["comparisons"])


def test_changed_corpus_is_noted_and_still_compared(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_lexical(tiny()) == 0
    corpus = copy.deepcopy(CORPUS)
    corpus[4]["text"] += "Androidにも対応しています。"
    assert run_lexical(tiny(corpus=corpus)) == 0
    out = capsys.readouterr().out
    assert "retrieval vs " in out and "(the corpus changed since that run" in out
    report = latest_report(tiny(corpus=corpus))
    assert all(c["against"] is not None for c in report["comparisons"])


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
