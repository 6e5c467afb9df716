"""Render per-type tables as aligned plain text (terminal, logs) or Markdown (reports)."""

from __future__ import annotations

import math
import unicodedata

from judge.formatting import markdown_text, terminal_text
from judge.grouped import ALL
from judge.results.tables import TypeTable

WEAKEST_MARK = "◀ weakest"


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _cell(value: object, is_count: bool) -> str:
    if is_count:
        return str(int(value))  # type: ignore[call-overload]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{float(value):.3f}"  # type: ignore[arg-type]


def _rows(table: TypeTable) -> tuple[list[str], list[list[str]]]:
    """Header and body cells as they are; type names come from the golden set (data), so each
    renderer escapes every cell for where it goes."""
    header = ["type", *table.count_columns, *table.metrics, ""]
    body = []
    for row in table.rows:
        type_name = row["type"]
        cells = [str(type_name)]
        cells += [_cell(row[c], True) for c in table.count_columns]
        cells += [_cell(row[m], False) for m in table.metrics]
        cells.append(WEAKEST_MARK if type_name == table.weakest else "")
        body.append(cells)
    return header, body


def render_text(table: TypeTable) -> str:
    """An aligned plain-text table; the ``all`` row is set off by a rule."""
    header, body = _rows(table)
    header = [terminal_text(c, one_line=True) for c in header]
    body = [[terminal_text(c, one_line=True) for c in cells] for cells in body]
    widths = [max(_width(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            pad = " " * (widths[i] - _width(cell))
            out.append(cell + pad if i == 0 or i == len(cells) - 1 else pad + cell)
        return "  ".join(out).rstrip()

    rule = "-" * len(line(header))
    lines = [line(header), rule]
    for cells in body:
        if cells[0] == ALL:
            lines.append(rule)
        lines.append(line(cells))
    return "\n".join(lines)


def render_markdown(table: TypeTable) -> str:
    """A Markdown table; the weakest type is marked, ``all`` is bold."""
    header, body = _rows(table)
    lines = [
        "| " + " | ".join(markdown_text(c) for c in header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 2) + ["---"]) + "|",
    ]
    for cells in body:
        bold = cells[0] == ALL
        cells = [markdown_text(c) for c in cells]
        if bold:
            cells = [f"**{c}**" if c else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
