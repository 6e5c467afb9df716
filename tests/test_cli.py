"""The command line: exit codes, one line per problem, files written."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import QUESTIONS, REPO

Tiny = Callable[..., Config]


def _toml(config: Config) -> str:
    assert config.source is not None
    return str(config.source)


def test_check_on_the_tiny_set(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", _toml(tiny()), "check"]) == 0
    out = capsys.readouterr().out
    assert "questions: 4 (1 factual, 1 procedural, 1 negative, 1 out_of_scope)" in out
    assert "corpus:    5 chunks in 3 documents" in out
    assert out.rstrip().endswith("ok")


def test_bad_input_prints_every_problem_on_its_own_line(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["type"] = "trivia"
    questions[1]["relevant_chunks"] = ["gone/chunk"]
    assert main(["--config", _toml(tiny(questions=questions)), "check"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: ") and err[0].endswith(
        "questions.jsonl:1: type: 'trivia' is not one of factual, procedural, negative, out_of_scope"
    )
    assert "questions.jsonl:2: relevant_chunks: not in the corpus: gone/chunk" in err[1]
    assert err[2] == "2 problems; nothing was evaluated"


def test_missing_config_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(tmp_path / "nope.toml"), "check"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {tmp_path / 'nope.toml'}: configuration file not found "
        "(copy judge.toml from the repo)"
    )


def test_retrieval_prints_and_writes_json(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "r.json"
    assert main(["--config", _toml(tiny()), "retrieval", "--json", str(out_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:4] == ["type", "n", "excluded", "recall@5"]
    payload = json.loads(out_path.read_text(encoding="utf-8"))
    assert payload["context_k"] == 5
    assert payload["table"]["weakest_type"] == "negative"
    assert payload["table"]["rows"][-1]["type"] == "all"
    assert payload["excluded"] == {"q4": "no relevant chunks (out of scope)"}


def test_trec_export_then_score_the_exported_run(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _toml(tiny())
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    assert (
        main(["--config", toml, "trec", "export", "--qrels", str(qrels), "--trec-out", str(run)])
        == 0
    )
    assert (
        main(
            [
                "--config",
                toml,
                "retrieval",
                "--trec-run",
                str(run),
                "--json",
                str(tmp_path / "a.json"),
            ]
        )
        == 0
    )
    assert main(["--config", toml, "retrieval", "--json", str(tmp_path / "b.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert a["table"] == b["table"]


def test_check_on_the_shipped_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(REPO / "judge.toml"), "check"]) == 0
    captured = capsys.readouterr()
    assert "questions: 30 (12 factual, 8 procedural, 5 negative, 5 out_of_scope)" in captured.out
    assert "labels:" in captured.out
    assert "warning" not in captured.err


def test_run_with_the_lexical_judge_says_which_judge_first_and_saves(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert main(["--config", _toml(config), "run", "--backend", "lexical"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "judge: lexical · lexical-v3"
    assert out[1].strip() == "(backend = lexical)"
    assert any(line.startswith("judged 4 answers") and "(0 from the cache)" in line for line in out)
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    assert sorted(p.name for p in folder.iterdir()) == [
        "items.jsonl",
        "manifest.json",
        "report.json",
        "report.md",
        "review.html",
        "run.jsonl",
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
    assert main(["--config", _toml(config), "run", "--backend", "lexical"]) == 0
    assert "(4 from the cache)" in capsys.readouterr().out
    assert main(["--config", _toml(config), "cache", "stats"]) == 0
    stats = capsys.readouterr().out
    assert "1 judge configuration(s)" in stats and "4 replies" in stats


def test_run_with_a_broken_prompt_fails_before_judging(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "bad.md"
    prompt.write_text("$question $answer", encoding="utf-8")
    code = main(["--config", _toml(tiny()), "run", "--backend", "lexical", "--prompt", str(prompt)])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"error: {prompt}: missing placeholder $context"


def test_unreachable_ollama_exits_3_with_the_command_to_run(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(extra_toml="")
    toml = Path(_toml(config))
    toml.write_text(
        toml.read_text(encoding="utf-8") + '\n[judge.ollama]\nhost = "http://127.0.0.1:9"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "run", "--backend", "ollama"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: Ollama not reachable at http://127.0.0.1:9")
    assert "'ollama serve'" in err
