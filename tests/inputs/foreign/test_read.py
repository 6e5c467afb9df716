"""``judge.inputs.foreign.read``: a file is read by the reader of the tool named (the traces'
for OpenTelemetry, the tables' for Ragas and DeepEval); a file that cannot be read raises, a
bad row is a located problem in what is returned, every one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.errors import InputError
from judge.inputs.foreign.otel import read_otel
from judge.inputs.foreign.read import read_foreign
from judge.inputs.foreign.records import NO_COLUMNS, Columns
from judge.inputs.foreign.tables import TABLES, read_table
from judge.io.text import DEFAULT_MAX_FILE_MB
from tests.inputs.foreign.samples import DATA


def test_otel_is_read_as_traces() -> None:
    read = read_foreign("otel", DATA / "otel.jsonl")
    assert read == read_otel(DATA / "otel.jsonl", NO_COLUMNS, DEFAULT_MAX_FILE_MB)
    assert len(read.records) == 3 and read.problems == []
    assert read.records[0].where == f"{DATA / 'otel.jsonl'}:1: trace {'0' * 31}1"
    assert read.warnings == [
        f"{DATA / 'otel.jsonl'}: skipped 1 trace(s) without OpenInference spans"
    ]


# The first record's line: a JSON array's first object starts on the line after its "[".
@pytest.mark.parametrize(
    ("tool", "name", "line"), [("ragas", "ragas.jsonl", 1), ("deepeval", "deepeval.json", 2)]
)
def test_ragas_and_deepeval_are_read_as_tables(tool: str, name: str, line: int) -> None:
    read = read_foreign(tool, DATA / name)  # type: ignore[arg-type]
    assert read == read_table(TABLES[tool], DATA / name, NO_COLUMNS, DEFAULT_MAX_FILE_MB)
    assert len(read.records) == 4 and read.problems == []
    assert read.records[0].where == f"{DATA / name}:{line}"


def test_the_columns_named_reach_the_reader() -> None:
    assert read_foreign("ragas", DATA / "ragas.jsonl").problems == []
    with pytest.raises(InputError) as caught:
        read_foreign("ragas", DATA / "ragas.jsonl", Columns(type_column="nope"))
    assert str(caught.value) == (
        f"{DATA / 'ragas.jsonl'}: --type-column nope: no such column (the file has: reference, "
        "reference_contexts, response, retrieved_contexts, user_input)"
    )


def test_a_file_that_cannot_be_read_raises(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_foreign("ragas", tmp_path / "nope.jsonl")
    assert str(caught.value) == f"{tmp_path / 'nope.jsonl'}: file not found"


def test_a_bad_row_is_every_located_problem_and_no_record(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"user_input": 3}\n', encoding="utf-8")
    read = read_foreign("ragas", path)
    assert read.records == [] and read.warnings == []
    assert [p.split(": ")[:2] for p in read.problems] == [
        [f"{path}:1", "user_input"],
        [f"{path}:1", "response"],
        [f"{path}:1", "retrieved_contexts"],
    ]
    assert read.problems[0] == f"{path}:1: user_input: must be a string, not 3"
