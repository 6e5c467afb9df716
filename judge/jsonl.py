"""Reading input files safely: UTF-8 JSONL with every bad line reported at once.

Refused before parsing, each with a message that says what to do: a path that does not exist
or is reached through a symlink (inputs are read from where they are, never through a link that
may point anywhere), a file larger than the limit, bytes that are not UTF-8. Refused per line:
a line over ``MAX_RECORD_MB``, text that is not JSON, JSON nested too deeply or holding an
integer too long for Python to read, a value that is not an object.

The JSON state files the harness writes and reads back (a report folder's manifest and
``report.json``, the pinned baseline, a batch manifest, review.html's marks file, each
``history.jsonl`` line, the ``latest`` pointer) are read with the same parser and limits, their
format version checked on every read, and written by one writer that refuses what its reader
would refuse (``StateFile``, ``read_json_document``, ``write_json_document``): the harness never
saves a file that every later command would trip on.

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

import fcntl
import functools
import json
import math
import os
import re
import sys
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, NamedTuple, NoReturn, TypeVar, overload

import pydantic_core
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Strict,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import PydanticSerializationError

from judge.errors import HarnessError, InputError

#: Default size limit for one input file; `data.max_file_mb` in judge.toml changes it.
DEFAULT_MAX_FILE_MB = 512

#: Size limit for one line (one record) of a JSONL input, whatever the file limit. A 50 MB
#: answer is valid JSON, but judging and reporting it would take gigabytes of memory (measured:
#: about 30 to 45 times the record's size), so it is refused where it is, with its line.
MAX_RECORD_MB = 4

M = TypeVar("M", bound=BaseModel)
Text = TypeVar("Text", str, bytes)

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
#: Invisible characters of other categories: the Hangul fillers (letters, category Lo, that
#: render as nothing: U+3164, U+115F, U+1160, U+FFA0), the combining grapheme joiner, the
#: variation selectors and the other default-ignorable marks, and the blank Braille pattern.
#: An id holding one looks like an id without it.
INVISIBLE_FILLERS = frozenset(
    {
        "\u034f",  # COMBINING GRAPHEME JOINER
        "\u115f",  # HANGUL CHOSEONG FILLER
        "\u1160",  # HANGUL JUNGSEONG FILLER
        "\u17b4",  # KHMER VOWEL INHERENT AQ
        "\u17b5",  # KHMER VOWEL INHERENT AA
        "\u180b",  # MONGOLIAN FREE VARIATION SELECTOR ONE
        "\u180c",
        "\u180d",
        "\u180f",
        "\u2800",  # BRAILLE PATTERN BLANK
        "\u3164",  # HANGUL FILLER
        "\uffa0",  # HALFWIDTH HANGUL FILLER
        *(chr(code) for code in range(0xFE00, 0xFE10)),  # VARIATION SELECTOR-1 to -16
        *(chr(code) for code in range(0xE0100, 0xE01F0)),  # VARIATION SELECTOR-17 to -256
    }
)
_CHAR_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", " ": "a space"}


def _describe_char(char: str) -> str:
    name = _CHAR_NAMES.get(char) or unicodedata.name(char, "a control character")
    return f"U+{ord(char):04X} ({name})"


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be an id (a chunk or question id), or None when it can."""
    if value.isascii() and value.isprintable() and " " not in value:
        return None  # the common case, decided in C: ids are checked by the ten thousand
    for position, char in enumerate(value, start=1):
        if (
            char.isspace()
            or unicodedata.category(char) in _ID_BAD_CATEGORIES
            or char in INVISIBLE_FILLERS
        ):
            return (
                f"contains {_describe_char(char)} at character {position}; ids may not contain "
                "whitespace, control or invisible characters (they break the TREC export): "
                "see golden/README.md"
            )
    return None


#: Characters that reorder how the text around them is displayed (bidirectional overrides and
#: isolates): in a stored note they would make every later view show other text than was typed.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: The control characters a note (several lines of a reviewer's text) may hold.
_NOTE_CONTROLS = frozenset("\t\n\r")


