"""Review marks: the judgements a reviewer records in ``review.html``, imported as human labels.

The page exports one JSON file (``docs/review.md`` describes it)::

    {"format": "judge-review-marks", "version": 1, "reviewer": "ana", "folder": "...",
     "judge_fingerprint": "...", "exported_at": "...",
     "marks": [{"question_id": "q08", "answer_sha256": "...", "judge_fingerprint": "...",
                "agree": false, "judge_faithfulness": 2, "judge_relevance": 2,
                "faithfulness": 1, "relevance": 2, "comment": "...", "marked_at": "..."}]}

Each mark becomes one ``HumanLabel`` for the exact answer it was made on: "agree" is the
judge's scores at the time of the mark, otherwise the reviewer's; the comment is the label's
note; the labeller is the file's reviewer (or ``--labeller`` when the file names none). The
import validates the whole file first (every bad mark reported at once, with its index and
question id; a mark whose only fault is a control character in its comment is left out alone,
and the rest imported: ``read_marks``), then merges exactly as the CSV sheet does (``judge.audit.sheet.store_labels``):
idempotent, a conflicting label needs ``replace``, the labels file written once, atomically.

``import_labels_file`` takes either a marks file or a filled CSV sheet and tells them apart by
content, so ``judge audit import FILE`` takes both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import Field, ValidationError, field_validator

from judge.audit.sheet import ImportResult, import_sheet, store_labels
from judge.audit.types import COMMENT_MAX_CHARS, MARKS_FORMAT, MARKS_VERSION
from judge.errors import InputError
from judge.inputs.golden import GoldenQuestion
from judge.inputs.labels import HumanLabel, given_text_problems
from judge.io.state import StateFile, check_version, load_json_document
from judge.io.text import Id, IsoDatetime, StrictBool, StrictInt, StrictRecord, check_readable
from judge.io.validation import describe_validation_error

#: A marks file is small (a few hundred bytes per mark); anything near this is not one.
MARKS_MAX_MB = 64


class ReviewMark(StrictRecord):
    """One mark as the page exports it (strict: ``"2"``, ``2.0`` or ``true`` is no score)."""

    question_id: Id
    answer_sha256: str
    """sha256 hex of the exact answer text the reviewer saw."""
    judge_fingerprint: str = Field(min_length=1)
    agree: StrictBool
    """True: the judge's scores (``judge_faithfulness``, ``judge_relevance``) are right."""
    judge_faithfulness: StrictInt | None = None
    judge_relevance: StrictInt | None = None
    """The judge's scores when the mark was made (None for a verdict that was not ok)."""
    faithfulness: StrictInt | None = None
    relevance: StrictInt | None = None
    """The reviewer's scores; for "agree" the page writes the judge's here too."""
    judge_correctness: StrictInt | None = None
    correctness: StrictInt | None = None
    """The judge's and the reviewer's correctness (against the reference answer), for a run
    that judged it; optional, read and kept when present (a page of a run without correctness
    writes neither). "agree" without ``correctness`` takes ``judge_correctness``."""
    comment: str = Field(default="", max_length=COMMENT_MAX_CHARS)
    marked_at: IsoDatetime

    @field_validator(
        "judge_faithfulness",
        "judge_relevance",
        "faithfulness",
        "relevance",
        "judge_correctness",
        "correctness",
    )
    @classmethod
    def _score(cls, value: int | None) -> int | None:
        if value is not None and value not in (0, 1, 2):
            raise ValueError(f"must be 0, 1 or 2, not {value}")
        return value

    @field_validator("answer_sha256")
    @classmethod
    def _hash(cls, value: str) -> str:
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise ValueError("is damaged (export the marks again; do not edit the hashes)")
        return value


class _Header(StrictRecord):
    """The file around the marks (the marks are validated one by one, for their index)."""

    format: str
    version: StrictInt
    reviewer: str | None = None
    folder: str | None = None
    judge_fingerprint: str | None = None
    exported_at: IsoDatetime | None = None
    marks: list[Any]


