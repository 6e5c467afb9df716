"""``judge bars suggest`` and ``judge run --bars``: per-type bars suggested from a report
folder's record, written into judge.toml, and checked on a run (``judge.results.bars``)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from judge.config import Config, bar_problems
from judge.errors import ConfigError, InputError
from judge.io.write import write_atomic
from judge.record.store import ReportsDir
from judge.results.bars import (
    SUGGEST_MARGIN_SCORE,
    SUGGEST_MARGIN_SHARE,
    Suggested,
    bars_toml,
    suggest_bars,
)


def default_bar_metrics(config: Config) -> list[str]:
    """What ``judge bars suggest`` sets bars on unless told: the judge's two scores and recall at
    the context the generator saw."""
    return ["faithfulness", "relevance", f"recall@{config.retrieval.context_k}"]


class Suggestion(NamedTuple):
    folder: str
    """The report folder the values came from."""
    bars: list[Suggested]
    toml: str
    """The ``[bars]`` table to paste (it parses back to the floors of ``bars``)."""


def suggest(
    config: Config,
    folder_name: str | None,
    metrics: Sequence[str] | None = None,
    margin: float | None = None,
) -> Suggestion:
    """Today's per-type values of a report folder (the latest by default) minus a margin.

    ``margin`` is on the 0-1 share scale (default 0.05); the judge's 0-2 scores get twice it
    (default 0.10), the same step on their scale, as the gate's two margins.
    """
    metrics = list(metrics or default_bar_metrics(config))
    unknown = bar_problems({m: {} for m in metrics}, (), (), config.retrieval.ks)
    unknown = [p for p in unknown if "unknown metric" in p]
    if unknown:
        raise InputError(unknown)
    folder = ReportsDir(config.reports.dir).folder(folder_name)
    record = folder.record()
    share = SUGGEST_MARGIN_SHARE if margin is None else margin
    score = SUGGEST_MARGIN_SCORE if margin is None else 2 * margin
    suggested = suggest_bars(
        metrics, record.judge, record.retrieval, config.data.question_types, share, score
    )
    if not suggested:
        raise ConfigError(
            f"{folder.path}: no question type has a value for {', '.join(metrics)}; nothing to "
            "set a bar on"
        )
    margins = f"{share:.2f} on 0-1 shares and {score:.2f} on 0-2 scores"
    return Suggestion(folder.name, suggested, bars_toml(suggested, folder.name, margins))


#: A table header line: ``[name]``, ``[a.b]``, ``[[array]]``, with its key path.
_HEADER = re.compile(r"^[ \t]*\[\[?[ \t]*([^\]]*?)[ \t]*\]\]?[ \t]*(#.*)?$")


def _is_bars_header(key_path: str) -> bool:
    head = key_path.split(".", 1)[0].strip().strip("\"'")
    return head == "bars"


#: A dotted key of the bars at the top of the file: ``bars.faithfulness.factual = 1.5``
#: (``"bars".x`` and ``'bars'.x`` too), one line each.
_DOTTED_BARS = re.compile(r"""^[ \t]*(bars|"bars"|'bars')[ \t]*\.""")


def _without_bars(text: str) -> tuple[str, int | None]:
    """The text with every ``[bars]`` and ``[bars.*]`` table removed (header to the next
    header), and the dotted keys of the bars above the first table (``bars.x.y = 1.5``); and
    where the first table began (a character offset), or None if there was none (the new
    table then goes at the end: in place of dotted keys at the top it would take in the top
    keys after them). The caller checks that the rest parses to the file without its bars."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    at: int | None = None
    inside, top = False, True
    for line in lines:
        header = _HEADER.match(line.rstrip("\r\n"))
        if header:
            top = False
            inside = _is_bars_header(header.group(1))
            if inside and at is None:
                at = sum(len(k) for k in kept)
        if top and _DOTTED_BARS.match(line):
            continue
        if not inside:
            kept.append(line)
    return "".join(kept), at


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def write_bars(path: Path, table: str, *, replace: bool = False) -> Path:
    """Write a ``[bars]`` table into a configuration file, atomically, keeping every other byte
    of it as it was: appended at the end, or, with ``replace``, in place of the existing bars
    tables and dotted keys. Refused when the file has bars and ``replace`` is not given, and
    when the bars are written in a way this cannot replace by lines (``bars = {...}``, a dotted
    key's value over several lines): then say so, so the user edits it by hand. The result is checked to parse to the same file with the
    new bars before it replaces the old one. A BOM (the file saved in Notepad) stays before it."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 ({exc.reason}); fix the file first") from None
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text.removeprefix(bom)
    before = _parse(text, path)
    if "bars" in before and not replace:
        raise ConfigError(
            f"{path}: already has a [bars] table; give --replace to replace it, or paste the "
            "snippet by hand ('judge bars suggest' without --write prints it)"
        )
    rest, at = _without_bars(text)
    expected = {k: v for k, v in before.items() if k != "bars"}
    try:
        same = _parse(rest, path) == expected
    except ConfigError:  # a value over several lines, cut at its first: not ours to mend
        same = False
    if not same:
        raise ConfigError(
            f"{path}: its bars are not written as [bars] tables or one-line dotted keys (an "
            "inline table?), so they cannot be replaced line by line; edit them by hand"
        )
    newline = "\r\n" if "\r\n" in text else "\n"
    table_text = table.replace("\n", newline)
    if at is None:  # appended, after a blank line
        end = "" if not rest or rest.endswith("\n") else newline
        new = rest + end + (newline if rest else "") + table_text
    else:  # where the old bars were, a blank line before what followed them
        new = rest[:at] + table_text + (newline if rest[at:] else "") + rest[at:]
    wanted = bars_of_toml(table, path)
    if _parse(new, path) != {**expected, "bars": wanted}:  # pragma: no cover (a bug of ours)
        raise ConfigError(f"{path}: the bars could not be written cleanly; paste them by hand")
    write_atomic(path, bom + new)
    return path


def bars_of_toml(table: str, path: Path) -> dict[str, Any]:
    """The floors a ``[bars]`` snippet holds."""
    parsed = _parse(table, path)
    bars = parsed.get("bars", {})
    return bars if isinstance(bars, dict) else {}


def bars_asked(config: Config, asked: bool, *, otherwise: str = "") -> bool:
    """Whether a run checks the configuration's bars (``asked``: ``judge run --bars``, the
    nightly of a configuration with a ``[bars]`` table, the pytest plugin): the one refusal,
    before anything is judged, when bars are asked for and there are none. ``otherwise``: what
    else the caller can do ("leave out --bars"). The checks go into the record's gate
    (``judge.pipeline.build.build_report``)."""
    if asked and not config.bars:
        where = config.source or "the configuration"
        tail = f", or {otherwise}" if otherwise else ""
        raise ConfigError(
            f"{where}: no [bars] table; write one with 'judge bars suggest --write' "
            f"(--config {where}){tail}"
        )
    return asked
