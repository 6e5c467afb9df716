"""Reading input files safely: UTF-8 JSONL with every bad line reported at once.

Refused before parsing, each with a message that says what to do: a path that does not exist
or is reached through a symlink (inputs are read from where they are, never through a link that
may point anywhere), a file larger than the limit, bytes that are not UTF-8.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from judge.errors import InputError

#: Default size limit for one input file; `data.max_file_mb` in judge.toml changes it.
DEFAULT_MAX_FILE_MB = 512

M = TypeVar("M", bound=BaseModel)


class StrictRecord(BaseModel):
    """Base of every record read from a file: immutable, unknown fields and NaN are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Line(NamedTuple):
    """One parsed JSONL line and where it came from."""

    number: int
    value: Any


def check_readable(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> None:
    """Raise ``InputError`` unless ``path`` is a regular file, not via a symlink, under the limit."""
    if os.path.lexists(path) and os.path.realpath(path) != os.path.abspath(path):
        raise InputError(
            [f"{path}: is a symlink or lies under one; give the real path of the file instead"]
        )
    if not path.exists():
        raise InputError([f"{path}: file not found"])
    if not path.is_file():
        raise InputError([f"{path}: not a regular file"])
    size = path.stat().st_size
    if size > max_mb * 1024 * 1024:
        raise InputError(
            [
                f"{path}: {size / 1024 / 1024:.1f} MB is larger than the {max_mb:g} MB limit; "
                "split the file or raise data.max_file_mb in judge.toml"
            ]
        )


def read_text(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> str:
    """Read a UTF-8 text file (a leading BOM is dropped) after :func:`check_readable`."""
    check_readable(path, max_mb)
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            [f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"]
        ) from None


# A \uD800-\uDFFF escape in JSON text: possibly half of a UTF-16 pair, which is no character.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def split_lines(text: str) -> list[str]:
    """Lines split on \\n only (and a trailing \\r dropped). ``str.splitlines`` would also split
    on U+2028, U+2029 and U+0085, which JSON strings may contain raw."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_jsonl(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> list[Line]:
    """Parse every non-blank line as a JSON object; report all bad lines at once."""
    text = read_text(path, max_mb)
    lines: list[Line] = []
    problems: list[str] = []
    for number, raw_line in enumerate(split_lines(text), start=1):
        if not raw_line.strip():
            continue
        try:
            value = json.loads(raw_line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if _SURROGATE_ESCAPE.search(raw_line) and _has_lone_surrogate(value):
            problems.append(
                f"{path}:{number}: a \\u escape encodes half a character (a lone UTF-16 "
                "surrogate); the text was cut in the middle of a character"
            )
            continue
        if not isinstance(value, dict):
            problems.append(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
            continue
        lines.append(Line(number, value))
    if problems:
        raise InputError(problems)
    if not lines:
        raise InputError([f"{path}: no records (the file is empty)"])
    return lines


def describe_validation_error(error: ValidationError) -> list[str]:
    """Turn a pydantic error into ``field: what is wrong`` phrases, one per problem."""
    phrases: list[str] = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"])
        kind = item["type"]
        if kind == "missing":
            phrases.append(f"field '{location}' missing")
        elif kind == "extra_forbidden":
            phrases.append(f"unknown field '{location}'")
        else:
            message = item["msg"].removeprefix("Value error, ")
            phrases.append(f"{location}: {message}" if location else message)
    return phrases


def parse_records(
    path: Path, lines: Iterable[Line], model: type[M], problems: list[str] | None = None
) -> list[tuple[int, M]]:
    """Validate each line against ``model``; collect every problem as ``file:line: ...``.

    With a ``problems`` list, problems are appended to it and the valid records returned, so
    the caller can add its own checks of those records before raising everything together.
    """
    records: list[tuple[int, M]] = []
    collect = problems is not None
    problems = [] if problems is None else problems
    for line in lines:
        try:
            records.append((line.number, model.model_validate(line.value)))
        except ValidationError as exc:
            problems.extend(f"{path}:{line.number}: {p}" for p in describe_validation_error(exc))
    if problems and not collect:
        raise InputError(problems)
    return records


def in_line_order(path: Path, problems: list[str]) -> list[str]:
    """Sort ``path:line: ...`` problems by line, whichever check found them (stable)."""

    def line_of(problem: str) -> int:
        number = problem.removeprefix(f"{path}:").split(":", 1)[0]
        return int(number) if number.isdigit() else 0

    return sorted(problems, key=line_of)


def write_atomic(path: Path, text: str) -> None:
    """Write a whole file or nothing: a temporary file, synced, then renamed into place.

    A crash leaves the old file (or none), never a half-written one.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def jsonl_text(records: Iterable[BaseModel | dict[str, Any]]) -> str:
    """Records as JSONL text, one per line (models without their unset optional fields)."""
    lines = []
    for record in records:
        data = (
            record.model_dump(mode="json", exclude_none=True)
            if isinstance(record, BaseModel)
            else record
        )
        lines.append(json.dumps(data, ensure_ascii=False) + "\n")
    return "".join(lines)


def write_jsonl(path: Path, records: Iterable[BaseModel | dict[str, Any]]) -> None:
    """Write records as JSONL, atomically."""
    write_atomic(path, jsonl_text(records))
