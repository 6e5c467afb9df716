"""The reviewer's confirmations file (``judge golden accept``): ``missing-labels.csv`` with its
``confirmed`` column filled in, or a JSONL file of the same fields, read into decided rows,
a count of the undecided ones, and every located problem.

The reviewer's words are read leniently, the way spreadsheets are filled in: ``yes``, ``y``,
``true``, ``1``, ``x``, ``✓`` (and ``✔``) are yes; ``no``, ``n``, ``false``, ``0`` are no;
case and full-width forms do not matter (NFKC); an empty cell is "not decided" and skipped.
Anything else is an error, never a guess: ``×`` means no to a Japanese reviewer and yes to the
``x`` convention, so it is refused with the accepted words. A JSONL file (``.jsonl``, for
scripts) has the same fields; its ``confirmed`` is also ``true``, ``false`` or ``null``.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from judge.errors import InputError
from judge.formatting import csv_field_limit, from_spreadsheet_text
from judge.io.jsonl import MAX_RECORD_MB, read_jsonl
from judge.io.text import DEFAULT_MAX_FILE_MB, Id, StrictBool, StrictInt, StrictRecord, read_text
from judge.io.validation import parse_records

#: What a reviewer may write in ``confirmed`` for yes and for no (after NFKC and case-folding).
CONFIRMED_YES = frozenset({"yes", "y", "true", "1", "x", "✓", "✔"})
CONFIRMED_NO = frozenset({"no", "n", "false", "0"})
#: The columns ``judge golden accept`` needs; the others of ``missing-labels.csv`` (type,
#: rank, grade, reason, question, chunk_text) are there for the reviewer and are not read.
CONFIRMATION_COLUMNS = ("question_id", "chunk_id", "confirmed")

_ACCEPTED_WORDS = "yes (y, true, 1, x, ✓), no (n, false, 0), or leave it empty to decide later"


class Confirmation(NamedTuple):
    """One decided row: is ``chunk_id`` relevant to ``question_id``, and where it was said."""

    question_id: str
    chunk_id: str
    relevant: bool
    where: str
    """``FILE:LINE`` of the row, for messages."""


class Confirmations(NamedTuple):
    """A confirmations file, read and validated row by row."""

    path: Path
    decided: tuple[Confirmation, ...]
    undecided: int
    """Rows whose ``confirmed`` is empty: skipped, counted so the summary can say so."""
    problems: tuple[str, ...]
    """Every bad row (``FILE:LINE: ...``): ``plan_label_edit`` raises them together with the
    conflicts with the golden set, so that one run reports everything to fix."""


class ConfirmationRecord(StrictRecord):
    """One line of a confirmations JSONL file: the fields of ``missing-labels.csv``."""

    question_id: Id
    chunk_id: Id
    confirmed: StrictBool | str | None = None
    """true or false, one of the words a spreadsheet takes, or null / "" (not decided)."""
    type: str | None = None
    rank: StrictInt | None = None
    grade: StrictInt | None = None
    reason: str | None = None
    question: str | None = None
    chunk_text: str | None = None


def confirmed_value(text: str) -> bool | None:
    """The reviewer's decision in a ``confirmed`` cell: True, False, None (empty: not decided).
    Raises ``ValueError`` for anything else."""
    word = unicodedata.normalize("NFKC", text).strip().casefold()
    if not word:
        return None
    if word in CONFIRMED_YES:
        return True
    if word in CONFIRMED_NO:
        return False
    raise ValueError(f"confirmed: {json.dumps(text.strip(), ensure_ascii=False)} is not a decision")


def _decision(
    where: str, qid: str, chunk: str, value: bool | str | None, problems: list[str]
) -> Confirmation | None:
    """The row as a ``Confirmation`` (None: not decided, or bad: then its problems are added)."""
    if isinstance(value, bool):
        relevant: bool | None = value
    else:
        try:
            relevant = confirmed_value(value or "")
        except ValueError as exc:
            problems.append(f"{where}: {exc}; write {_ACCEPTED_WORDS}")
            return None
    if relevant is None:
        return None
    missing = [name for name, cell in (("question_id", qid), ("chunk_id", chunk)) if not cell]
    if missing:
        problems.append(
            f"{where}: {' and '.join(missing)} empty; copy the row from the report's "
            "missing-labels.csv"
        )
        return None
    return Confirmation(qid, chunk, relevant, where)


def _csv_rows(path: Path, text: str) -> list[tuple[str, dict[str, str]]]:
    """Each data row of a CSV text with its location (``FILE:LINE``, and the spreadsheet row
    when a cell spanning lines makes the two differ); the cells stripped, without the quote
    ``judge.formatting.bom_csv`` puts before formula-like text."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        # A chunk's text in missing-labels.csv can pass the csv module's 128 KiB default.
        with csv_field_limit(MAX_RECORD_MB * 1024 * 1024):
            return list(_located_rows(path, reader))
    except csv.Error as exc:  # a cell over one record's limit, a stray quote
        raise InputError(
            [f"{path}:{reader.line_num}: not readable as CSV ({exc}); save the file again as CSV"]
        ) from None


def _located_rows(path: Path, reader: Any) -> Iterator[tuple[str, dict[str, str]]]:
    header = next(reader, None)
    names = [name.strip() for name in header or []]
    missing = [name for name in CONFIRMATION_COLUMNS if name not in names]
    if missing:
        hint = ""
        if header is not None and len(header) == 1 and ";" in header[0]:
            hint = " (its cells are separated by ';': save it as CSV with commas)"
        raise InputError(
            [
                f"{path}:1: missing column(s) {', '.join(missing)}{hint}; use the "
                "missing-labels.csv of a report folder, with its header row"
            ]
        )
    ended = reader.line_num
    for row_number, cells in enumerate(reader, start=2):
        line, ended = ended + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue  # a blank row (spreadsheets add them at the end): not a decision
        where = f"{path}:{line}" + (f" (row {row_number})" if row_number != line else "")
        values = dict(zip(names, cells, strict=False))
        yield (
            where,
            {
                name: from_spreadsheet_text(values.get(name, "").strip())
                for name in CONFIRMATION_COLUMNS
            },
        )


def read_confirmations(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> Confirmations:
    """The rows of a confirmations file (CSV, or JSONL when it ends in ``.jsonl``): the
    decided ones, and every bad one in ``problems``. A file that cannot be read as one at all
    (missing, not UTF-8, no header row with the columns) is an ``InputError`` at once. A CSV
    may start with a BOM (Excel saves one)."""
    problems: list[str] = []
    decided: list[Confirmation] = []
    undecided = 0
    if path.suffix.lower() == ".jsonl":
        rows: Iterable[tuple[str, str, str, bool | str | None]] = ()
        if read_text(path, max_mb).strip():  # an empty file: no possible missing labels
            records = parse_records(path, read_jsonl(path, max_mb), ConfirmationRecord, problems)
            rows = [
                (f"{path}:{line}", r.question_id, r.chunk_id, r.confirmed) for line, r in records
            ]
    else:
        rows = [
            (where, cells["question_id"], cells["chunk_id"], cells["confirmed"])
            for where, cells in _csv_rows(path, read_text(path, max_mb))
        ]
    for where, qid, chunk, value in rows:
        bad = len(problems)
        confirmation = _decision(where, qid, chunk, value, problems)
        if confirmation is not None:
            decided.append(confirmation)
        elif len(problems) == bad:
            undecided += 1
    return Confirmations(path, tuple(decided), undecided, tuple(problems))
