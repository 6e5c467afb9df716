"""The one JSON parse path: every JSON text the harness reads, and why one cannot be read.

A JSONL line (``judge.io.jsonl``) and a whole state file (``judge.io.state``) are decoded by
``decode_utf8`` and parsed by ``parse_json``, so that both refuse the same things in the same
words: bytes that are not UTF-8, text that is not JSON, half a UTF-16 character, nesting deeper
than Python recurses, an integer longer than Python reads. A refusal is a ``JsonProblem``
(what is wrong, what to do, the line when known); each reader puts its place before it. Sizes
over a limit are said by ``over_limit`` in one rounding, and a value that cannot be written as
JSON by ``encoding_problem``, for the writers that refuse what these readers would refuse.

The JSONL reader's fast path (pydantic-core's parser, for a file whose every line is plain)
only accepts: a line it cannot read sends the whole file through ``parse_json``, so every
refusal is made and worded here.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, NamedTuple

#: The byte-order mark Windows editors put before a UTF-8 file's first byte (Notepad until 2019,
#: Excel's "CSV UTF-8"). Every reader of the harness drops a leading one and reads on:
#: ``decode_utf8`` decodes as ``utf-8-sig``; a reader of raw bytes strips this.
UTF8_BOM = b"\xef\xbb\xbf"
#: The one phrase for JSON nested deeper than it can be read or written.
NESTED = "nested too deeply (arrays or objects inside each other)"
#: The one phrase for a text that holds half a UTF-16 character, which cannot be written.
LONE_SURROGATE = "a text holds half a character (a lone UTF-16 surrogate)"

# A \uD800-\uDFFF escape in JSON text: possibly half of a UTF-16 pair, which is no character.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


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


def may_hold_lone_surrogate(text: str) -> bool:
    """True when ``text`` has a ``\\u`` escape of a UTF-16 surrogate (half a character, or
    one of the two halves of a whole one): only such a text needs ``parse_json``'s check."""
    return _SURROGATE_ESCAPE.search(text) is not None


def _has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_json(text: str, not_json: str = "not valid JSON") -> tuple[Any, JsonProblem | None]:
    """The JSON value of ``text``, or None and why it cannot be read: the one parsing policy
    of every JSON the harness reads (a JSONL line, a state file), so that each refuses the
    same things (an integer longer than Python reads, nesting deeper than it recurses, half a
    UTF-16 character) in the same words. ``not_json`` starts the message of a syntax error."""
    try:
        value = json.loads(text)
        if may_hold_lone_surrogate(text) and _has_lone_surrogate(value):
            return None, JsonProblem(
                "a \\u escape encodes half a character (a lone UTF-16 surrogate)",
                "the text was cut in the middle of a character",
            )
    except json.JSONDecodeError as exc:
        return None, JsonProblem(
            f"{not_json} ({exc.msg} at column {exc.colno})", line=exc.lineno, syntax=True
        )
    except RecursionError:
        return None, JsonProblem(NESTED, "no record has more than a few levels: fix the line")
    except ValueError as exc:  # json reads integers with int(), which limits their digits
        if "digits" not in str(exc):
            raise
        return None, JsonProblem(
            f"an integer has more than {sys.get_int_max_str_digits()} digits",
            "no field takes a number that long: fix the value",
        )
    return value, None


def decode_utf8(raw: bytes, encoding: str = "utf-8-sig") -> tuple[str, JsonProblem | None]:
    """``raw`` as strict UTF-8 (``utf-8-sig``: a leading BOM dropped), or ``""`` and the first
    bad byte, located by its line."""
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return "", JsonProblem(
            f"not UTF-8 (byte 0x{raw[exc.start]:02x})", "save the file as UTF-8", line=line
        )


def over_limit(subject: str, size: int, limit_mb: float, of: str) -> str:
    """``<subject> is <size> MB, over the <limit> MB limit for <of>``: the size rounded up to
    a tenth, so that 4.01 MB is "4.1", never "4.0" (which would look within a 4 MB limit)."""
    shown = math.ceil(size / 1024 / 1024 * 10) / 10
    return f"{subject} is {shown:g} MB, over the {limit_mb:g} MB limit for {of}"


def encoding_problem(exc: ValueError | RecursionError) -> str:
    """Why a value cannot be written as JSON, from what encoding it raised: half a character
    (``UnicodeEncodeError``), nesting deeper than Python recurses or pydantic's serializer goes,
    or an integer longer than Python writes."""
    if isinstance(exc, UnicodeEncodeError):
        return LONE_SURROGATE
    if isinstance(exc, RecursionError) or "depth" in str(exc):
        return NESTED
    return f"it cannot be written as JSON ({str(exc).split(';')[0]})"


def show_value(value: object, limit: int = 40) -> str:
    """A value as it is written in JSON, shortened (a TOML date or a path: as text)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
