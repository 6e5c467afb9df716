"""The run history: which earlier run is comparable, a bounded file, damaged lines named."""

import copy
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.results.history import HistoryEntry, append_history, load_history, read_history
from tests.conftest import CORPUS, QUESTIONS, history_entry, latest_report, run_lexical

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
        append_history(path, history_entry(f"run{i}"))
    assert [e.folder for e in read_history(path)] == ["run3", "run4", "run5", "run6", "run7"]


def test_damaged_history_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('{"folder": 1}\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"history.jsonl:1: not a history entry"):
        read_history(path)


def _entry(folder: str) -> HistoryEntry:
    return history_entry(folder)


@pytest.mark.parametrize(
    ("tail", "why"),
    [
        (b'{"format_version": 1, "folder": "ru', "not valid JSON"),
        ('{"folder": "年'.encode()[:-1], "not UTF-8: byte 0xe5"),
        (b"\x00" * 300, "not valid JSON"),  # what a power cut can leave in the last block
    ],
    ids=["cut-short", "cut-in-a-character", "zero-filled"],
)
def test_a_torn_last_line_is_skipped_with_a_warning_then_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, tail: bytes, why: str
) -> None:
    path = tmp_path / "history.jsonl"
    append_history(path, _entry("run1"))
    with path.open("ab") as handle:
        handle.write(tail)
    history = load_history(path)
    assert [e.folder for e in history.entries] == ["run1"]
    assert history.warnings == [
        f"{path}:2: the last line is incomplete ({why}): a run stopped while writing it; it is "
        "skipped, and the next run's line replaces it"
    ]
    with caplog.at_level(logging.WARNING, logger="judge"):
        assert [e.folder for e in read_history(path)] == ["run1"]
    assert history.warnings[0] in caplog.text
    append_history(path, _entry("run2"))
    assert [e.folder for e in read_history(path)] == ["run1", "run2"]
    assert load_history(path).warnings == []
    assert path.read_bytes().count(b"\n") == 2


def test_a_last_line_without_its_newline_is_not_glued_to_the_next(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(_entry("run1").model_dump_json(), encoding="utf-8")  # an editor dropped \n
    append_history(path, _entry("run2"))
    assert [e.folder for e in read_history(path)] == ["run1", "run2"]


def test_damage_before_the_last_line_stays_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    good = _entry("run1").model_dump_json().encode()
    path.write_bytes(good + b"\n" + good[:40] + b"\n" + b'{"folder": "\xff"}\n' + good + b"\n")
    with pytest.raises(InputError) as caught:
        read_history(path)
    advice = (
        "remove or fix the line (each line is one earlier run: removing it only loses "
        "comparisons with that run)"
    )
    assert caught.value.problems == [
        f"{path}:2: not a history entry (not valid JSON); {advice}",
        f"{path}:3: not a history entry (not UTF-8: byte 0xff); {advice}",
    ]
    with pytest.raises(InputError):  # and nothing is appended to a damaged history
        append_history(path, _entry("run2"))
