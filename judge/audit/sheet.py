"""The labelling sheet: a blind CSV for a spreadsheet, and importing it back into the labels file.

The sheet shows no judge scores or quotes. Import validates the whole sheet first (every bad row
reported at once), survives a spreadsheet round trip (CRLF, a leading quote on formula-like
cells), is idempotent, and needs ``--replace`` to overwrite a conflicting label.

For a run that judged correctness the sheet has two more columns: ``reference_answer`` (what
the answer is scored against) and ``correctness`` (0-2, after ``relevance``), filled for the
questions the judge was asked about (those with a correctness verdict); the cell may stay
empty (the label then carries the answer's two axes only). A sheet without the column imports
as before. A label that adds correctness to an earlier label with the same scores and note is
an update, not a conflict.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from judge.errors import InputError
from judge.formatting import bom_csv, csv_field_limit, from_spreadsheet_text
from judge.hashing import text_sha256
from judge.inputs.golden import GoldenQuestion
from judge.inputs.labels import HumanLabel, given_text_problems, load_labels_if_any
from judge.io.jsonl import MAX_RECORD_MB, write_jsonl
from judge.io.lock import locked
from judge.io.text import read_text
from judge.io.write import write_atomic
from judge.results.item_record import ItemRecord

SHEET_COLUMNS = [
    "question_id",
    "type",
    "question",
    "context",
    "answer",
    "answer_sha256",
    "faithfulness",
    "relevance",
    "labeller",
    "note",
]
#: The sheet of a run that judged correctness: the reference answer to read, and the score.
CORRECTNESS_COLUMNS = ["reference_answer", "correctness"]


def sheet_columns(with_correctness: bool) -> list[str]:
    """The sheet's columns: ``SHEET_COLUMNS``, with the reference answer after the answer and
    ``correctness`` after ``relevance`` when the run judged correctness."""
    if not with_correctness:
        return list(SHEET_COLUMNS)
    columns = list(SHEET_COLUMNS)
    columns.insert(columns.index("answer_sha256"), "reference_answer")
    columns.insert(columns.index("relevance") + 1, "correctness")
    return columns


def write_sheet(
    path: Path, items: Sequence[ItemRecord], correctness: Collection[str] | None = None
) -> None:
    """A blind labelling sheet: no judge scores or quotes. UTF-8 with BOM (Excel reads it);
    ``bom_csv`` quotes every formula-like cell, ``parse_sheet`` takes the quote off again.

    ``correctness``: the question ids the judge gave a correctness verdict (None or empty: the
    run did not judge correctness, and the sheet has no such column); their reference answer
    is shown, the other rows' correctness cells say there is nothing to score."""
    columns = sheet_columns(bool(correctness))
    rows = []
    for item in items:
        context = "\n\n".join(f"[{c.rank}] {c.chunk_id}\n{c.text}" for c in item.context)
        cells = {
            "question_id": item.question_id,
            "type": item.type,
            "question": item.question,
            "context": context,
            "answer": item.answer,
            "answer_sha256": text_sha256(item.answer),
        }
        if correctness:
            asked = item.question_id in correctness
            cells["reference_answer"] = (item.reference_answer or "") if asked else NOT_ASKED
        rows.append([cells.get(column, "") for column in columns])
    write_atomic(path, bom_csv(columns, rows))


#: The reference-answer cell of a row whose correctness was not judged (no reference answer):
#: its correctness cell stays empty.
NOT_ASKED = "(no reference answer: leave correctness empty)"


def _same_answer(cell: str, answer_hash: str) -> bool:
    """Whether the sheet's answer cell still holds the labelled answer (after a spreadsheet
    round trip: a leading quote we added, or line breaks saved as CRLF)."""
    candidates = {cell, cell.removeprefix("'"), cell.replace("\r\n", "\n")}
    candidates.add(cell.removeprefix("'").replace("\r\n", "\n"))
    return any(text_sha256(c) == answer_hash for c in candidates)