def _scores(mark: ReviewMark) -> tuple[tuple[int, int] | None, str | None]:
    """The label's (faithfulness, relevance) from one mark, or what is wrong with it."""
    if mark.agree:
        if mark.judge_faithfulness is None or mark.judge_relevance is None:
            return None, "'agree' but the judge gave no scores (judge_faithfulness/relevance)"
        judge = (mark.judge_faithfulness, mark.judge_relevance)
        given = (mark.faithfulness, mark.relevance)
        if given != (None, None) and given != judge:
            return None, (
                f"'agree' with the judge's F{judge[0]} R{judge[1]}, but the mark's scores are "
                f"F{given[0]} R{given[1]}; set agree to false or make them equal"
            )
        return judge, None
    if mark.faithfulness is None or mark.relevance is None:
        return None, "no 'agree' and no faithfulness and relevance (0, 1 or 2): nothing to import"
    return (mark.faithfulness, mark.relevance), None


MARKS_FILE = StateFile(
    what="review-marks file",
    remedy="export the marks from review.html again",
    current=MARKS_VERSION,
    version_field="version",
    not_json="not JSON",
    max_mb=MARKS_MAX_MB,
)


def _header(path: Path) -> _Header:
    """The file's header, or one line that says what this file is instead."""
    value = load_json_document(path, MARKS_FILE)  # the state files' limits and words
    if not isinstance(value, dict) or value.get("format") != MARKS_FORMAT:
        found = value.get("format") if isinstance(value, dict) else type(value).__name__
        raise InputError(
            [
                f"{path}: not a review-marks file (its format is {json.dumps(found)[:60]}, "
                f"expected \"{MARKS_FORMAT}\"); use the file review.html's 'Export marks' saves"
            ]
        )
    if type(value.get("version")) is int:  # a version of another type: the header says so
        value = check_version(path, value, MARKS_FILE)
    try:
        return _Header.model_validate(value)
    except ValidationError as exc:
        raise InputError(
            [f"{path}: {problem}" for problem in describe_validation_error(exc)]
        ) from None


def _labeller(path: Path, header: _Header, labeller: str | None) -> str:
    reviewer = (header.reviewer or "").strip()
    given = (labeller or "").strip()
    if reviewer and given and reviewer != given:
        raise InputError(
            [
                f"{path}: the file's reviewer is '{reviewer}' but --labeller says '{given}'; "
                'drop --labeller, or change "reviewer" in the file'
            ]
        )
    name = reviewer or given
    if not name:
        raise InputError(
            [
                f"{path}: the file names no reviewer; pass --labeller NAME (or fill the "
                "reviewer field in review.html before exporting)"
            ]
        )
    problems = given_text_problems(name)
    if problems:
        where = "the reviewer" if reviewer else "--labeller"
        raise InputError([f"{path}: {where}: {problem}" for problem in problems])
    return name


class MarksRead(NamedTuple):
    """A marks file read: the labels of its good marks, and a located line for each mark left
    out for its comment alone (a control character: the labels file never stores one)."""

    labels: list[HumanLabel]
    left_out: list[str]


def parse_marks(
    path: Path, questions: dict[str, GoldenQuestion], labeller: str | None
) -> list[HumanLabel]:
    """Labels from a review-marks file; every bad mark reported at once (nothing half-read)."""
    read = read_marks(path, questions, labeller)
    if read.left_out:
        raise InputError([*read.left_out, "nothing was imported; fix the marks above"])
    return read.labels


