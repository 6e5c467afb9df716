"""``values.svg``: per type, tonight's values beside the last compatible run's, as a small
picture that report.md embeds first (GitHub renders it in a pull request), so that a reviewer
sees the change before the tables.

Drawn from the record's comparisons with the last compatible run (``Record.comparisons``):
each (type, metric) over the questions valued in both runs, the earlier mean as a grey bar and
tonight's as a dark one, with both numbers, the change's 95 % interval and n written beside
them, and the gate's word for a cell it marked (collapse, regressed, listed). Readable without
colour: the bars are in a fixed order (last run above, tonight below) and every number is text.
Only the metrics the season's charts show (``judge.results.season_view``): retrieval at
``context_k``, faithfulness, relevance, correctness, the share of ok verdicts.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from judge.axes import SCORE_METRICS
from judge.formatting import markdown_text as md
from judge.results.compare import Change
from judge.results.night_summary import CHARTED_JUDGE, CHARTED_RETRIEVAL

if TYPE_CHECKING:
    from judge.record.model import Record

VALUES_SVG = "values.svg"
#: report.md's line that shows the picture: fixed text, no data in it (the one image and link
#: target report.md holds; tests/hostile/test_outputs.py allows exactly this line).
PICTURE_LINE = f"![Per type: tonight beside the last compatible run]({VALUES_SVG})"
WIDTH = 640
ROW_H = 18
TITLE = 22
LABEL_W = 100
BAR_X = 104
BAR_W = 200
TEXT_X = 312
WORDS = {"collapsed": "collapse", "regressed": "regressed", "listed": "listed"}


def _charted(report: Record) -> list[Change]:
    """The last-run changes of the charted metrics, types in the record's order."""
    k = report.manifest.config.retrieval.context_k
    wanted = {f"{m}@{k}" for m in CHARTED_RETRIEVAL} | {"mrr", *CHARTED_JUDGE}
    return [
        change
        for comp in report.comparisons
        if comp.baseline is not None
        for change in comp.changes
        if change.metric in wanted
    ]


def _row(change: Change, y: int) -> list[str]:
    top = 2.0 if change.metric in SCORE_METRICS else 1.0
    old_w = BAR_W * max(0.0, min(1.0, change.old / top))
    new_w = BAR_W * max(0.0, min(1.0, change.new / top))
    word = WORDS.get(change.direction)
    text = (
        f"{change.old:.3f} → {change.new:.3f} ({change.delta:+.3f} "
        f"[{change.low:+.3f}, {change.high:+.3f}], n {change.n})" + (f" {word}" if word else "")
    )
    return [
        f'<text x="0" y="{y + 12}">{escape(change.metric)}</text>',
        f'<rect x="{BAR_X}" y="{y + 2}" width="{old_w:.1f}" height="6" fill="#b8b8b8"/>',
        f'<rect x="{BAR_X}" y="{y + 9}" width="{new_w:.1f}" height="6" fill="#2b4f9e"/>',
        f'<text x="{TEXT_X}" y="{y + 12}"'
        + (' font-weight="bold"' if word else "")
        + f">{escape(text)}</text>",
    ]


def values_svg(report: Record) -> str | None:
    """The picture (None: nothing was compared with a last run)."""
    changes = _charted(report)
    if not changes:
        return None
    by_type: dict[str, list[Change]] = {}
    for change in changes:
        by_type.setdefault(change.type, []).append(change)
    body: list[str] = []
    y = 0
    legend = "per type: the last compatible run (upper bar) and tonight (lower bar)"
    body.append(f'<text x="0" y="{y + 14}" font-weight="bold">{escape(legend)}</text>')
    y += TITLE
    for type_name, rows in by_type.items():
        body.append(f'<text x="0" y="{y + 15}" font-weight="bold">{escape(type_name)}</text>')
        y += TITLE
        for change in rows:
            body.extend(_row(change, y))
            y += ROW_H
    height = y + 4
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">\n'
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )


def picture_lines(report: Record) -> list[str]:
    """report.md's lines for the picture, and the gate's notes under it (a changed embedder,
    by name or by its canaries, among them); none when there is no picture."""
    if not _charted(report):
        return []
    notes = [f"- {md(note)}" for note in report.gate.notes]
    return ["", PICTURE_LINE, *notes]
