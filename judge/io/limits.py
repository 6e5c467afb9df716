"""The one table of limits: how large a file, a line, a number, a name or a judge's reply may be.

Every reader of the harness refuses what is over these limits, and every writer checks the
same limits before it writes, so that nothing the harness writes can be refused when it is read
back with the same configuration (a 5 MB judge note saved into ``verdicts.jsonl`` that ``judge
report --rederive`` then refuses; a 20 MB ``run.jsonl`` written by an import under
``data.max_file_mb = 5`` that ``judge check`` then refuses). The readers and writers import the
numbers from here (``judge.io.text``, ``judge.io.jsonl``, ``judge.io.state`` re-export the ones
they always had), and ``LIMITS`` lists them for ``docs/bad-input.md`` and the tests.

The functions say, in one located phrase, why a value is over a limit (``file_size_problem``,
``reply_problem``) or take only a value within it (``bounded_count``): a number a judge server
reported is used only when it is a plain integer of at most ``MAX_COUNT`` (a 400-digit
``usage.prompt_tokens`` is "not reported", never an ``OverflowError`` in the estimate).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, NamedTuple

#: Default size limit for one input file; `data.max_file_mb` in judge.toml changes it.
DEFAULT_MAX_FILE_MB = 512
#: Size limit for one line (one record) of a JSONL file, whatever the file limit. A 50 MB answer
#: is valid JSON, but judging and reporting it would take gigabytes of memory (measured: about
#: 30 to 45 times the record's size), so it is refused where it is, with its line.
MAX_RECORD_MB = 4
#: The most digits of an integer any JSON the harness reads may hold (Python's own limit on
#: ``int()`` of a string, which ``json`` uses).
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
#: A pointer file (``reports/latest``) holds one name; anything longer is not one.
POINTER_MAX_BYTES = 4096
#: A judge's reply over this many kilobytes (as JSON writes it) is not kept: it becomes a failed
#: verdict that says why. A verdict keeps the reply's text and the fields read from it (a note,
#: a quote), each at most the reply's size, so twice this plus the rest of a verdict stays far
#: within ``MAX_RECORD_MB``. A judge's reply is a few hundred bytes to a few kilobytes.
MAX_REPLY_KB = 512
#: The largest token count (or other count a server reports) taken as a number; anything larger
#: (a 400-digit ``usage.prompt_tokens``) is "not reported". A trillion tokens is no one reply.
MAX_COUNT = 10**12


class Limit(NamedTuple):
    """One row of the table: what is limited, the limit, where it is configured (``""``:
    fixed) and which readers and writers apply it."""

    what: str
    limit: str
    setting: str
    applied_by: str


#: The table, as ``docs/bad-input.md`` gives it (``tests/io/test_limits.py`` compares them).
LIMITS = (
    Limit(
        "an input file",
        f"{DEFAULT_MAX_FILE_MB} MB",
        "data.max_file_mb",
        "every reader of a golden set, corpus, run, labels, table or trace; the import's writer",
    ),
    Limit(
        "a state file (manifest, report, baseline)",
        f"{DEFAULT_MAX_FILE_MB} MB",
        "",
        "judge.io.state's reader and writer",
    ),
    Limit("one JSONL line", f"{MAX_RECORD_MB} MB", "", "judge.io.jsonl's reader and writer"),
    Limit("an integer's digits", f"{MAX_INT_DIGITS:,}", "", "judge.io.json (every JSON read)"),
    Limit(
        "nesting", "as deep as Python's JSON reader recurses", "", "judge.io.json (every JSON read)"
    ),
    Limit("a pointer file", f"{POINTER_MAX_BYTES:,} bytes", "", "judge.io.state's pointers"),
    Limit("a judge's reply", f"{MAX_REPLY_KB} kB", "", "judge.judging.verdict.Reply"),
    Limit("a reported count", f"{MAX_COUNT:,}", "", "judge.results.tokens"),
)


def shown_size(size: int) -> str:
    """A size in a message: bytes rounded up to a tenth of a kB or MB (never shown smaller
    than it is, so that a size just over a limit never looks within it)."""
    if size < 1024 * 1024:
        return f"{math.ceil(size / 1024 * 10) / 10:g} kB"
    return f"{math.ceil(size / 1024 / 1024 * 10) / 10:g} MB"


def file_size_problem(size: int, max_mb: float, what: str) -> str | None:
    """Why a file of ``size`` bytes cannot be written for a reader with the ``max_mb`` limit
    (``what`` names the file), or None: the writer's side of ``judge.io.text.check_readable``."""
    if size <= max_mb * 1024 * 1024:
        return None
    return (
        f"{what} would be {shown_size(size)}, over the {max_mb:g} MB limit "
        "(data.max_file_mb) that every command reading it applies"
    )


def reply_problem(text: str) -> str | None:
    """Why a judge's reply of ``text`` is not kept, or None: over ``MAX_REPLY_KB`` as JSON
    writes it (a control character takes six bytes there). Such a reply would make a
    ``verdicts.jsonl`` line every later command refuses."""
    size = len(text) if text.isascii() and text.isprintable() else len(_json_bytes(text))
    if size <= MAX_REPLY_KB * 1024:
        return None
    return (
        f"the judge's reply is {shown_size(size)}, over the {MAX_REPLY_KB} kB limit for one "
        "reply, so it is not kept (a verdict is a few hundred bytes: lower max_tokens, or "
        "check the prompt asks for a short note)"
    )


def _json_bytes(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False).encode("utf-8", errors="surrogatepass")


def bounded_reply(data: Any) -> Any:
    """A reply's fields (``judge.judging.verdict.Reply``, before validation) with a text over
    ``MAX_REPLY_KB`` replaced by a failed reply saying why (kind ``error``: not cached, asked
    again on the next run), so that no file or cache keeps it whole. Anything else unchanged."""
    if not isinstance(data, dict):
        return data
    text = data.get("text")
    if not isinstance(text, str):
        return data
    problem = reply_problem(text)
    if problem is None:
        return data
    return {**data, "kind": "error", "text": "", "finish_reason": None, "detail": problem}


def bounded_count(value: object) -> int | None:
    """``value`` when it is a plain integer from 0 to ``MAX_COUNT``, else None ("not
    reported"): a count from a server or a cache is never trusted to be a sane number."""
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value
    return None
