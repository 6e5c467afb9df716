"""``judge.cli.imports``: ``judge import ragas|deepeval|otel`` on the command line: the [data]
lines it prints make a judge.toml that ``judge check`` accepts and ``judge run --backend
lexical`` judges; bad input exits 2 with located lines; existing files need --replace. (The
wiring itself is tested in tests/pipeline/test_imports.py; ``judge golden accept``, the group's
other command, end to end in tests/pipeline/test_golden.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.cli import main

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "foreign"


@pytest.mark.parametrize(
    ("tool", "name"),
    [("ragas", "ragas.jsonl"), ("deepeval", "deepeval.json"), ("otel", "otel.jsonl")],
)
def test_import_then_check_then_run(
    tool: str,
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # no judge.toml here: the defaults
    assert main(["import", tool, str(DATA / name), "--out", "imported"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("\n[data]\n") + 1 :].strip()
    assert table.splitlines()[:4] == [
        "[data]",
        'questions = "imported/questions.jsonl"',
        'corpus = "imported/corpus.jsonl"',
        'run = "imported/run.jsonl"',
    ]
    assert out.startswith("imported ")
    (tmp_path / "judge.toml").write_text(
        table
        + f'\n\n[judge]\ncache_path = "{tmp_path / "cache.sqlite3"}"\n'
        + f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
        + f'\n[reports]\ndir = "{tmp_path / "reports"}"\n',
        encoding="utf-8",
    )
    assert main(["check", "--no-judge"]) == 0
    assert main(["run", "--backend", "lexical"]) == 0
    capsys.readouterr()
    # again into the same folder: refused without --replace, the same files with it
    before = (tmp_path / "imported" / "run.jsonl").read_bytes()
    assert main(["import", tool, str(DATA / name), "--out", "imported"]) == 2
    assert "exists; give --replace to overwrite it" in capsys.readouterr().err
    assert main(["import", tool, str(DATA / name), "--out", "imported", "--replace"]) == 0
    assert (tmp_path / "imported" / "run.jsonl").read_bytes() == before


def test_bad_rows_exit_2_with_one_located_line_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["import", "ragas", str(DATA / "ragas-bad.jsonl")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[1] for line in err[:3]] == [
        f"{DATA / 'ragas-bad.jsonl'}:2",
        f"{DATA / 'ragas-bad.jsonl'}:3",
        f"{DATA / 'ragas-bad.jsonl'}:4",
    ]
    assert err[3] == "3 problems; nothing was evaluated"
    assert "Traceback" not in "\n".join(err)
    assert not (tmp_path / "imported").exists()


def test_a_configuration_gives_the_out_of_scope_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.toml").write_text(
        '[data]\nquestions = "q.jsonl"\ncorpus = "c.jsonl"\n'
        'question_types = ["factual", "unanswerable"]\nout_of_scope_types = ["unanswerable"]\n',
        encoding="utf-8",
    )
    code = main(["--config", "my.toml", "import", "deepeval", str(DATA / "deepeval.json")])
    assert code == 0
    out = capsys.readouterr().out
    assert "1 unanswerable" in out
    assert 'out_of_scope_types = ["unanswerable"]' in out
    assert main(["import", "ragas", str(DATA / "ragas.jsonl"), "--config", "missing.toml"]) == 2
