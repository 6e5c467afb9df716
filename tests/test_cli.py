"""The command line: exit codes, one line per problem, files written."""

import json
import re
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
    assert main(["--config", _toml(tiny()), "check", "--no-judge"]) == 0
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
    assert main(["--config", str(REPO / "judge.toml"), "check", "--no-judge"]) == 0
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
    assert out[0] == "judge: lexical · lexical-v5"
    assert out[1].strip().startswith("(a model-free baseline scoring token overlap; its quote")
    assert out[2].strip() == "(backend = lexical)"
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


# --- rough edges: version, option order, help, defaults, dry runs -----------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"judge {metadata.version('judge')}"


def test_config_goes_before_or_after_the_command(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _toml(tiny())
    assert main(["check", "--no-judge", "--config", toml]) == 0
    assert main(["--config", toml, "check", "--no-judge"]) == 0
    assert main(["cache", "stats", "--config", toml]) == 0
    assert main(["audit", "sample", "--n", "1", "--config", toml]) == 2  # no runs yet
    assert "no runs in" in capsys.readouterr().err


def test_every_option_has_help() -> None:
    import argparse

    from judge.cli import build_parser

    missing = []

    def visit(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    visit(sub, f"{path} {name}")
            elif not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    visit(build_parser(), "judge")
    assert missing == []


def _help_of(*command: str) -> str:
    """A command's help as argparse prints it, on one line."""
    import argparse

    from judge.cli import build_parser

    parser = build_parser()
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return " ".join(parser.format_help().split())


def test_the_help_of_run_and_nightly_names_the_current_gate_rule() -> None:
    from tests.test_docs import GATE_TERMS, OLD_GATE

    for command in ("run", "nightly"):
        text = _help_of(command)
        assert [term for term in GATE_TERMS if term not in text] == [], command
        assert OLD_GATE.search(text) is None, command  # the previous bootstrap rule
    assert "--fail-on-regression exit 1 when a per-type metric regressed" in _help_of("run")


def test_the_epilog_lists_every_exit_code_of_the_code() -> None:
    """Every ``EXIT_*`` of judge.errors, and 128 + each signal judge.signals handles."""
    import judge.errors
    from judge import signals

    codes = {v for k, v in vars(judge.errors).items() if k.startswith("EXIT_")}
    codes |= {128 + int(s) for s in signals.HANDLED}
    assert {0, 1, 2, 3, 130, 143} <= codes
    epilog = _help_of().split("exit codes:", 1)[1].strip()
    listed = {int(n) for n in re.findall(r"(?:^|, )(\d+) ", epilog)}
    assert listed == codes


def test_help_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom judge.cli import build_parser\nbuild_parser().format_help()\n"
        "print(sorted(m for m in ('pandas', 'pydantic', 'httpx', 'rich', 'ollama') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"


def test_trec_export_without_flags_writes_the_documented_defaults(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert main(["trec", "export", "--config", _toml(config)]) == 0
    qrels = config.reports.dir / "trec" / "qrels.txt"
    run = config.reports.dir / "trec" / "run.txt"
    # q1: 1 relevant chunk, q2: 2, q3: 1, q4 (out of scope): none
    assert len(qrels.read_text(encoding="utf-8").splitlines()) == 4
    assert run.read_text(encoding="utf-8").splitlines()[0] == "q1 Q0 pricing/plans 1 2 judge"
    out = capsys.readouterr().out
    assert f"wrote 4 qrels lines to {qrels}" in out


def test_cache_prune_dry_run_removes_nothing(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    config = tiny()
    toml = _toml(config)
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    capsys.readouterr()
    with sqlite3.connect(config.judge.cache_path) as db:  # last used long ago
        db.execute("UPDATE fingerprints SET last_used_at = '2000-01-01T00:00:00+00:00'")
    db.close()
    assert main(["--config", toml, "cache", "prune", "--days", "30", "--dry-run"]) == 0
    assert capsys.readouterr().out.strip() == (
        "would remove 1 judge configuration(s) unused for 30 days (4 replies)"
    )
    assert main(["--config", toml, "cache", "stats"]) == 0
    assert "4 replies" in capsys.readouterr().out
    assert main(["--config", toml, "cache", "prune", "--days", "30"]) == 0
    assert capsys.readouterr().out.startswith("removed 1 judge configuration(s)")
    assert main(["--config", toml, "cache", "stats"]) == 0
    assert "0 judge configuration(s)" in capsys.readouterr().out


def test_a_failing_nightly_still_starts_with_its_verdict(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["type"] = "trivia"
    questions[1]["type"] = "trivia"
    assert main(["--config", _toml(tiny(questions=questions)), "nightly"]) == 2
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()
    assert line.startswith("nightly: FAILED (exit 2): ")
    assert line.endswith("is not one of factual, procedural, negative, out_of_scope (and 1 more)")
    assert "questions.jsonl:2: type: 'trivia'" in captured.err


def test_check_fails_and_lists_every_question_the_adapter_failed(
    tiny_adapter: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny_adapter(
        "half_rag",
        "def answer(question):\n"
        "    if 'Windows' in question or 'iPad' in question:\n"
        "        raise TimeoutError('search took too long')\n"
        "    return {'retrieved': ['pricing/plans'], 'answer': 'x'}\n",
    )
    assert main(["--config", _toml(config), "check", "--no-judge"]) == 2
    err = capsys.readouterr().err.splitlines()
    failed = [line for line in err if line.startswith("error: ")]
    assert len(failed) == 2
    assert failed[0].endswith(
        "the adapter failed for question 'q3': TimeoutError: search took too long"
    )
    assert "'q4'" in failed[1]
    assert err[-1] == "2 problems; nothing was evaluated"


@pytest.mark.parametrize(
    ("returns", "said"),
    [
        pytest.param("None", "returned must be an object, not null", id="none"),
        pytest.param(
            "['pricing/plans']", 'returned must be an object, not ["pricing/plans"]', id="list"
        ),
        pytest.param(
            "{'retrieved': ['pricing/plans'], 'answer': '  '}",
            "returned answer: must not be empty",
            id="blank",
        ),
    ],
)
def test_check_fails_when_the_adapter_returns_no_usable_answer(
    tiny_adapter: Callable[..., Config],
    capsys: pytest.CaptureFixture[str],
    returns: str,
    said: str,
) -> None:
    config = tiny_adapter("odd_rag", f"def answer(question):\n    return {returns}\n")
    assert main(["--config", _toml(config), "check", "--no-judge"]) == 2
    err = capsys.readouterr().err
    assert "the adapter failed for question 'q1': ValueError: " in err
    assert said in err
    assert "Traceback" not in err


def test_stability_rejudges_a_sample_and_writes_its_report(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    args = ["--config", _toml(config), "stability", "--backend", "lexical", "--sample", "3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "injection_en" in out and "injection_ja" in out and "reversed" in out
    (report,) = (config.reports.dir / "stability").glob("*.md")
    text = report.read_text(encoding="utf-8")
    assert "injection_ja" in text
    assert f"report: {report}" in out
    # Everything judged went through the cache: a second check asks the judge nothing new.
    assert main(args) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "12 verdicts, 12 from the cache" in header, header


def test_the_backend_choices_are_the_configs() -> None:
    from typing import get_args

    from judge.cli import BACKENDS
    from judge.config import BackendName

    assert get_args(BackendName) == BACKENDS
