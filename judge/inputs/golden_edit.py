"""Adding the chunk labels a person confirmed to the golden questions file (``judge golden accept``).

The chunk-relevance judge lists, per report folder, the retrieved chunks it graded relevant that
a labelled golden question does not list (``missing-labels.csv``). A reviewer fills its
``confirmed`` column with yes or no; this module reads that file back and adds the confirmed
chunks to the questions' ``relevant_chunks``.

The golden set is the one file every number of the harness is measured against, edited by
people, so the edit is conservative:

- **Validated first, whole.** Every bad row of the confirmations file is reported at once
  (``FILE:LINE: what; what to do``), and so is every conflict with the golden set; then
  nothing is written. A conflict is anything a person has to decide: a question or chunk id
  that does not exist, a yes on an unanswerable question (it has no relevant chunks by
  definition) or on an unlabelled one (one added chunk would make its recall look complete),
  the same chunk marked both yes and no, and a no for a chunk the golden set lists (the
  reviewer disagrees with an existing label: that is a hand edit, never a side effect).
- **Idempotent.** A yes for a chunk already listed is nothing to do; a second run of the same
  file changes no byte.
- **Only the changed lines change, and only where the chunk goes.** The new ids are inserted
  after the last listed one, in the separator style of that very line; every other byte of the
  file (other lines, blank lines, a BOM, CRLF endings, key order, escapes) stays as it is, so
  the edit is a one-token diff in review.
- **Never a file the loader would refuse.** The edited text is staged beside the file, loaded
  with ``judge.inputs.golden.load_questions``, and only then moved into place, and only if the
  file has not changed since it was read (an editor saving meanwhile would otherwise lose its
  edit).

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
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from judge.config import DataConfig
from judge.errors import InputError
from judge.formatting import csv_field_limit, from_spreadsheet_text
from judge.inputs.golden import Chunk, GoldenSet, load_questions
from judge.io.jsonl import MAX_RECORD_MB, read_jsonl
from judge.io.text import DEFAULT_MAX_FILE_MB, Id, StrictBool, StrictInt, StrictRecord, read_text
from judge.io.validation import parse_records
from judge.io.write import write_atomic

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


def _by_line(path: Path, problems: list[str]) -> list[str]:
    """``FILE:LINE ...`` problems of ``path`` in line order, whichever check found them."""
    located = re.compile(re.escape(f"{path}:") + r"(\d+)")

    def line_of(problem: str) -> int:
        match = located.match(problem)
        return int(match.group(1)) if match else 0

    return sorted(problems, key=line_of)


class LabelEdit(NamedTuple):
    """What accepting a confirmations file does to the questions file."""

    added: tuple[tuple[str, str], ...]
    """(question id, chunk id) appended to ``relevant_chunks``, in the file's order."""
    already: int
    """Confirmed chunks the golden set already lists: nothing to do."""
    marked_no: int
    """Chunks the reviewer said are not relevant (and the golden set does not list)."""
    undecided: int
    """Rows left empty."""
    text: str
    """The questions file's new text (the old text when nothing is added)."""
    lines: tuple[int, ...]
    """The lines of the questions file that change."""


# --- inserting chunk ids into one line, every other byte kept ---------------------------------

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class _Span(NamedTuple):
    key: str
    key_start: int
    value_start: int
    value_end: int


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _expect(text: str, at: int, char: str) -> int:
    if text[at : at + 1] != char:
        raise ValueError(f"expected {char!r} at column {at + 1}")
    return _skip(text, at + 1)


def _members(text: str, at: int) -> list[_Span]:
    """The members of the JSON object starting at ``at``, with where each key and value are."""
    at = _expect(text, _skip(text, at), "{")
    spans: list[_Span] = []
    if text[at : at + 1] == "}":
        return spans
    while True:
        key_start = at
        key, at = _DECODER.raw_decode(text, at)
        at = _expect(text, _skip(text, at), ":")
        value_start = at
        _, at = _DECODER.raw_decode(text, at)
        spans.append(_Span(str(key), key_start, value_start, at))
        at = _skip(text, at)
        if text[at : at + 1] == "}":
            return spans
        at = _expect(text, at, ",")


