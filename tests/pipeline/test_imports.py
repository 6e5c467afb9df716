"""``judge import``, the wiring: every sample imports into files ``judge check`` accepts and the
lexical judge judges; a re-import writes the same bytes; existing files are refused unless
``replace``. What the readers and the conversion decide is tested in tests/inputs/foreign/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.errors import InputError
from judge.pipeline.check import check
from judge.pipeline.evaluate import evaluate
from judge.pipeline.imports import import_foreign
from tests.inputs.foreign.samples import DATA, SAMPLES, config_for, lines


@pytest.mark.parametrize(("tool", "name", "per_type", "out_of_scope", "chunks"), SAMPLES)
def test_each_sample_imports_into_files_check_accepts_and_the_lexical_judge_judges(
    tmp_path: Path,
    tool: Any,
    name: str,
    per_type: dict[str, int],
    out_of_scope: str | None,
    chunks: int,
) -> None:
    imported = import_foreign(tool, DATA / name, tmp_path / "imported", relative_to=tmp_path)
    assert imported.per_type == per_type
    assert imported.chunks == chunks
    assert imported.data_lines[:4] == [
        "[data]",
        'questions = "imported/questions.jsonl"',
        'corpus = "imported/corpus.jsonl"',
        'run = "imported/run.jsonl"',
    ]
    config = config_for(imported, tmp_path)
    checked = check(config)
    assert sum(checked.per_type.values()) == 4 if tool != "otel" else 3
    questions = lines(imported.questions)
    oos = [q for q in questions if not q["answerable"]]
    if out_of_scope is None:
        assert oos == []
    else:
        assert [q["question"] for q in oos] == [out_of_scope]
        assert oos[0]["type"] == "out_of_scope" and oos[0]["relevant_chunks"] == []
    result = evaluate(config, backend="lexical")
    statuses = [row.status for row in result.report.questions]
    assert statuses == ["ok"] * len(questions)


@pytest.mark.parametrize(("tool", "name"), [(s[0], s[1]) for s in SAMPLES])
def test_a_reimport_writes_the_same_files_byte_for_byte(
    tmp_path: Path, tool: Any, name: str
) -> None:
    first = import_foreign(tool, DATA / name, tmp_path / "a")
    before = {p: p.read_bytes() for p in (first.questions, first.corpus, first.run)}
    again = import_foreign(tool, DATA / name, tmp_path / "a", replace=True)
    assert {p: p.read_bytes() for p in (again.questions, again.corpus, again.run)} == before
    elsewhere = import_foreign(tool, DATA / name, tmp_path / "b")
    assert elsewhere.questions.read_bytes() == before[first.questions]


def test_existing_files_are_refused_unless_replace_and_left_as_they_were(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.jsonl").write_text("mine\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", DATA / "ragas.jsonl", out)
    assert caught.value.problems == [
        f"{out / 'run.jsonl'}: exists; give --replace to overwrite it, or another --out"
    ]
    assert (out / "run.jsonl").read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in out.iterdir()) == ["run.jsonl"]
    file = tmp_path / "a-file"
    file.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="not a folder"):
        import_foreign("ragas", DATA / "ragas.jsonl", file)


def test_the_folder_an_import_prints_checks_and_runs_with_only_its_data_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 33: a judge.toml of the [data] lines `judge import` prints, in a folder outside
    the checkout, with no prompt line and no prompts/ beside it."""
    from judge.cli import main

    tool, name = SAMPLES[0][0], SAMPLES[0][1]
    team = tmp_path / "team"
    team.mkdir()
    imported = import_foreign(tool, DATA / name, team / "imported", relative_to=team)
    (team / "judge.toml").write_text("\n".join(imported.data_lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(team)
    assert main(["check", "--no-judge"]) == 0
    assert main(["check", "--backend", "lexical"]) == 0
    assert main(["run", "--backend", "lexical"]) == 0
    assert (team / "reports" / "latest").is_file()
