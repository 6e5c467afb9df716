"""Strict input types, the id and text checks, and reading a UTF-8 file within its limits.

Refused before parsing, each with a message that says what to do: a path that does not exist
or is reached through a symlink (inputs are read from where they are, never through a link that
may point anywhere), a file larger than the limit, bytes that are not UTF-8.

One parsing policy for every input model (the golden set, runs, labels and ``judge.toml``):
a value must already have the JSON (or TOML) type its field declares. Lax parsing would read
``"2"``, ``2.0`` or ``true`` as the score 2 or 1 and ``"yes"`` as true, so the scalar types
below are strict: ``StrictInt`` (an integer, never a float, a bool or a string),
``StrictFloat`` (a number: an integer like ``1`` is a number too, a bool or a string is not),
``StrictBool`` (``true``/``false`` only). Lists still fill tuple fields and ISO 8601 strings
still fill ``IsoDatetime`` fields: the records come from JSON, which has no tuples or dates.
``tests/io/test_text.py`` checks that no input model declares a lax int, float or bool.
"""

from __future__ import annotations

import os
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Strict,
    StringConstraints,
)

from judge.errors import InputError
from judge.io.json import decode_utf8, show_value

# The limit's home is judge.io.limits; re-exported for the readers that import it from here.
from judge.io.limits import DEFAULT_MAX_FILE_MB as DEFAULT_MAX_FILE_MB

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
        f'must be an ISO 8601 date-time string such as "2026-11-21T09:00:00Z", not {show_value(value)}'
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


def describe_char(char: str) -> str:
    """``U+0009 (a tab)``: a character as a message names it, visible whatever it is."""
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
                f"contains {describe_char(char)} at character {position}; ids may not contain "
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
                f"contains {describe_char(char)} at character {position}; {kind} may not hold "
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
    # IsoDatetime): tests/io/test_text.py fails for any model that declares a lax one.


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
    text, problem = decode_utf8(path.read_bytes())
    if problem is not None:
        raise InputError([problem.message(f"{path}:{problem.line}")])
    return text


def split_lines(text: str) -> list[str]:
    """Lines split on \\n only (and a trailing \\r dropped). ``str.splitlines`` would also split
    on U+2028, U+2029 and U+0085, which JSON strings may contain raw."""
    return [line.removesuffix("\r") for line in text.split("\n")]