def _cells(row: dict[str, str | None]) -> Callable[[str], str]:
    """A row's cells by column, as the sheet was written: without the quote ``bom_csv`` put
    before formula-like text (an id ``=x`` comes back from a spreadsheet as ``'=x``)."""
    return lambda name: from_spreadsheet_text((row.get(name) or "").strip())


class ImportResult(NamedTuple):
    added: int
    replaced: int
    unchanged: int
    blank: int
    retired: int = 0
    """Labels of questions no longer golden, kept in the file untouched."""


def parse_sheet(
    path: Path, questions: dict[str, GoldenQuestion], default_labeller: str | None
) -> tuple[list[HumanLabel], int]:
    """Labels from a filled sheet; every bad row reported at once. Returns (labels, blank rows)."""
    rows = _sheet_rows(path)
    labels, problems, blank = [], [], 0
    now = datetime.now(UTC)
    for number, row in enumerate(rows, start=2):
        cell = _cells(row)
        # Spreadsheet row numbers (the header is row 1); physical lines would not match them,
        # since context cells span many lines.
        where = f"{path}: row {number} ({cell('question_id') or '?'})"
        if not cell("faithfulness") and not cell("relevance") and not cell("correctness"):
            blank += 1
            continue
        row_problems = _row_problems(row, questions, default_labeller)
        if row_problems:
            problems += [f"{where}: {p}" for p in row_problems]
            continue
        labels.append(
            HumanLabel(
                question_id=cell("question_id"),
                answer_sha256=cell("answer_sha256"),
                faithfulness=int(cell("faithfulness")),
                relevance=int(cell("relevance")),
                correctness=int(cell("correctness")) if cell("correctness") else None,
                labeller=str(cell("labeller") or default_labeller),
                note=cell("note"),
                labelled_at=now,
                source="sheet",
            )
        )
    if problems:
        raise InputError([*problems, "nothing was imported; fix the rows above and import again"])
    return labels, blank


def _sheet_rows(path: Path) -> list[dict[str, str | None]]:
    """The sheet's rows, read whole; a file the csv module cannot read, or one without the
    columns an import needs, is refused in one line."""
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[dict[str, str | None]] = []
    ended = 0  # the last line of the last row read: a row that cannot be read starts after it
    try:
        # An answer or a chunk in a sheet can pass the csv module's 128 KiB default: every
        # sheet the tool writes must import.
        with csv_field_limit(MAX_RECORD_MB * 1024 * 1024):
            fieldnames = reader.fieldnames or []
            ended = reader.line_num
            for row in reader:
                rows.append(row)
                ended = reader.line_num
    except csv.Error as exc:
        raise InputError(
            [f"{path}:{ended + 1}: not readable as CSV ({exc}); save the sheet again as CSV"]
        ) from None
    missing = [
        c
        for c in ("question_id", "answer_sha256", "faithfulness", "relevance")
        if c not in fieldnames
    ]
    if missing:
        raise InputError(
            [f"{path}: missing column(s) {', '.join(missing)}; start from 'judge audit sample'"]
        )
    return rows


def _row_problems(
    row: dict[str, str | None], questions: dict[str, GoldenQuestion], default_labeller: str | None
) -> list[str]:
    """What is wrong with one filled row: an unknown question, a score that is not 0, 1 or 2,
    a damaged answer hash or an edited answer, no labeller, a note a label cannot hold."""
    cell = _cells(row)
    problems = []
    if cell("question_id") not in questions:
        problems.append(f"question_id '{cell('question_id')}' is not a golden id")
    for axis in ("faithfulness", "relevance"):
        if cell(axis) not in ("0", "1", "2"):
            problems.append(f"{axis} must be 0, 1 or 2, got '{cell(axis)}'")
    correct = cell("correctness")
    if correct and correct not in ("0", "1", "2"):
        problems.append(f"correctness must be 0, 1 or 2 (or empty), got '{correct}'")
    answer_hash = cell("answer_sha256")
    if len(answer_hash) != 64 or any(c not in "0123456789abcdef" for c in answer_hash):
        problems.append("answer_sha256 is damaged (copy the sheet's value unchanged)")
    elif (shown := row.get("answer")) is not None and not _same_answer(shown, answer_hash):
        problems.append("the answer text was edited; labels must be for the exact answer shown")
    labeller = cell("labeller") or default_labeller
    if not labeller:
        problems.append("labeller is empty (fill the column or pass --labeller NAME)")
    return problems + given_text_problems(labeller, cell("note"))


