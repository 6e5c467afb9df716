"""A table file's rows (``judge.inputs.foreign.table_files``): a CSV row located on its own line,
Parquet read (or refused in one line without an engine), an unknown file kind refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.pipeline.imports import import_foreign
from tests.inputs.foreign.samples import DATA


def test_a_csv_row_after_a_cell_of_several_lines_is_located_on_its_own_line(tmp_path: Path) -> None:
    source = tmp_path / "dataset.csv"
    source.write_text(
        "user_input,retrieved_contexts,response,reference\n"
        '"Q one","[\'first line\\nsecond\']",A one,R\n'  # a Python-escaped newline: one line
        '"Q two","[\'a chunk\']","an answer\nover two lines",R\n'  # a newline in a cell
        '"Q three","not a list",A three,R\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", source, tmp_path / "out")
    assert caught.value.problems == [
        f"{source}:5: retrieved_contexts: must be a list written as ['first', 'second'] "
        '(Ragas\' to_csv) or as a JSON array, not "not a list"'
    ]


def test_parquet_without_an_engine_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pandas as pd

    def no_engine(*_: object, **__: object) -> None:
        # What pandas raises when neither pyarrow nor fastparquet is installed (pyarrow is,
        # here: the Ray extra brings it), so the path runs on every machine.
        raise ImportError("Unable to find a usable engine; tried using: 'pyarrow', 'fastparquet'.")

    monkeypatch.setattr(pd, "read_parquet", no_engine)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # `import` raises ImportError
    source = tmp_path / "dataset.parquet"
    source.write_bytes(b"PAR1")
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", source, tmp_path / "a")
    assert caught.value.problems == [
        f"{source}: reading Parquet needs pyarrow (or fastparquet), which is not installed "
        "here; install it into judge's environment (pip install pyarrow), or save the dataset "
        "as JSONL or CSV (Ragas: EvaluationDataset.to_jsonl)"
    ]


def test_parquet_is_read(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pandas as pd

    rows = [
        json.loads(line) for line in (DATA / "ragas.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    source = tmp_path / "dataset.parquet"
    pd.DataFrame(rows).to_parquet(source)
    from_parquet = import_foreign("ragas", source, tmp_path / "a")
    from_jsonl = import_foreign("ragas", DATA / "ragas.jsonl", tmp_path / "b")
    assert from_parquet.questions.read_bytes() == from_jsonl.questions.read_bytes()


def test_an_unknown_file_kind_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "dataset.xlsx"
    source.write_bytes(b"")
    with pytest.raises(InputError, match=r"give a \.jsonl, \.json, \.csv or \.parquet file"):
        import_foreign("ragas", source, tmp_path / "a")
