"""Reading input files safely: UTF-8 JSONL with every bad line reported at once.

Refused before parsing, each with a message that says what to do: a path that does not exist
or is reached through a symlink (inputs are read from where they are, never through a link that
may point anywhere), a file larger than the limit, bytes that are not UTF-8. Refused per line:
a line over ``MAX_RECORD_MB``, text that is not JSON, JSON nested too deeply or holding an
integer too long for Python to read, a value that is not an object.

One parsing policy for every input model (the golden set, runs, labels and ``judge.toml``):
a value must already have the JSON (or TOML) type its field declares. Lax parsing would read
``"2"``, ``2.0`` or ``true`` as the score 2 or 1 and ``"yes"`` as true, so the scalar types
below are strict: ``StrictInt`` (an integer, never a float, a bool or a string),
``StrictFloat`` (a number: an integer like ``1`` is a number too, a bool or a string is not),
``StrictBool`` (``true``/``false`` only). Lists still fill tuple fields and ISO 8601 strings
still fill ``IsoDatetime`` fields: the records come from JSON, which has no tuples or dates.
``tests/test_jsonl.py`` checks that no input model declares a lax int, float or bool.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import unicodedata
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, NamedTuple, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Strict,
    StringConstraints,
    ValidationError,
)

from judge.errors import InputError

#: Default size limit for one input file; `data.max_file_mb` in judge.toml changes it.
DEFAULT_MAX_FILE_MB = 512

#: Size limit for one line (one record) of a JSONL input, whatever the file limit. A 50 MB
#: answer is valid JSON, but judging and reporting it would take gigabytes of memory (measured:
#: about 30 to 45 times the record's size), so it is refused where it is, with its line.
MAX_RECORD_MB = 4

M = TypeVar("M", bound=BaseModel)

StrictInt = Annotated[int, Strict()]
"""A JSON integer: ``2``, not ``"2"``, ``2.0`` or ``true``."""
StrictFloat = Annotated[float, Strict()]
"""A JSON number: ``0.9`` or ``1`` (JSON has one number type), not ``"0.9"`` or ``true``."""
StrictBool = Annotated[bool, Strict()]
"""``true`` or ``false``: not ``"yes"``, ``1`` or ``"true"``."""


def _iso_text(value: object) -> object:
    if isinstance(value, str | datetime):
        return value
    raise ValueError(
        f'must be an ISO 8601 date-time string such as "2026-11-21T09:00:00Z", not {_show(value)}'
    )


IsoDatetime = Annotated[datetime, BeforeValidator(_iso_text)]
"""A date-time written as an ISO 8601 string (a number is refused, not read as a Unix time)."""

# Characters an id may not contain: whitespace (which splits the whitespace-separated TREC
# files that `judge trec export` writes), control characters and invisible format characters
# (U+200B, U+FEFF ...: two ids that look the same would differ).
_ID_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
_CHAR_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", " ": "a space"}


def _describe_char(char: str) -> str:
    name = _CHAR_NAMES.get(char) or unicodedata.name(char, "a control character")
    return f"U+{ord(char):04X} ({name})"


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be an id (a chunk or question id), or None when it can."""
    if value.isascii() and value.isprintable() and " " not in value:
        return None  # the common case, decided in C: ids are checked by the ten thousand
    for position, char in enumerate(value, start=1):
        if char.isspace() or unicodedata.category(char) in _ID_BAD_CATEGORIES:
            return (
                f"contains {_describe_char(char)} at character {position}; ids may not contain "
                "whitespace, control or invisible characters (they break the TREC export): "
                "see golden/README.md"
            )
    return None


def _check_id(value: str) -> str:
    problem = id_problem(value)
    if problem:
        raise ValueError(problem)
    return value


Id = Annotated[str, StringConstraints(min_length=1), AfterValidator(_check_id)]
"""A chunk or question id: not empty, no whitespace, control or invisible characters."""