def merge_labels(
    existing: list[HumanLabel], new: list[HumanLabel], replace: bool
) -> tuple[list[HumanLabel], ImportResult, list[str]]:
    """Add new labels; an identical one is skipped, a conflicting one needs ``replace``."""
    merged = {(lab.question_id, lab.answer_sha256, lab.labeller): lab for lab in existing}
    added = replaced = unchanged = 0
    conflicts = []
    for label in new:
        key = (label.question_id, label.answer_sha256, label.labeller)
        old = merged.get(key)
        same = (
            (old.faithfulness, old.relevance, old.note)
            == (
                label.faithfulness,
                label.relevance,
                label.note,
            )
            if old is not None
            else False
        )
        if old is None:
            merged[key] = label
            added += 1
        elif same and label.correctness in (None, old.correctness):
            unchanged += 1
        elif same and old.correctness is None:
            # The same label with correctness added (a later sheet of a run that judged it).
            merged[key] = label
            replaced += 1
        elif replace:
            merged[key] = label
            replaced += 1
        else:
            conflicts.append(
                f"{label.question_id}: {label.labeller} already labelled this answer "
                f"{_conflict(old, label)}; pass --replace to overwrite"
            )
    return list(merged.values()), ImportResult(added, replaced, unchanged, 0), conflicts


def _conflict(old: HumanLabel, new: HumanLabel) -> str:
    """What differs between a stored label and an imported one: the scores, or (the same
    scores) only the comment, said so, with both comments (shown as identical scores alone,
    the conflict looked like none)."""
    if _scores(old) != _scores(new):
        return f"{_scores(old)}, the file says {_scores(new)}"
    return (
        f"{_scores(old)} with the comment {_comment(old.note)}; the file gives the same scores "
        f"with the comment {_comment(new.note)} (only the comment differs)"
    )


def _comment(note: str) -> str:
    """A comment quoted for a one-line message, cut past 60 characters; none said so."""
    if not note:
        return "(none)"
    one = " ".join(note.split())
    return f'"{one[:60]}…"' if len(one) > 60 else f'"{one}"'


def _scores(label: HumanLabel) -> str:
    """e.g. ``F2 R1`` (``F2 R1 C0`` for a label that carries correctness)."""
    text = f"F{label.faithfulness} R{label.relevance}"
    return text if label.correctness is None else f"{text} C{label.correctness}"


def import_sheet(
    sheet: Path,
    labels_path: Path,
    questions: dict[str, GoldenQuestion],
    labeller: str | None,
    replace: bool,
) -> ImportResult:
    """Validate the whole sheet, then write the labels file once (atomically).

    Labels of retired questions stay in the file: they are not counted, but not deleted.
    """
    new, blank = parse_sheet(sheet, questions, labeller)
    return store_labels(new, labels_path, questions, replace)._replace(blank=blank)


def store_labels(
    new: list[HumanLabel],
    labels_path: Path,
    questions: dict[str, GoldenQuestion],
    replace: bool,
) -> ImportResult:
    """Merge validated labels into the labels file and write it once (atomically), or raise
    with every conflict and write nothing. Shared by every import (sheet, review marks).

    The file is read, merged into and written back holding its lock (``judge.io.lock.locked``):
    two imports at once (two reviewers) both keep their labels, the second merging into what
    the first wrote; a ``judge audit label`` in progress holds it too. Labels of retired
    questions stay in the file: they are not counted, but not deleted.
    """
    with locked(labels_path):
        existing = load_labels_if_any(labels_path, questions)
        merged, result, conflicts = merge_labels(existing.current, new, replace)
        if conflicts:
            raise InputError([*conflicts, "nothing was imported"])
        if result.added or result.replaced:
            write_jsonl(labels_path, [*merged, *(label for _, label in existing.retired)])
    return result._replace(retired=len(existing.retired))
