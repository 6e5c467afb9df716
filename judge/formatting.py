"""Numbers and cells as people read them: shared by the report, the audit and the CLI.

Everything the tool shows comes partly from untrusted data: the user's RAG system writes the
answers, the corpus the chunks, the judge model the notes and quotes, people the labels and
sheets. Three rules keep that text from acting on where it is shown, each in one function
here so that no caller writes its own (and none can differ):

- ``terminal_text``: anything printed (a terminal obeys escape sequences in its output);
- ``bom_csv`` (through ``spreadsheet_text``): every cell of every CSV the tool writes (a
  spreadsheet runs formulas);
- ``markdown_text``: anything put into Markdown (a renderer turns HTML, links and table pipes
  into structure).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

#: Below this many labelled pairs, figures say that their intervals are wide.
FEW_ITEMS = 50


def fmt_share(value: float | None) -> str:
    """A share as a percentage, "–" when undefined."""
    return "–" if value is None else f"{value:.1%}"


def fmt_number(value: float | None) -> str:
    """A statistic with two decimals, "–" when undefined."""
    return "–" if value is None else f"{value:.2f}"


def fmt_interval(interval: tuple[float, float] | None, percent: bool) -> str:
    """An interval to follow its estimate (" [low, high]", shares as percentages); "" when
    there is none."""
    if interval is None:
        return ""
    fmt = fmt_share if percent else fmt_number
    return f" [{fmt(interval[0])}, {fmt(interval[1])}]"


# --- terminals -------------------------------------------------------------------------------

# C0 controls but \t and \n, DEL, C1 controls (\x9b alone starts a CSI sequence on some
# terminals), the bidirectional controls that reorder what is shown (U+202E prints text
# backwards, "Trojan Source"), the line and paragraph separators, and the invisible Unicode tag
# characters (used to smuggle hidden instructions past a reader). Zero-width joiners are left
# alone: emoji and some scripts need them, and they change no other text.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\U000e0000-\U000e007f]"
)
_HIDDEN_ONE_LINE = re.compile(_HIDDEN.pattern[:-1] + "\t\n]")


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _visible(char: str) -> str:
    """A control character as Python would write it in a string: \\r, \\x1b, \\u202e."""
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_text(text: object, *, one_line: bool = False) -> str:
    """Text from data, safe to print: every control character is shown as an escape
    (``\\x1b``, ``\\x9b``, ``\\u202e``), so none reaches the terminal.

    A terminal obeys what it prints: ESC sequences retitle the window, clear the screen or
    move the cursor to overwrite earlier lines, BEL rings, C1 codes act like ESC, bidi
    overrides show text other than what it is. Newlines stay (answers and chunks have lines),
    as do tabs; a CRLF becomes a newline. With ``one_line`` (ids, names, one problem per line)
    newlines and tabs are escaped too, so data cannot start a line that looks like ours.
    Apply it to data before adding our own colours, never to styled text.
    """
    text = str(text).replace("\r\n", "\n")
    pattern = _HIDDEN_ONE_LINE if one_line else _HIDDEN
    return pattern.sub(lambda m: _visible(m[0]), text)


# --- spreadsheets ----------------------------------------------------------------------------

#: What makes a spreadsheet read a cell as a formula (OWASP "CSV injection"); the full-width
#: forms too, which a Japanese spreadsheet may take for the ASCII ones.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")
_FORMULA_CHARS = frozenset(FORMULA_START)  # each one character: a cell's first is looked up


def spreadsheet_text(text: str) -> str:
    """Text a spreadsheet keeps as text: a cell starting with = + - @ would be read as a
    formula (run on opening, or rewritten on saving), so it gets the usual leading quote."""
    return "'" + text if text.startswith(FORMULA_START) else text


def from_spreadsheet_text(cell: str) -> str:
    """A cell read back from a sheet ``bom_csv`` wrote: the leading quote that
    ``spreadsheet_text`` added is removed again (a spreadsheet keeps it in the text)."""
    rest = cell[1:]
    return rest if cell.startswith("'") and rest.startswith(FORMULA_START) else cell


def bom_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text with a UTF-8 BOM first, so that spreadsheets read the Japanese right.

    The one CSV writer of the tool: every text cell goes through ``spreadsheet_text`` here, so
    no caller can forget a column whose text came from data (an id ``=HYPERLINK(...)`` would
    otherwise be a live formula). Numbers, booleans and None stay what they are.
    """
    handle = io.StringIO()
    writer = csv.writer(handle)
    starts = _FORMULA_CHARS
    for row in [header, *rows]:
        # spreadsheet_text, inlined: a 10,000-question sheet has a few hundred thousand cells.
        writer.writerow(["'" + c if isinstance(c, str) and c[:1] in starts else c for c in row])
    return "\ufeff" + handle.getvalue()


# --- Markdown --------------------------------------------------------------------------------

# Markdown syntax characters that can act mid-line: emphasis, code spans, links and images
# ([ ] opens them), table cells (|), math ($ on GitHub), strike-through (~), and the backslash
# itself. "_" between two letters or digits does nothing (ids like out_of_scope stay readable).
_MARKDOWN_PUNCT = re.compile(r"[\\`*\[\]|$~]|(?<![^\W_])_|_(?![^\W_])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


@contextmanager
def csv_field_limit(limit: int) -> Iterator[None]:
    """The csv module's field size limit (process-wide, 128 KiB by default: shorter than a long
    chunk or answer) raised to ``limit`` bytes while a file the tool wrote, or a user's file, is
    read, then restored: every CSV the tool writes (``bom_csv``) is one it can read back."""
    old = csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def markdown_text(text: object) -> str:
    """Data as Markdown text that renders as exactly that text (GitHub, GitLab, VS Code).

    A renderer turns ``<script>`` or ``<img onerror=...>`` into HTML, ``[x](javascript:...)``
    into a link, a ``|`` or a newline inside a table into new cells or rows. So ``< > &``
    become entities, Markdown punctuation is backslash-escaped (no link, image, code span or
    emphasis can start), and line breaks become spaces, so data stays inside the line or table
    cell it was put in. Control characters are shown as in ``terminal_text`` (people ``cat``
    report files). Use it for every piece of data, in text and in table cells alike.
    """
    text = re.sub("[ \t\n]+", " ", terminal_text(text)).strip(" ")
    text = _MARKDOWN_PUNCT.sub(lambda m: "\\" + m[0], text)
    return re.sub("[&<>]", lambda m: _HTML[m[0]], text)


#: How every timestamped output of the harness is named (report, sweep, stability and batch
#: folders or files): UTC, to the second, sortable as text.
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"


def timestamp(moment: datetime) -> str:
    """``moment`` (UTC) as the harness names its timestamped outputs: ``20261201T165800Z``."""
    return moment.strftime(STAMP_FORMAT)
