"""The rows of a table file, whatever it is saved as: JSONL, a JSON array, CSV or Parquet. Each
row keeps where it is (``FILE:LINE``, or the item or row number), so every problem found in it
later is located."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from judge.errors import InputError
from judge.formatting import csv_field_limit
from judge.io.jsonl import MAX_RECORD_MB, read_jsonl
from judge.io.state import StateFile, load_json_document
from judge.io.text import DEFAULT_MAX_FILE_MB, check_readable, read_text


class Row(NamedTuple):
    """One row of a table file: where it is, its values, and whether they are all text (CSV)."""

    where: str
    values: dict[str, Any]
    text_cells: bool


#: What the JSON-array reader calls the file in its messages.
_JSON_ARRAY = StateFile(
    what="JSON file",
    remedy="save it again with the tool that wrote it (a JSON array of objects, one per row)",
)


def table_rows(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> list[Row]:
    """The rows of a table file, by its suffix: ``.jsonl``, ``.json`` (an array of objects, or
    JSONL written under that name), ``.csv``, ``.parquet``."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_rows(path, max_mb)
    if suffix == ".parquet":
        return _parquet_rows(path, max_mb)
    if suffix == ".json":
        text = read_text(path, max_mb)
        if text.lstrip().startswith("["):
            return _json_array_rows(path, text, max_mb)
    elif suffix != ".jsonl":
        raise InputError(
            [
                f"{path}: not a file this reader knows by its name; give a .jsonl, .json, .csv "
                "or .parquet file"
            ]
        )
    return [Row(f"{path}:{line.number}", line.value, False) for line in read_jsonl(path, max_mb)]


def _json_array_rows(path: Path, text: str, max_mb: float) -> list[Row]:
    value = load_json_document(path, _JSON_ARRAY._replace(max_mb=max_mb))
    if not isinstance(value, list):
        raise InputError([f"{path}: expected a JSON array of objects, got {type(value).__name__}"])
    if not value:
        raise InputError([f"{path}: no records (the array is empty)"])
    lines = _element_lines(text)
    rows: list[Row] = []
    problems: list[str] = []
    for index, item in enumerate(value):
        where = f"{path}:{lines[index]}" if len(lines) == len(value) else f"{path}: item {index}"
        if isinstance(item, dict):
            rows.append(Row(where, item, False))
        else:
            problems.append(f"{where}: expected a JSON object, got {type(item).__name__}")
    if problems:
        raise InputError(problems)
    return rows


def _element_lines(text: str) -> list[int]:
    """The line each element of a top-level JSON array starts on ([] when it cannot tell):
    Python's JSON reader gives no positions, so the array is walked element by element."""
    decoder = json.JSONDecoder()
    space = re.compile(r"[ \t\n\r]*")

    def skip(index: int) -> int:
        match = space.match(text, index)
        return match.end() if match else index

    lines: list[int] = []
    try:
        index = skip(0)
        if text[index] != "[":
            return []
        index, line, counted = skip(index + 1), 1, 0
        while text[index] != "]":
            line += text.count("\n", counted, index)
            counted = index
            lines.append(line)
            index = skip(decoder.raw_decode(text, index)[1])
            if text[index] == ",":
                index = skip(index + 1)
    except (ValueError, IndexError, RecursionError):
        return []
    return lines


def _csv_rows(path: Path, max_mb: float) -> list[Row]:
    text = read_text(path, max_mb)
    rows: list[Row] = []
    problems: list[str] = []
    with csv_field_limit(MAX_RECORD_MB * 1024 * 1024):
        reader = csv.DictReader(io.StringIO(text, newline=""))
        try:
            header = reader.fieldnames or []
        except csv.Error as exc:
            raise InputError([f"{path}:{reader.line_num}: not valid CSV ({exc})"]) from None
        if not header:
            raise InputError([f"{path}: no records (the file is empty)"])
        seen: set[str] = set()
        for name in header:
            if name in seen:
                problems.append(f"{path}:1: column '{name}' appears twice in the header")
            seen.add(name)
        while True:
            start = reader.line_num + 1
            try:
                values = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                problems.append(f"{path}:{start}: not valid CSV ({exc}); fix the quoting")
                break
            if None in values:
                problems.append(
                    f"{path}:{start}: {len(header) + len(values[None])} cells, but the header "
                    f"has {len(header)} columns; quote the cells that hold commas"
                )
                continue
            rows.append(Row(f"{path}:{start}", {k: v for k, v in values.items()}, True))
    if problems:
        raise InputError(problems)
    if not rows:
        raise InputError([f"{path}: no records (only a header)"])
    return rows