def text_problem(value: str, *, one_line: bool) -> str | None:
    """Why ``value`` cannot be stored as a person's text, or None when it can: a name
    (``one_line``: a labeller, a reviewer) may hold no control, format or invisible character
    (a tab or a line break neither); a note or comment may hold tabs and line breaks but no
    other control character and no bidirectional override. They are refused where a person
    gives them (an import, ``--labeller``), so that the labels file never stores an escape
    sequence or a bell that a later ``cat`` or terminal would act on."""
    if value.isascii() and value.isprintable():
        return None
    for position, char in enumerate(value, start=1):
        category = unicodedata.category(char)
        if one_line:
            bad = category in _ID_BAD_CATEGORIES - {"Zs"} or char in INVISIBLE_FILLERS
        else:
            bad = (category == "Cc" and char not in _NOTE_CONTROLS) or char in _BIDI_CONTROLS
        if bad:
            kind = "a name" if one_line else "a note"
            allowed = "" if one_line else " (line breaks and tabs are fine)"
            return (
                f"contains {_describe_char(char)} at character {position}; {kind} may not hold "
                f"control or invisible characters{allowed}: remove it"
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


class JsonProblem(NamedTuple):
    """Why a JSON text cannot be read: ``text`` says what, ``advice`` what to do about it in an
    input file (``""``: the text says it); ``line`` is where in the text, when known;
    ``syntax`` when the text is no JSON at all (what a write cut short leaves)."""

    text: str
    advice: str = ""
    line: int | None = None
    syntax: bool = False

    def message(self, where: str) -> str:
        """The JSONL loader's message: ``where: what is wrong; what to do``."""
        return f"{where}: {self.text}" + (f"; {self.advice}" if self.advice else "")


#: The one phrase for JSON nested deeper than it can be read or written.
_NESTED = "nested too deeply (arrays or objects inside each other)"


def _parse_json(text: str, not_json: str = "not valid JSON") -> tuple[Any, JsonProblem | None]:
    """The JSON value of ``text``, or None and why it cannot be read: the one parsing policy
    of every JSON the harness reads (a JSONL line, a state file), so that each refuses the
    same things (an integer longer than Python reads, nesting deeper than it recurses, half a
    UTF-16 character) in the same words."""
    try:
        value = json.loads(text)
        if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
            return None, JsonProblem(
                "a \\u escape encodes half a character (a lone UTF-16 surrogate)",
                "the text was cut in the middle of a character",
            )
    except json.JSONDecodeError as exc:
        return None, JsonProblem(
            f"{not_json} ({exc.msg} at column {exc.colno})", line=exc.lineno, syntax=True
        )
    except RecursionError:
        return None, JsonProblem(
            _NESTED,
            "no record has more than a few levels: fix the line",
        )
    except ValueError as exc:  # json reads integers with int(), which limits their digits
        if "digits" not in str(exc):
            raise
        return None, JsonProblem(
            f"an integer has more than {sys.get_int_max_str_digits()} digits",
            "no field takes a number that long: fix the value",
        )
    return value, None


def _line_size_problem(size: int) -> JsonProblem | None:
    if size <= MAX_RECORD_MB * 1024 * 1024:
        return None
    shown = math.ceil(size / 1024 / 1024 * 10) / 10  # 4.01 MB is "4.1", never "4.0"
    return JsonProblem(
        f"the line is {shown:g} MB, over the {MAX_RECORD_MB} MB limit for one record",
        "shorten the long field (an answer or a chunk text this long is a mistake: see "
        "golden/README.md)",
    )


def parse_json_line(raw_line: str) -> tuple[Any, JsonProblem | None]:
    """The JSON value of one JSONL line, or None and why the JSONL loader refuses it (over
    ``MAX_RECORD_MB``, or ``_parse_json``'s reasons): for files that read their lines in their
    own way (``history.jsonl``) but must refuse what the loader refuses."""
    size = len(raw_line) if raw_line.isascii() else len(raw_line.encode("utf-8"))
    problem = _line_size_problem(size)
    if problem is not None:
        return None, problem
    return _parse_json(raw_line)


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
    if _SURROGATE_ESCAPE.search(text) is not None:
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


@functools.cache
def _many(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    """A validator of a list of ``model`` records (built once per model)."""
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def parse_records(
    path: Path, lines: Iterable[Line], model: type[M], problems: list[str] | None = None
) -> list[tuple[int, M]]:
    """Validate each line against ``model``; collect every problem as ``file:line: ...``.

    With a ``problems`` list, problems are appended to it and the valid records returned, so
    the caller can add its own checks of those records before raising everything together.
    """
    lines = list(lines)
    try:
        # All lines in one call: the same validation, without a call per line. Any problem
        # and they are validated again one by one below, to say which line has which.
        valid = _many(model).validate_python([line.value for line in lines])
    except ValidationError:
        pass
    else:
        return [(line.number, record) for line, record in zip(lines, valid, strict=True)]
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


# --- files that more than one command writes ------------------------------------------------
#
# The labels file (``judge audit import``, ``judge audit label``), the pinned baseline (``pin``,
# ``ratchet``) and ``history.jsonl`` are read, changed and written back by commands that may run
# at the same time. Each such update holds the file's lock (``locked``) from its read to its
# write, so the second command reads what the first wrote and merges into it, instead of both
# writing what they read before and one losing the other's work.

#: How long a command waits for another one to finish updating a shared file before it gives up
#: with one line. An update (an import, a pin, a history line) takes well under a second; only
#: an interactive ``judge audit label`` holds a lock for longer.
LOCK_WAIT_S = 30.0
_LOCK_POLL_S = 0.05


class Busy(HarnessError):
    """Another command holds the lock of a file this one must write (exit 2: run it again)."""


def lock_file(path: Path) -> Path:
    """The lock file of ``path``: ``.<name>.lock`` beside it, there only while it is held."""
    return path.with_name(f".{path.name}.lock")


def _lock_holder(fd: int) -> str:
    with suppress(OSError):
        text = os.pread(fd, 64, 0).decode("utf-8", "replace").strip()
        if text.isdigit():
            return text
    return "?"


@contextmanager
def locked(path: Path, *, wait_s: float = LOCK_WAIT_S, doing: str = "writing") -> Iterator[None]:
    """Hold ``path``'s lock (an OS ``flock`` on ``lock_file(path)``) for a read-modify-write.

    Waits up to ``wait_s`` seconds for another command that holds it, then raises ``Busy``
    with one line naming the file and the holder's pid. The operating system releases the lock
    when its process ends, however it ends, so a crash never leaves it stuck; the lock file is
    removed on release (a waiter that locked a removed file locks again, the one in place).
    Not re-entrant: a process holds each file's lock once.
    """
    lock = lock_file(path)
    deadline = time.monotonic() + wait_s
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_holder(fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                raise Busy(
                    f"{path}: another judge command (pid {holder}) is {doing} this file; wait "
                    "for it to finish, then run this again (its lock is released when it exits)"
                ) from None
            time.sleep(_LOCK_POLL_S)
            continue
        except BaseException:
            os.close(fd)
            raise
        try:
            here = os.stat(lock)
            held = os.fstat(fd)
            same = (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # released and removed while this one waited: lock the file in place
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        with suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def end_with_newline(path: Path) -> bool:
    """Give a non-empty text file without a final newline one (a line written by hand or by an
    editor that leaves none), so that a line appended next is a line of its own, never glued
    onto the last one. True when the file was changed (a missing file is not). Call it holding
    the file's lock."""
    if not path.is_file():
        return False
    with path.open("r+b") as handle:
        if handle.seek(0, os.SEEK_END) == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return False
        handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    return True


def append_line(path: Path, line: str) -> None:
    """Append one line (``line`` ends with ``\\n``), synced; a last line without its newline
    gets one first (``end_with_newline``). Call it holding the file's lock."""
    with path.open("a+b") as handle:
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                line = "\n" + line
        handle.write(line.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def claim_unique(parent: Path, stem: str, suffix: str = "", *, folder: bool = False) -> Path:
    """Create ``parent/<stem><suffix>`` exclusively (an empty file, or a folder), or, when it
    exists, ``<stem>-2<suffix>``, ``<stem>-3<suffix>``, ...: the first name no other command
    has. Timestamped outputs are named to the second, and two commands started in the same
    second must not write (or replace) one file. The caller then fills what it claimed (a
    file by ``write_atomic``, which replaces the empty one; a folder by renaming a staged one
    over the empty one)."""
    parent.mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        path = parent / (f"{stem}{suffix}" if number == 1 else f"{stem}-{number}{suffix}")
        try:
            if folder:
                path.mkdir()
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            number += 1
            continue
        return path


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a whole file or nothing: a temporary file, synced, then renamed into place.
    ``text``: a string (written as UTF-8), or the UTF-8 bytes themselves.

    A crash leaves the old file (or none), never a half-written one.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as handle:
        handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


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
    except UnicodeEncodeError:
        return "a text holds half a character (a lone UTF-16 surrogate)"
    except RecursionError:
        return _NESTED
    except ValueError as exc:  # an integer longer than Python writes, or pydantic's depth
        return _unwritable(exc)
    problem = _line_size_problem(size) or _parse_json(line)[1]
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


# --- JSON state files ---------------------------------------------------------------------
#
# What the harness writes and reads back (a report folder's manifest.json and report.json, the
# pinned baseline, a batch manifest, review.html's marks file, the ``latest`` pointer): one
# reader, with the JSONL loader's limits and words, the format version checked on every read;
# and one writer, which refuses to write what that reader would refuse.


Upgrade = Callable[[int, dict[str, Any]], dict[str, Any]]
"""Reads a document of an older format version (given with its version) as the current one."""


class StateFile(NamedTuple):
    """One kind of JSON state file: its name in messages, its format version, its size limit
    and the wording of its refusals. Each kind is one constant beside its model."""

    what: str
    """What the file is, in messages ("baseline", "batch manifest")."""
    remedy: str
    """What to do when the file cannot be used ("re-pin it with ...")."""
    current: int | None = None
    """The format version this judge writes and reads; None: the file has no version."""
    version_field: str = "format_version"
    upgrade: Upgrade | None = None
    """Reads a document of an older version as one of ``current`` (raising ``ValueError`` when
    it cannot); None: an older version is refused with ``remedy``."""
    version_refusal: Callable[[Path, dict[str, Any]], str | None] | None = None
    """The whole refusal for a version of this file's own wording (an old format that needs
    its own explanation), or None to let the general rules decide."""
    damaged: str = "{where}: {problem}; {remedy}"
    """A file that cannot be read as JSON. ``{where}`` is ``path:line`` when the line is known,
    ``{located}`` the problem with its line ("line 3: ..."), beside ``{path}``, ``{problem}``
    and ``{remedy}``."""
    invalid: str = "{path}: {problem}; {remedy}"
    """JSON that the model refuses (``{problem}``: every field's problem, joined)."""
    not_json: str = "not valid JSON"
    max_mb: float = DEFAULT_MAX_FILE_MB
    error: type[HarnessError] = InputError
    """Raised with the one line (an ``InputError`` holds it as its one problem)."""

    @property
    def version_noun(self) -> str:
        return "format" if self.version_field == "format_version" else self.version_field

    def fail(self, message: str) -> HarnessError:
        if issubclass(self.error, InputError):
            return self.error([message])
        return self.error(message)

    def damaged_error(self, path: Path, problem: JsonProblem) -> HarnessError:
        line = problem.line
        return self.fail(
            self.damaged.format(
                path=path,
                where=f"{path}:{line}" if line else str(path),
                located=f"line {line}: {problem.text}" if line else problem.text,
                problem=problem.text,
                remedy=self.remedy,
            )
        )


def version_problem(value: dict[str, Any], kind: StateFile) -> tuple[dict[str, Any], str | None]:
    """``value`` as a document of ``kind.current`` (upgraded from an older version when
    ``kind.upgrade`` can), or why it cannot be read: no version, one that is not an integer,
    a newer one (upgrade judge), an older one nothing upgrades. The reason has no location:
    the caller puts the file (or the file and line) before it."""
    if kind.current is None:
        return value, None
    field, noun, current = kind.version_field, kind.version_noun, kind.current
    if field not in value:
        return value, (
            f"{kind.what} without a {field} (this judge reads {noun} {current}); {kind.remedy}"
        )
    version = value[field]
    if type(version) is not int:
        return value, f"{field}: {_type_error(['an integer'], version)}"
    if version == current:
        return value, None
    if version > current:
        return value, (
            f"{kind.what} {noun} {version} is newer than this judge reads (up to {current}); "
            f"upgrade judge, or {kind.remedy}"
        )
    if kind.upgrade is None:
        return value, (
            f"{kind.what} {noun} {version} is older than this judge reads ({current}); "
            f"{kind.remedy}"
        )
    try:
        upgraded = kind.upgrade(version, value)
    except ValueError as exc:
        return value, f"{kind.what} {noun} {version} cannot be read as {noun} {current} ({exc})"
    return {**upgraded, field: current}, None


def check_version(path: Path, value: dict[str, Any], kind: StateFile) -> dict[str, Any]:
    """``version_problem`` for a whole file: its refusal is one line naming the file."""
    if kind.version_refusal is not None:
        refusal = kind.version_refusal(path, value)
        if refusal is not None:
            raise kind.fail(refusal)
    upgraded, problem = version_problem(value, kind)
    if problem is not None:
        raise kind.fail(f"{path}: {problem}")
    return upgraded


def _decode(path: Path, raw: bytes, kind: StateFile, encoding: str) -> str:
    """Strict UTF-8 (``utf-8-sig``: a leading BOM dropped); the first bad byte, located."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problem = JsonProblem(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", line=line)
        raise kind.damaged_error(path, problem) from None


def load_json_document(path: Path, kind: StateFile) -> Any:
    """The JSON value of a whole file, with the JSONL loader's limits and words: the size
    (``kind.max_mb``), strict UTF-8 (a leading BOM is dropped), integer digits, nesting depth,
    lone surrogates. Anything else is one located line (``kind.damaged``), never a traceback.
    """
    if not path.exists():
        raise kind.damaged_error(path, JsonProblem("file not found"))
    if not path.is_file():
        raise kind.damaged_error(path, JsonProblem("not a regular file"))
    size = path.stat().st_size
    if size > kind.max_mb * 1024 * 1024:
        shown = math.ceil(size / 1024 / 1024 * 10) / 10
        raise kind.damaged_error(
            path,
            JsonProblem(
                f"the file is {shown:g} MB, over the {kind.max_mb:g} MB limit for a {kind.what}"
            ),
        )
    text = _decode(path, path.read_bytes(), kind, "utf-8-sig")
    value, problem = _parse_json(text, kind.not_json)
    if problem is not None:
        raise kind.damaged_error(path, problem)
    return value


def _state_file(
    kind: StateFile | None,
    what: str | None,
    current: int | None,
    version_field: str,
    upgrade: Upgrade | None,
) -> StateFile:
    """``kind``, or a plain one built from the keywords (a file without wording of its own)."""
    if kind is not None:
        return kind
    if what is None:
        raise TypeError("give a StateFile or what= (what the file is, for its messages)")
    return StateFile(
        what=what,
        remedy="delete the file, or write it again with the command that made it",
        current=current,
        version_field=version_field,
        upgrade=upgrade,
    )


@overload
def read_json_document(
    path: Path,
    model: None = None,
    kind: StateFile | None = None,
    *,
    what: str | None = None,
    current: int | None = None,
    version_field: str = "format_version",
    upgrade: Upgrade | None = None,
) -> dict[str, Any]: ...
@overload
def read_json_document(
    path: Path,
    model: type[M],
    kind: StateFile | None = None,
    *,
    what: str | None = None,
    current: int | None = None,
    version_field: str = "format_version",
    upgrade: Upgrade | None = None,
) -> M: ...
def read_json_document(
    path: Path,
    model: type[M] | None = None,
    kind: StateFile | None = None,
    *,
    what: str | None = None,
    current: int | None = None,
    version_field: str = "format_version",
    upgrade: Upgrade | None = None,
) -> M | dict[str, Any]:
    """A JSON state file: read (``load_json_document``), an object, its format version
    checked (``check_version``), then validated into ``model`` (None: the object itself).
    Every refusal is one line that names the file and says what to do.

    ``kind`` describes the file; without it, ``what``, ``current``, ``version_field`` and
    ``upgrade`` make a plain one (``current`` None: no version is checked)."""
    kind = _state_file(kind, what, current, version_field, upgrade)
    value = load_json_document(path, kind)
    if not isinstance(value, dict):
        raise kind.damaged_error(
            path, JsonProblem(f"expected a JSON object, got {type(value).__name__}")
        )
    value = check_version(path, value, kind)
    if model is None:
        return value
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(describe_validation_error(exc))
        raise kind.fail(
            kind.invalid.format(path=path, problem=problems, remedy=kind.remedy)
        ) from None


def json_document_text(
    value: BaseModel | dict[str, Any],
    kind: StateFile | None = None,
    name: object = None,
    indent: int = 2,
    *,
    what: str | None = None,
    by_alias: bool = False,
    extra: dict[str, Any] | None = None,
) -> str:
    """The text of a state file (``json.dumps``, UTF-8, indented, a final newline), refused
    with an ``InputError`` when ``load_json_document`` would refuse it: the harness never
    writes a file that every later command would trip on. ``name``: the file, in the message
    (default: ``kind.what``); ``extra``: keys written after the value's own."""
    kind = _state_file(kind, what, None, "format_version", None)
    try:
        data = (
            value.model_dump(mode="json", by_alias=by_alias)
            if isinstance(value, BaseModel)
            else value
        )
        text = json.dumps(data | (extra or {}), ensure_ascii=False, indent=indent) + "\n"
    except UnicodeEncodeError:
        _refuse(kind, name, "a text holds half a character (a lone UTF-16 surrogate)")
    except RecursionError:
        _refuse(kind, name, _NESTED)
    except ValueError as exc:  # an integer longer than Python writes, or pydantic's depth
        _refuse(kind, name, _unwritable(exc))
    return checked_document_text(text, kind, name)


def _unwritable(exc: ValueError) -> str:
    """Why a value cannot be encoded: nesting deeper than pydantic's serializer goes, or an
    integer longer than Python writes."""
    if "depth" in str(exc):
        return _NESTED
    return f"it cannot be written as JSON ({str(exc).split(';')[0]})"


def checked_document_text(text: str, kind: StateFile, name: object = None) -> str:
    """``text`` (a state file's JSON, encoded by the caller: a model's own fast encoder for a
    large file) if ``load_json_document`` would read it back, else the same ``InputError`` as
    ``json_document_text``: one writer's rules, whoever encoded the text."""
    parsed = _parse_json(checked_size(text, kind, name))[1]
    if parsed is not None:
        _refuse(kind, name, parsed.text)
    return text


def checked_size(text: Text, kind: StateFile, name: object = None) -> Text:
    """``text`` if it is UTF-8 and within ``kind``'s size limit, else ``checked_document_text``'s
    ``InputError``: the part of the writer's rules that needs no reading back (for a text whose
    parts were each checked, ``judge.record.record_json``, which hands over the UTF-8 bytes
    pydantic's serializer made: they are measured as they are)."""
    if isinstance(text, bytes):
        size = len(text)
    else:
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            _refuse(kind, name, "a text holds half a character (a lone UTF-16 surrogate)")
    if size > kind.max_mb * 1024 * 1024:
        shown = math.ceil(size / 1024 / 1024 * 10) / 10
        _refuse(
            kind, name, f"it is {shown:g} MB, over the {kind.max_mb:g} MB limit for a {kind.what}"
        )
    return text


def _refuse(kind: StateFile, name: object, problem: str) -> NoReturn:
    raise InputError(
        [
            f"{name or kind.what}: the {kind.what} is not written: {problem}, and it could "
            "not be read back"
        ]
    )


def write_json_document(
    path: Path,
    value: BaseModel | dict[str, Any],
    kind: StateFile | None = None,
    indent: int = 2,
    *,
    what: str | None = None,
) -> None:
    """Write a state file atomically, after ``json_document_text`` checked it can be read."""
    write_atomic(path, json_document_text(value, kind, path, indent, what=what))


#: A pointer file (``reports/latest``) holds one name; anything longer is not one.
POINTER_MAX_BYTES = 4096


def _pointer_problem(text: str) -> JsonProblem | None:
    lines = split_lines(text.removesuffix("\n"))
    if len(lines) > 1:
        return JsonProblem("holds more than one line", line=2)
    name = lines[0].strip()
    if not name:
        return JsonProblem("is empty")
    if not name.isprintable():
        bad = next(char for char in name if not char.isprintable())
        return JsonProblem(f"holds {_describe_char(bad)}", line=1)
    return None


def read_pointer(path: Path, kind: StateFile) -> str:
    """The name a pointer file holds (one line, strict UTF-8, at most ``POINTER_MAX_BYTES``);
    anything else is one located line (``kind.damaged``)."""
    with path.open("rb") as handle:
        raw = handle.read(POINTER_MAX_BYTES + 1)
    if len(raw) > POINTER_MAX_BYTES:
        too_long = JsonProblem(f"is longer than a pointer file ({POINTER_MAX_BYTES} bytes)")
        raise kind.damaged_error(path, too_long)
    text = _decode(path, raw, kind, "utf-8")
    problem = _pointer_problem(text)
    if problem is not None:
        raise kind.damaged_error(path, problem)
    return text.strip()


def write_pointer(path: Path, name: str, kind: StateFile) -> None:
    """Write a pointer file atomically; a name ``read_pointer`` would refuse is refused."""
    text = name + "\n"
    problem = _pointer_problem(text)
    if problem is None and len(text.encode("utf-8", errors="replace")) > POINTER_MAX_BYTES:
        problem = JsonProblem(f"is longer than a pointer file ({POINTER_MAX_BYTES} bytes)")
    if problem is not None:
        raise InputError([f"{path}: the {kind.what} is not written: the name {problem.text}"])
    write_atomic(path, text)
