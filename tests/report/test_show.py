"""`judge show` (one item as the judge saw it) and `judge diff` (two runs), on real runs."""

from collections.abc import Callable

import pytest

from judge.cli import main
from judge.config import Config
from judge.report.show import show_item
from tests.conftest import run_lexical, worse_run
from tests.record.test_build import CITED_BY_1, CITED_FOR_Q2, SENTENCES, sentence_mode_report

Tiny = Callable[..., Config]


def test_show_and_diff(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    assert run_lexical(config) == 0
    first = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    assert run_lexical(tiny(run=worse_run())) == 0
    second = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    capsys.readouterr()
    assert main(["--config", toml, "show", "q2"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("q2 · procedural · tune · faithfulness")
    assert "⟦" in shown and "⟧" in shown  # the quote, marked without colours off a terminal
    assert main(["--config", toml, "diff", first, second]) == 0
    diff = capsys.readouterr().out
    assert "note: the RAG output differs between the two runs" in diff
    assert (
        "compared question by question (margin 0.05 on 0-1 metrics, 0.1 on 0-2 scores; "
        "family-wise level 0.001 a night"
    ) in diff
    # One question's mrr from 1 to 0.2: a coin's toss (p = 1/2), noise, so no line of its own.
    assert "\nretrieval: of 30 (type, metric) cells: 0 regressed, 0 improved, 0 listed" in diff
    assert "▼ factual mrr" not in diff
    assert main(["--config", toml, "show", "q9"]) == 2


def test_show_marks_unsupported_sentences(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    result = sentence_mode_report(tiny)
    config = tiny()  # the same files' config, for the command line
    assert config.source is not None
    capsys.readouterr()
    assert main(["--config", str(config.source), "show", "q1"]) == 0
    shown = capsys.readouterr().out
    lines = shown.splitlines()
    safe_second = SENTENCES[1].replace("\x1b", "\\x1b")  # data is escaped before printing
    assert "\x1b" not in shown
    # The answer, with the unsupported sentence marked without colours (this is not a tty).
    answer = next(line for line in lines if line.startswith("answer    "))
    assert answer == (f"answer    {SENTENCES[0]} {safe_second}[✗2 unsupported] {SENTENCES[2]}")
    # Then every sentence with its verdict, and the context sentence a supported one cites.
    at = lines.index("sentences")
    assert lines[at + 1 : at + 5] == [
        f"  1 ✓ supported    {SENTENCES[0]}",
        f"                   cites sentence 1 (#1 pricing/plans): {CITED_BY_1}",
        f"  2 ✗ unsupported  {safe_second}",
        f"  3 · no claim     {SENTENCES[2]}",
    ]
    assert not any(line.startswith("quote ") for line in lines)
    assert (
        "evidence  sentence by sentence: 1 of 3 answer sentences cite a context sentence (real "
        "by construction; whether each supports its answer sentence is the reviewer's call)"
    ) in lines
    # The cited context sentence, marked in its chunk with the sentence that cites it.
    assert f"⟦{CITED_BY_1}⟧[sentence 1]年額プランは2か月分お得です。" in lines

    # In colour: underlined in red, the marker still there; the data still escaped.
    coloured = show_item(result.folder.record(), "q1", color=True)
    assert f"\x1b[4m\x1b[31m{safe_second}\x1b[0m\x1b[31m[✗2 unsupported]\x1b[0m" in coloured
    assert "\x1b[2J" not in coloured


def test_show_says_what_the_evidence_is(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    result = sentence_mode_report(tiny)
    cited = show_item(result.folder.record(), "q2", color=False).splitlines()
    assert f"cited     {CITED_FOR_Q2}  [cited]" in cited
    assert (
        "evidence  cited sentence 7 in backup/restore (real by construction; whether it supports "
        "the verdict is the reviewer's call)"
    ) in cited
    assert f"1. 設定を開きます。2. バックアップを選びます。⟦{CITED_FOR_Q2}⟧" in cited
    # A quote: as before, and said to be verified (the scripted judge quotes exactly).
    quoted = show_item(result.folder.record(), "q3", color=False).splitlines()
    assert "quote     初回のみ7日間の無料体験があります。  [exact]" in quoted
    assert "evidence  quote (verified: exact)" in quoted
    assert "sentences" not in quoted and not any("✗" in line for line in quoted)
