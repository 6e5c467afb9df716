"""``reports/history.html``: the season as a picture, one self-contained page; and each
folder's ``marks.json``, the gate's decisions and the night's summary that page reads instead
of the whole record and the night's values.

Like ``review.html`` (``judge.report.review_page``): no network, no server, no external file.
The page's data travels as JSON in a ``<script type="application/json">`` block (``<``, ``>``
and ``&`` escaped, so no text closes it) and reaches the page through ``textContent`` and SVG
attributes, never as HTML. A Content-Security-Policy allows exactly the page's own script, by
the hash of its inlined text, and nothing else.

Per question type and for ``all``, one small chart per metric (``judge.results.season_view``):
each night's mean with its 95 % interval, the gate's decision marked by a shape and a word
(collapse, regressed, fell over the season, listed: readable without colour), the pinned
baseline as a dashed line, and on the x-axis a letter for each change under the numbers (J the
judge, G the golden set, C the corpus, E the index's embedder, R the run's other settings, H the
harness), listed in words under the charts. Clicking a point lists the questions that moved
that night, with their diagnosis, and links that night's review.html and report.md.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from judge.report.review_page import _csp_hash, review_asset
from judge.report.review_parts import json_for_script
from judge.results.night_summary import summarise_night
from judge.results.season_view import (
    CHANGE_MARK,
    DECISION_MARK,
    DECISION_TEXT,
    NightMarks,
    SeasonView,
    night_marks,
)

if TYPE_CHECKING:
    from judge.record.model import Record

#: The page's file in the reports directory, and each folder's marks file.
HISTORY_FILE = "history.html"
NIGHT_MARKS_FILE = "marks.json"
HISTORY_BODY = "history.html"
HISTORY_STYLE = "history.css"
HISTORY_SCRIPT = "history.js"


def record_marks(record: Record) -> NightMarks:
    """The night's ``marks.json``: the gate's decisions, from the record's comparisons with the
    last run, the pinned baseline and the season, with each moved question's diagnosis; and
    the night's summary (``judge.results.night_summary``), so that the season reads this small
    file instead of the night's values question by question."""
    comparisons = [*record.comparisons, *record.baseline, *record.season]
    diagnosis = {row.question_id: str(row.diagnosis) for row in record.questions}
    marks = night_marks(record.gate.verdict, comparisons, diagnosis)
    return marks.model_copy(update={"night": summarise_night(record.manifest, record.values())})


def marks_json(record: Record) -> str:
    """``marks.json`` of a record's folder."""
    return record_marks(record).model_dump_json() + "\n"


def _points(view: SeasonView, type_name: str, metric: str) -> list[Any]:
    series = view.series[(type_name, metric)]
    return [
        None if p is None else [round(p.mean, 4), round(p.low, 4), round(p.high, 4), p.n]
        for p in series.points
    ]


def season_page_data(view: SeasonView, baseline_name: str | None = None) -> dict[str, Any]:
    """What the page's script draws: the nights (with their links), per type and metric the
    points, decisions, baseline and moved questions, and the changes."""
    cells: dict[str, dict[str, Any]] = {}
    for (type_name, metric), series in view.series.items():
        if all(p is None for p in series.points):
            continue
        cells.setdefault(type_name, {})[metric] = {
            "points": _points(view, type_name, metric),
            "decisions": series.decisions,
            "baseline": None if series.baseline is None else round(series.baseline, 4),
            "moved": {
                str(night): [[m.id, m.old, m.new, m.diagnosis] for m in moved]
                for night, moved in series.moved.items()
            },
        }
    return {
        "nights": [
            {
                "folder": n.folder,
                "date": n.started_at,
                "verdict": n.verdict,
                "review": f"{n.folder}/review.html",
                "report": f"{n.folder}/report.md",
            }
            for n in view.nights
        ],
        "types": [t for t in view.types if t in cells],
        "metrics": view.metrics,
        "cells": cells,
        "changes": [[c.night, c.kind, CHANGE_MARK[c.kind], c.text] for c in view.changes],
        "decisionText": DECISION_TEXT,
        "decisionMark": DECISION_MARK,
        "baselineName": baseline_name,
    }


def _inline(name: str) -> str:
    return "\n" + review_asset(name)


def render_history_page(
    view: SeasonView, reports_dir: str, baseline_name: str | None = None
) -> bytes:
    """history.html, as UTF-8."""
    style = _inline(HISTORY_STYLE)
    script = _inline(HISTORY_SCRIPT)
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src {_csp_hash(script)}"
    body = review_asset(HISTORY_BODY).format(
        where=html.escape(reports_dir), nights=len(view.nights), legend=_legend()
    )
    head = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f"<title>Season history · {html.escape(reports_dir)}</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n{body}"
        '<script type="application/json" id="season-data">'
    )
    tail = f"</script>\n<script>{script}</script>\n</body>\n</html>\n"
    data = json_for_script(season_page_data(view, baseline_name))
    return b"".join([head.encode("utf-8"), data, tail.encode("utf-8")])


def _legend() -> str:
    """The legend, static: each decision's shape and word, each change's letter."""
    shapes = {
        "collapsed": "✖",
        "regressed": "▼",
        "season": "◆",
        "listed": "△",
        "ok": "●",
    }
    decisions = " · ".join(f"{shapes[d]} {html.escape(t)}" for d, t in DECISION_TEXT.items())
    changes = " · ".join(f"{m} {k}" for k, m in CHANGE_MARK.items())
    return f"<span>{decisions}</span> <span>changes: {changes}</span>"
