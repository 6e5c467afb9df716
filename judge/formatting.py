"""Numbers and cells as people read them: shared by the report, the audit and the CLI."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

#: Below this many labelled pairs, figures say that their intervals are wide.
FEW_ITEMS = 50


def fmt_share(value: float | None) -> str:
    """A share as a percentage, "–" when undefined."""
    return "–" if value is None else f"{value:.1%}"


def fmt_number(value: float | None) -> str:
    """A statistic with two decimals, "–" when undefined."""
    return "–" if value is None else f"{value:.2f}"


def spreadsheet_text(text: str) -> str:
    """Text a spreadsheet keeps as text: a cell starting with = + - @ would be read as a
    formula (run on opening, or rewritten on saving), so it gets the usual leading quote."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def bom_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text with a UTF-8 BOM first, so that spreadsheets read the Japanese right."""
    handle = io.StringIO()
    writer = csv.writer(handle)
    writer.writerow(header)
    writer.writerows(rows)
    return "\ufeff" + handle.getvalue()
