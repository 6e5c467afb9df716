"""Every rendered file of a report folder, from its ``Record`` (written by
``judge.record.store``, which also encodes ``report.json`` and ``values.json``; the folder's
``run.jsonl``, the input that was judged, is the wiring's copy).

- ``manifest.json``  format version first; configuration, fingerprints, versions, timings
- ``report.md``      per-type tables, the comparison with earlier runs, items needing review
- ``report.json``    the run record itself (``judge.record.model``), for machines and for every
                     later command that reads the folder
- ``values.json``    the run's values question by question: what later runs compare with
- ``verdicts.csv``   one row per question: every metric, score, quote, match kind, span
- ``verdicts.jsonl`` the verdicts as data; ``items.jsonl`` what the judge saw
- ``review.html``    the reviewers' page
- ``values.svg``     per type, tonight beside the last compatible run (report.md shows it)
- ``marks.json``     the gate's decisions per type and metric, with the questions that moved,
                     and the night's summary (per type and metric the value, interval and n;
                     the settings its changes are computed from): what
                     ``reports/history.html`` reads (``judge.report.history_page``)
- ``missing-labels.csv`` with ``[judge.chunks]`` on: the possible missing labels, for
                     ``judge golden accept``
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from judge.io.jsonl import jsonl_text
from judge.record.model import Record
from judge.record.store import REPORT_FILE, record_json, values_json
from judge.report.chunks_text import MISSING_LABELS_FILE, missing_labels_file
from judge.report.data import verdicts_csv
from judge.report.history_page import NIGHT_MARKS_FILE, marks_json
from judge.report.markdown import render_report_md
from judge.report.review_page import render_review_page
from judge.report.values_svg import VALUES_SVG, values_svg


def render_files(report: Record, *, with_record: bool = True) -> dict[str, str | bytes]:
    """File name → text, for every file of the folder (``with_record`` False: all but
    ``report.json``, for a folder whose record is the source they are rendered from). The
    record and the two JSONL files are the UTF-8 bytes their encoder made; the rest text."""
    # Each row's item and verdict encoded once, for the two JSONL files.
    lines = row_lines(report)
    files: dict[str, str | bytes] = {
        "manifest.json": report.manifest.to_json(),
        "report.md": render_report_md(report),
        **({REPORT_FILE.what: record_json(report)} if with_record else {}),
        "values.json": values_json(report),
        "verdicts.csv": verdicts_csv(report),
        "verdicts.jsonl": jsonl_text(report.verdicts) if lines is None else lines.verdicts_jsonl(),
        "items.jsonl": jsonl_text(report.items) if lines is None else lines.items_jsonl(),
        "review.html": render_review_page(report),
        NIGHT_MARKS_FILE: marks_json(report),
    }
    picture = values_svg(report)
    if picture is not None:
        files[VALUES_SVG] = picture
    missing = missing_labels_file(report)
    if missing is not None:
        files[MISSING_LABELS_FILE] = missing
    return files


class RowLines(NamedTuple):
    """Each question row's item and verdict encoded once, as one line of UTF-8 JSON each (None:
    the row has none), without their unset optional fields: the lines of ``items.jsonl`` and
    ``verdicts.jsonl``. Bytes, as pydantic's serializer makes them and the files are written:
    neither decoded nor encoded again."""

    items: list[bytes | None]
    verdicts: list[bytes | None]

    def items_jsonl(self) -> bytes:
        """``items.jsonl``: the item of every judged question (``Record.items``)."""
        return b"".join(
            [
                item + b"\n"
                for item, verdict in zip(self.items, self.verdicts, strict=True)
                if item is not None and verdict is not None
            ]
        )

    def verdicts_jsonl(self) -> bytes:
        """``verdicts.jsonl``: every verdict (``Record.verdicts``)."""
        return b"".join([verdict + b"\n" for verdict in self.verdicts if verdict is not None])


def row_lines(record: Record) -> RowLines | None:
    """The rows' items and verdicts as JSON lines, each encoded once (None when one cannot be
    encoded, e.g. half a UTF-16 character: ``judge.io.jsonl.jsonl_text`` then says which)."""
    rows = record.questions
    try:
        return RowLines(
            [None if r.item is None else _json(r.item, exclude_none=True) for r in rows],
            [None if r.verdict is None else _json(r.verdict, exclude_none=True) for r in rows],
        )
    except PydanticSerializationError:
        return None


def _json(model: BaseModel, **options: Any) -> bytes:
    """``model_dump_json`` as the UTF-8 bytes pydantic makes (not decoded to a string)."""
    return model.__pydantic_serializer__.to_json(model, **options)
