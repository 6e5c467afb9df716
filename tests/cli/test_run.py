"""``judge.cli.run``: ``judge run`` says which judge first and saves its folder, refuses a
broken prompt before judging, exits 3 naming the command when Ollama does not answer; a
failing ``judge nightly`` still starts with its verdict; the help of both names the gate rule."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.cli.helpers import help_of, toml_of
from tests.conftest import QUESTIONS

Tiny = Callable[..., Config]


def test_run_with_the_lexical_judge_says_which_judge_first_and_saves(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert main(["--config", toml_of(config), "run", "--backend", "lexical"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "judge: lexical · lexical-v6"
    assert out[1].strip().startswith("(a model-free baseline scoring token overlap; its quote")
    assert out[2].strip() == "(backend = lexical)"
    assert any(line.startswith("judged 4 answers") and "(0 from the cache)" in line for line in out)
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    assert sorted(p.name for p in folder.iterdir()) == [
        "chunks.jsonl",
        "items.jsonl",
        "manifest.json",
        "marks.json",
        "report.json",
        "report.md",
        "review.html",
        "run.jsonl",
        "values.json",
        "verdicts.csv",
        "verdicts.jsonl",
    ]
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert next(iter(manifest)) == "format_version"
    assert manifest["judge"]["backend"] == "lexical"
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["tables"]["judge"]["rows"][-1]["type"] == "all"
    assert len((folder / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()) == 4
    assert (
        out[-1]
        == "gate: no compatible earlier run or baseline for retrieval and judge: nothing compared"
    )
    # Second run: everything from the cache.
    assert main(["--config", toml_of(config), "run", "--backend", "lexical"]) == 0
    assert "(4 from the cache)" in capsys.readouterr().out
    assert main(["--config", toml_of(config), "cache", "stats"]) == 0
    stats = capsys.readouterr().out
    assert "1 judge configuration(s)" in stats and "4 replies" in stats


def test_run_with_a_broken_prompt_fails_before_judging(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "bad.md"
    prompt.write_text("$question $answer", encoding="utf-8")
    code = main(
        ["--config", toml_of(tiny()), "run", "--backend", "lexical", "--prompt", str(prompt)]
    )
    assert code == 2
    assert capsys.readouterr().err.strip() == f"error: {prompt}: missing placeholder $context"


def test_unreachable_ollama_exits_3_with_the_command_to_run(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(extra_toml="")
    toml = Path(toml_of(config))
    toml.write_text(
        toml.read_text(encoding="utf-8") + '\n[judge.ollama]\nhost = "http://127.0.0.1:9"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "run", "--backend", "ollama"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: Ollama not reachable at http://127.0.0.1:9")
    assert "'ollama serve'" in err


def test_a_failing_nightly_still_starts_with_its_verdict(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["type"] = "trivia"
    questions[1]["type"] = "trivia"
    assert main(["--config", toml_of(tiny(questions=questions)), "nightly"]) == 2
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()
    assert line.startswith("nightly: FAILED (exit 2): ")
    assert line.endswith("is not one of factual, procedural, negative, out_of_scope (and 1 more)")
    assert "questions.jsonl:2: type: 'trivia'" in captured.err


def test_the_help_of_run_and_nightly_names_the_current_gate_rule() -> None:
    from tests.test_docs import GATE_TERMS, OLD_GATE

    for command in ("run", "nightly"):
        text = help_of(command)
        assert [term for term in GATE_TERMS if term not in text] == [], command
        assert OLD_GATE.search(text) is None, command  # the previous bootstrap rule
    assert "--fail-on-regression exit 1 when a per-type metric regressed" in help_of("run")