def _elements(text: str, at: int) -> list[tuple[int, int]]:
    """Where each element of the JSON array starting at ``at`` begins and ends."""
    at = _expect(text, at, "[")
    spans: list[tuple[int, int]] = []
    if text[at : at + 1] == "]":
        return spans
    while True:
        start = at
        _, at = _DECODER.raw_decode(text, at)
        spans.append((start, at))
        at = _skip(text, at)
        if text[at : at + 1] == "]":
            return spans
        at = _expect(text, at, ",")


def insert_chunks(line: str, chunk_ids: Iterable[str]) -> str:
    """``line`` (one question, as JSON) with ``chunk_ids`` appended to its ``relevant_chunks``,
    every other character kept: inserted after the last listed id, with the separator the
    array uses (or, for a one-id array, the one between the object's members), escaped as the
    line escapes. Raises ``ValueError`` when the line is not one this can edit in place."""
    members = _members(line, 0)
    found = [span for span in members if span.key == "relevant_chunks"]
    if not found:
        raise ValueError("no relevant_chunks field")
    elements = _elements(line, found[-1].value_start)  # JSON: the last of duplicate keys counts
    if not elements:
        raise ValueError("relevant_chunks is empty")
    if len(elements) > 1:
        separator = line[elements[0][1] : elements[1][0]]
    elif len(members) > 1:
        separator = line[members[0].value_end : members[1].key_start]
    else:
        separator = ", "
    escaped = line.isascii() and "\\u" in line  # written with ensure_ascii: keep it so
    end = elements[-1][1]
    inserted = "".join(separator + json.dumps(c, ensure_ascii=escaped) for c in chunk_ids)
    return line[:end] + inserted + line[end:]


def _edited_line(line: str, chunk_ids: list[str], where: str) -> str:
    """``insert_chunks``, checked: the same object, its keys in the same order, the ids added."""
    problem = f"{where}: the line cannot be edited in place"
    try:
        edited = insert_chunks(line, chunk_ids)
        before, after = json.loads(line), json.loads(edited)
    except ValueError as exc:
        raise InputError([f"{problem} ({exc}); add {', '.join(chunk_ids)} by hand"]) from None
    expected = {**before, "relevant_chunks": [*before["relevant_chunks"], *chunk_ids]}
    if after != expected or list(after) != list(before):  # pragma: no cover (a bug of ours)
        raise InputError([f"{problem}; add {', '.join(chunk_ids)} by hand"])
    return edited


# --- the edit ---------------------------------------------------------------------------------


def _question_lines(lines: list[str]) -> dict[str, int]:
    """Question id → its line index (0-based) in the questions file (already validated)."""
    found: dict[str, int] = {}
    for index, line in enumerate(lines):
        if line.strip():
            found[str(json.loads(line)["id"])] = index
    return found


def _said(relevant: bool) -> str:
    return "yes" if relevant else "no"