def read_marks(path: Path, questions: dict[str, GoldenQuestion], labeller: str | None) -> MarksRead:
    """``parse_marks``, with the marks whose only fault is their comment set apart
    (``MarksRead.left_out``) rather than refusing the file: a reviewer's scores are the labels,
    and one comment with an escape sequence in it (typed into an older page, or edited into
    the file) should not cost the other marks. Any other fault refuses the whole file, every
    one reported at once."""
    header = _header(path)
    name = _labeller(path, header, labeller)
    labels: list[HumanLabel] = []
    problems: list[str] = []
    left_out: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for index, raw in enumerate(header.marks, start=1):
        qid = raw.get("question_id") if isinstance(raw, dict) else None
        where = f"{path}: mark {index} ({qid if isinstance(qid, str) and qid else '?'})"
        try:
            mark = ReviewMark.model_validate(raw)
        except ValidationError as exc:
            problems += [f"{where}: {p}" for p in describe_validation_error(exc)]
            continue
        mark_problems = []
        if mark.question_id not in questions:
            mark_problems.append(f"question_id '{mark.question_id}' is not a golden id")
        scores, problem = _scores(mark)
        if problem:
            mark_problems.append(problem)
        key = (mark.question_id, mark.answer_sha256)
        if key in seen:
            mark_problems.append(f"a second mark for the same answer (mark {seen[key]}); keep one")
        seen.setdefault(key, index)
        if mark_problems or scores is None:
            problems += [f"{where}: {p}" for p in mark_problems]
            continue
        comment = given_text_problems(None, mark.comment, "comment")
        if comment:
            left_out += [f"{where}: {p}; this mark was not imported" for p in comment]
            continue
        labels.append(
            HumanLabel(
                question_id=mark.question_id,
                answer_sha256=mark.answer_sha256,
                faithfulness=scores[0],
                relevance=scores[1],
                correctness=mark.correctness
                if mark.correctness is not None
                else mark.judge_correctness
                if mark.agree
                else None,
                labeller=name,
                note=mark.comment.strip(),
                labelled_at=mark.marked_at,
                source="review",
            )
        )
    if problems:
        raise InputError(
            [*problems, *left_out, "nothing was imported; fix the marks above and import again"]
        )
    return MarksRead(labels, left_out)


def import_marks(
    path: Path,
    labels_path: Path,
    questions: dict[str, GoldenQuestion],
    labeller: str | None,
    replace: bool,
) -> ImportResult:
    """Validate the whole marks file, then write the labels file once (atomically). Marks left
    out for their comment (``read_marks``) are refused, one located line each, after the
    others are stored: the file fixed and imported again adds them (the rest are there)."""
    read = read_marks(path, questions, labeller)
    if not read.left_out:
        return store_labels(read.labels, labels_path, questions, replace)
    stored = ""
    if read.labels:
        result = store_labels(read.labels, labels_path, questions, replace)
        stored = (
            f" (the other marks were imported: {result.added} added, {result.replaced} "
            f"replaced, {result.unchanged} already there)"
        )
    raise InputError(
        [
            *read.left_out,
            f"{path}: remove the control characters from the comment(s) above in the file, "
            f"or edit them in review.html and export again, then import the file again{stored}",
        ]
    )


def is_marks_file(path: Path) -> bool:
    """Whether ``path`` is to be read as a marks file rather than a CSV sheet, by its content
    whatever its name: JSON starts with ``{`` or ``[``, a sheet with its header row. A ``.json``
    file that is neither is read as a marks file too, so that it is refused as "not JSON"
    rather than for missing sheet columns."""
    with path.open("rb") as handle:
        head = handle.read(4096).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")):
        return True
    return path.suffix.lower() == ".json" and "question_id" not in head.split("\n", 1)[0]


def import_labels_file(
    path: Path,
    labels_path: Path,
    questions: dict[str, GoldenQuestion],
    labeller: str | None,
    replace: bool,
) -> ImportResult:
    """``judge audit import FILE``: a review-marks file or a filled CSV sheet, by content."""
    check_readable(path)  # refused (a symlink, a folder, too large) before a byte is read
    if is_marks_file(path):
        return import_marks(path, labels_path, questions, labeller, replace)
    return import_sheet(path, labels_path, questions, labeller, replace)