def _parquet_rows(path: Path, max_mb: float) -> list[Row]:
    """Parquet read by record batches through pyarrow (else whole through pandas and
    fastparquet; the harness depends on neither, so without both the file is refused in one
    line). A Parquet file is compressed, so a file of kilobytes can hold gigabytes of text: the
    text read so far is counted as rows come in (``_TextBudget``), and the read stops at the
    first row that takes it over the configured limit, before the rest is decoded."""
    check_readable(path, max_mb)
    budget = _TextBudget(path, max_mb)
    rows: list[Row] = []
    try:
        for record in _parquet_records(path):
            values = {str(k): _plain(v) for k, v in record.items()}
            budget.take(values, len(rows) + 1)
            rows.append(Row(f"{path}: row {len(rows) + 1}", values, False))
    except ImportError:
        raise InputError(
            [
                f"{path}: reading Parquet needs pyarrow (or fastparquet), which is not "
                "installed here; install it into judge's environment (pip install pyarrow), "
                "or save the dataset as JSONL or CSV (Ragas: EvaluationDataset.to_jsonl)"
            ]
        ) from None
    except (
        OSError,
        ValueError,
    ) as exc:  # pyarrow's errors are OSError or ValueError (ArrowInvalid)
        raise InputError([f"{path}: not a Parquet file this reader can open ({exc})"]) from None
    if not rows:
        raise InputError([f"{path}: no records (the file has no rows)"])
    return rows


def _parquet_records(path: Path) -> Iterator[dict[Any, Any]]:
    """A Parquet file's rows as dicts: ``_PARQUET_BATCH`` at a time through pyarrow, or all at
    once through pandas (fastparquet) where pyarrow is not installed; ``ImportError`` without
    either."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        import pandas as pd

        yield from pd.read_parquet(path).to_dict("records")
        return
    for batch in pq.ParquetFile(path).iter_batches(batch_size=_PARQUET_BATCH):
        yield from batch.to_pylist()


#: Rows decoded at a time from a Parquet file: the most text held beyond the limit is this
#: many rows' worth.
_PARQUET_BATCH = 16


class _TextBudget:
    """The text of a compressed table's rows, counted as they are read, against the limit of
    the files an import writes (``data.max_file_mb``). A text cell (a question, an answer, a
    reference) goes into a file once per row; a list's items (the retrieved and relevant
    texts) into the corpus once per distinct text. So when one column's texts, or the distinct
    list items, are over the limit, a file the import would write is too: refused at that row,
    naming the input and the configured limit, long before the whole file is in memory."""

    def __init__(self, path: Path, max_mb: float) -> None:
        self.path = path
        self.limit = max_mb * 1024 * 1024
        self.max_mb = max_mb
        self.columns: dict[str, int] = {}
        self.seen: set[int] = set()
        self.listed = 0

    def take(self, values: dict[str, Any], row: int) -> None:
        for name, value in values.items():
            if isinstance(value, str):
                self.columns[name] = self.columns.get(name, 0) + len(value)
                if self.columns[name] > self.limit:
                    self._refuse(row, f"column '{name}'")
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, str) and hash(item) not in self.seen:
                        self.seen.add(hash(item))
                        self.listed += len(item)
                if self.listed > self.limit:
                    self._refuse(row, "the distinct texts of its list columns")

    def _refuse(self, row: int, what: str) -> None:
        raise InputError(
            [
                f"{self.path}: row {row}: {what} already holds more than {self.max_mb:g} MB of "
                f"text, so a file the import writes would be over the {self.max_mb:g} MB limit "
                "(data.max_file_mb); nothing was written: raise data.max_file_mb in judge.toml "
                "or import a smaller file (a Parquet file is "
                "compressed: its text can be far larger than the file)"
            ]
        )


def _plain(value: Any) -> Any:
    """A Parquet cell as JSON would hold it: arrays as lists, missing values as None."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