def plan_label_edit(
    confirmations: Confirmations, golden: GoldenSet, data: DataConfig, raw: bytes
) -> LabelEdit:
    """The edit of the questions file (``data.questions``, whose bytes are ``raw`` and whose
    validated content is ``golden``), or an ``InputError`` with every bad row and every
    conflict, in the confirmations file's line order, each pointing at the golden line to fix
    where there is one."""
    text = raw.decode("utf-8")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom) :].split("\n")  # the loader's lines: split on \n only
    line_of = _question_lines(lines)
    questions = golden.by_id()
    seen: dict[tuple[str, str], Confirmation] = {}
    added: dict[str, list[str]] = {}
    pairs: list[tuple[str, str]] = []
    already = marked_no = 0
    problems = list(confirmations.problems)
    for conf in confirmations.decided:
        qid, chunk, where = conf.question_id, conf.chunk_id, conf.where
        first = seen.setdefault((qid, chunk), conf)
        if first is not conf:
            if first.relevant != conf.relevant:
                problems.append(
                    f"{where}: {qid} {chunk} is marked {_said(conf.relevant)} here and "
                    f"{_said(first.relevant)} at {first.where}; keep one of the two"
                )
            continue
        question = questions.get(qid)
        if question is None:
            problems.append(
                f"{where}: question_id '{qid}' is not in {data.questions} (renamed or "
                "removed?); fix the row or clear its confirmed cell"
            )
            continue
        if chunk not in golden.corpus:
            problems.append(
                f"{where}: chunk_id '{chunk}' is not in the corpus {data.corpus} (re-chunked "
                "since the report?); fix the row or clear its confirmed cell"
            )
            continue
        golden_line = f"{data.questions}:{line_of[qid] + 1}"
        listed = question.relevant_chunks or ()
        if not conf.relevant:
            if chunk in listed:
                problems.append(
                    f"{where}: {qid} {chunk} is marked no, but {golden_line} lists it as "
                    "relevant; accepting never removes a label: if the reviewer is right, "
                    "remove it from relevant_chunks there by hand"
                )
            else:
                marked_no += 1
        elif not question.answerable:
            problems.append(
                f"{where}: {qid} {chunk} is marked yes, but {qid} is of type "
                f"'{question.type}' (answerable: false, {golden_line}): it has no relevant chunks by "
                "definition; if the corpus does answer it, fix its type and answerable there "
                "first, then run this again"
            )
        elif question.relevant_chunks is None:
            problems.append(
                f"{where}: {qid} {chunk} is marked yes, but {qid} has no chunk labels yet "
                f"(relevant_chunks: null, {golden_line}): one added chunk would make its recall "
                "look complete; label all its relevant chunks there by hand"
            )
        elif chunk in listed:
            already += 1
        else:
            added.setdefault(qid, []).append(chunk)
            pairs.append((qid, chunk))
    if problems:
        raise InputError(
            [
                *_by_line(confirmations.path, problems),
                f"nothing was written to {data.questions}; fix the rows above and run again",
            ]
        )
    for qid, chunk_ids in added.items():
        index = line_of[qid]
        lines[index] = _edited_line(lines[index], chunk_ids, f"{data.questions}:{index + 1}")
    return LabelEdit(
        added=tuple(pairs),
        already=already,
        marked_no=marked_no,
        undecided=confirmations.undecided,
        text=bom + "\n".join(lines),
        lines=tuple(sorted(line_of[qid] + 1 for qid in added)),
    )


def write_label_edit(
    edit: LabelEdit, original: bytes, corpus: dict[str, Chunk], data: DataConfig
) -> None:
    """Write the edited questions file atomically, and only a file the loader reads: the text
    is staged beside it and loaded with ``load_questions`` before it takes the file's place
    (``judge.io.write.write_atomic``'s ``check``), unless the file no longer holds ``original``
    (someone saved it since it was read: their edit would be lost). The file keeps its
    permissions; a read-only one is refused before anything is written."""
    path = data.questions

    def check(staged: Path) -> None:
        try:
            load_questions(staged, corpus, data)
        except InputError as exc:  # pragma: no cover (a bug of ours: the edit only adds ids)
            raise InputError(
                [
                    f"{path}: the edited file would not load, so nothing was written "
                    f"({problem.replace(str(staged), str(path))})"
                    for problem in exc.problems
                ]
            ) from None
        if path.read_bytes() != original:
            raise InputError(
                [
                    f"{path}: the file changed while the labels were being added (saved in an "
                    "editor?); nothing was written: run judge golden accept again"
                ]
            )

    write_atomic(path, edit.text, check=check)
