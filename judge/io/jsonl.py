"""JSONL files: every bad line of an input reported at once, and lines written only when
they can be read back.

``read_jsonl`` reads a UTF-8 file within its size limit (``judge.io.text.read_text``), then each
non-blank line as a JSON object through the one parse path (``judge.io.json.parse_json``): a
line over ``MAX_RECORD_MB``, text that is not JSON, JSON nested too deeply or holding an integer
too long for Python to read, a value that is not an object are each refused with their
``path:line``. A file whose every line is plain is read the fast way (one parse per line), with
the same values. The writer (``jsonl_text``, ``checked_line``, ``write_jsonl``) refuses a record
whose line the reader would refuse (``record_problem``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pydantic_core
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from judge.errors import InputError
from judge.io.json import (
    JsonProblem,
    encoding_problem,
    may_hold_lone_surrogate,
    over_limit,
    parse_json,
)
from judge.io.limits import DEFAULT_MAX_FILE_MB

# The limit's home is judge.io.limits; re-exported for the readers that import it from here.
from judge.io.limits import MAX_RECORD_MB as MAX_RECORD_MB
from judge.io.text import read_text, split_lines
from judge.io.write import write_atomic


class Line(NamedTuple):
    """One parsed JSONL line and where it came from."""

    number: int
    value: Any


def _line_size_problem(size: int) -> JsonProblem | None:
    if size <= MAX_RECORD_MB * 1024 * 1024:
        return None
    return JsonProblem(
        over_limit("the line", size, MAX_RECORD_MB, "one record"),
        "shorten the long field (an answer or a chunk text this long is a mistake: see "
        "golden/README.md)",
    )


def parse_json_line(raw_line: str) -> tuple[Any, JsonProblem | None]:
    """The JSON value of one JSONL line, or None and why the JSONL loader refuses it (over
    ``MAX_RECORD_MB``, or ``parse_json``'s reasons): for files that read their lines in their
    own way (``history.jsonl``) but must refuse what the loader refuses."""
    size = len(raw_line) if raw_line.isascii() else len(raw_line.encode("utf-8"))
    problem = _line_size_problem(size)
    if problem is not None:
        return None, problem
    return parse_json(raw_line)


def _parse_line(path: Path, number: int, raw_line: str) -> tuple[Any, str | None]:
    """The JSON value of one line, or None and what is wrong with it."""
    where = f"{path}:{number}"
    value, problem = parse_json_line(raw_line)
    if problem is not None:
        return None, problem.message(where)
    if not isinstance(value, dict):
        return None, f"{where}: expected a JSON object, got {type(value).__name__}"
    return value, None


def _plain_lines(text: str, raw_lines: list[str]) -> list[Line] | None:
    """Every non-blank line's JSON object when nothing in the file needs the careful path
    (each line small, valid JSON, an object; no ``\\u`` escape of half a character anywhere),
    else None: then ``read_jsonl`` reads it line by line and says what is wrong where. The
    same values as that path, with one call per line instead of six."""
    if may_hold_lone_surrogate(text):
        return None
    # A line of at most this many characters is within the limit whatever they are (a
    # character is at most 4 bytes of UTF-8), so its size needs no counting.
    surely_small = MAX_RECORD_MB * 1024 * 1024 // 4
    # pydantic-core's parser: twice as fast as json.loads on short lines, and it refuses all
    # it cannot read the same way (an integer of more than 4,300 digits, half a character,
    # nesting past 200), so that such a file goes the careful way and gets its message there.
    loads = pydantic_core.from_json
    lines: list[Line] = []
    append = lines.append
    try:
        for number, raw_line in enumerate(raw_lines, start=1):
            if len(raw_line) > surely_small:
                return None
            if not raw_line.strip():
                continue
            value = loads(raw_line)
            if type(value) is not dict:
                return None
            append(Line(number, value))
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError, as is a long int
        return None
    return lines


def _careful_lines(path: Path, raw_lines: list[str]) -> list[Line]:
    """Each line checked on its own (size, JSON, an object), every bad line reported."""
    lines: list[Line] = []
    problems: list[str] = []
    for number, raw_line in enumerate(raw_lines, start=1):
        if not raw_line.strip():
            continue
        value, problem = _parse_line(path, number, raw_line)
        if problem is None:
            lines.append(Line(number, value))
        else:
            problems.append(problem)
    if problems:
        raise InputError(problems)
    return lines


def read_jsonl(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> list[Line]:
    """Parse every non-blank line as a JSON object; report all bad lines at once."""
    text = read_text(path, max_mb)
    raw_lines = split_lines(text)
    lines = _plain_lines(text, raw_lines) or _careful_lines(path, raw_lines)
    if not lines:
        raise InputError([f"{path}: no records (the file is empty)"])
    return lines


def _record_line(record: BaseModel | dict[str, Any]) -> str:
    if isinstance(record, BaseModel):
        try:  # pydantic's own encoder: about twice as fast as model_dump + json.dumps
            return record.model_dump_json(exclude_none=True) + "\n"
        except PydanticSerializationError:  # e.g. half a UTF-16 character: json.dumps says which
            data = record.model_dump(mode="json", exclude_none=True)
    else:
        data = record
    return json.dumps(data, ensure_ascii=False) + "\n"


def jsonl_text(records: Iterable[BaseModel | dict[str, Any]]) -> str:
    """Records as JSONL text, one per line (models without their unset optional fields)."""
    return "".join(_record_line(record) for record in records)


def record_problem(record: BaseModel | dict[str, Any]) -> str | None:
    """Why the line ``jsonl_text`` writes for ``record`` would be refused by ``read_jsonl``
    (over ``MAX_RECORD_MB``, an integer too long, nesting too deep, half a character), or None.

    For records made from what a user's code returned (an adapter's answer): such a record is
    refused when it is produced, never saved for every later command to trip on.
    """
    try:
        line = _record_line(record)
        size = len(line.encode("utf-8"))
    except (ValueError, RecursionError) as exc:  # half a character, too deep, too long an int
        return encoding_problem(exc)
    problem = _line_size_problem(size) or parse_json(line)[1]
    return None if problem is None else problem.text


def checked_line(record: BaseModel | dict[str, Any], where: object) -> str:
    """The JSONL line of one record (as ``jsonl_text`` writes it), refused with an
    ``InputError`` naming ``where`` when ``read_jsonl`` would refuse it (``record_problem``)."""
    problem = record_problem(record)
    if problem is not None:
        raise InputError([f"{where}: the record is not written: {problem}"])
    return _record_line(record)


def write_jsonl(path: Path, records: Iterable[BaseModel | dict[str, Any]]) -> None:
    """Write records as JSONL, atomically."""
    write_atomic(path, jsonl_text(records))