class StrictRecord(BaseModel):
    """Base of every record read from a file: immutable, unknown fields and NaN are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
    # Declare scalars with the strict aliases above (StrictInt, StrictFloat, StrictBool,
    # IsoDatetime): tests/test_jsonl.py fails for any model that declares a lax one.


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


def _parse_line(path: Path, number: int, raw_line: str) -> tuple[Any, str | None]:
    """The JSON value of one line, or None and what is wrong with it."""
    where = f"{path}:{number}"
    size = len(raw_line) if raw_line.isascii() else len(raw_line.encode("utf-8"))
    if size > MAX_RECORD_MB * 1024 * 1024:
        shown = math.ceil(size / 1024 / 1024 * 10) / 10  # 4.01 MB is "4.1", never "4.0"
        return None, (
            f"{where}: the line is {shown:g} MB, over the {MAX_RECORD_MB} MB "
            "limit for one record; shorten the long field (an answer or a chunk text this long "
            "is a mistake: see golden/README.md)"
        )
    try:
        value = json.loads(raw_line)
        if _SURROGATE_ESCAPE.search(raw_line) and _has_lone_surrogate(value):
            return None, (
                f"{where}: a \\u escape encodes half a character (a lone UTF-16 "
                "surrogate); the text was cut in the middle of a character"
            )
    except json.JSONDecodeError as exc:
        return None, f"{where}: not valid JSON ({exc.msg} at column {exc.colno})"
    except RecursionError:
        return None, (
            f"{where}: nested too deeply (arrays or objects inside each other); "
            "no record has more than a few levels: fix the line"
        )
    except ValueError as exc:  # json reads integers with int(), which limits their digits
        if "digits" not in str(exc):
            raise
        return None, (
            f"{where}: an integer has more than {sys.get_int_max_str_digits()} digits; no field "
            "takes a number that long: fix the value"
        )
    if not isinstance(value, dict):
        return None, f"{where}: expected a JSON object, got {type(value).__name__}"
    return value, None


def read_jsonl(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> list[Line]:
    """Parse every non-blank line as a JSON object; report all bad lines at once."""
    text = read_text(path, max_mb)
    lines: list[Line] = []
    problems: list[str] = []
    for number, raw_line in enumerate(split_lines(text), start=1):
        if not raw_line.strip():
            continue
        value, problem = _parse_line(path, number, raw_line)
        if problem is None:
            lines.append(Line(number, value))
        else:
            problems.append(problem)
    if problems:
        raise InputError(problems)
    if not lines:
        raise InputError([f"{path}: no records (the file is empty)"])
    return lines


# Pydantic's type errors, said as what the field takes; the value given is shown after it.
_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "tuple_type": "a list",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}
_EXAMPLE = {"an integer": " such as 2", "a number": " such as 0.5"}


def _show(value: object, limit: int = 40) -> str:
    """A value as it is written in JSON, shortened (a TOML date or a path: as text)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quoted_scalar(text: str) -> bool:
    """True when ``text`` is a number or a bool written inside quotes, like ``"2"``."""
    if len(text) > 40:
        return False
    try:
        return type(json.loads(text)) in (int, float, bool)
    except (ValueError, RecursionError):
        return False


def _type_error(expected: list[str], value: object) -> str:
    if len(expected) == 1:
        wanted = expected[0] + _EXAMPLE.get(expected[0], "")
    else:
        wanted = ", ".join(expected[:-1]) + " or " + expected[-1]
    hint = " (remove the quotes)" if isinstance(value, str) and _quoted_scalar(value) else ""
    return f"must be {wanted}, not {_show(value)}{hint}"


def _is_union_tag(part: str) -> bool:
    """Pydantic's name for one alternative of a union (``int``, ``tuple[str, ...]``), which
    it adds to the location of that alternative's error; no field is named like that."""
    return part in ("str", "int", "float", "bool") or "[" in part


def describe_validation_error(error: ValidationError) -> list[str]:
    """Turn a pydantic error into ``field: what is wrong`` phrases, one per problem.

    A value of the wrong type is said as what the field takes and what was given
    (``faithfulness: must be an integer such as 2, not "2" (remove the quotes)``); the errors
    of a union's alternatives (``chunking.x.str``, ``chunking.x.int``, ...) become one line.
    """
    phrases: list[str] = []
    items = error.errors()
    index = 0
    while index < len(items):
        item = items[index]
        loc = [str(part) for part in item["loc"]]
        location = ".".join(loc)
        kind = item["type"]
        if kind == "missing":
            phrases.append(f"field '{location}' missing")
        elif kind == "extra_forbidden":
            phrases.append(f"unknown field '{location}'")
        elif kind in _EXPECTED:
            # The alternatives of a union: consecutive type errors on one value, each under
            # the union's location plus the alternative's tag.
            expected = [_EXPECTED[kind]]
            group = index + 1
            while (
                _is_union_tag(loc[-1] if loc else "")
                and group < len(items)
                and items[group]["type"] in _EXPECTED
                and [str(p) for p in items[group]["loc"]][:-1] == loc[:-1]
                and _is_union_tag(str(items[group]["loc"][-1]))
            ):
                expected.append(_EXPECTED[items[group]["type"]])
                group += 1
            if group > index + 1:
                location = ".".join(loc[:-1])
                index = group - 1
            message = _type_error(list(dict.fromkeys(expected)), item.get("input"))
            phrases.append(f"{location}: {message}" if location else message)
        else:
            message = item["msg"].removeprefix("Value error, ")
            phrases.append(f"{location}: {message}" if location else message)
        index += 1
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
