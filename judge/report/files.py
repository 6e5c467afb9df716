"""Every rendered file of a report folder, from its ``Record`` (written by
``judge.record.store``, which also encodes ``report.json`` and ``values.json``; the folder's
``run.jsonl``, the input that was judged, is the wiring's copy).

- ``manifest.json``  format version first; configuration, fingerprints, versions, timings
- ``report.md``      per-type tables, the comparison with earlier runs, items needing review
- ``report.json``    the run record itself (``judge.record.model``), for machines and for every
                     later command that reads the folder
- ``values.json``    the run's values question by question: what later runs compare with
- ``verdicts.csv``   one row per question: every metric, score, quote, match kind, span
- ``verdicts.jsonl`` the verdicts as data; ``items.jsonl`` what the judge saw, each context
                     chunk by id; ``chunks.jsonl`` the chunks' texts, each once
                     (``judge.record.lines``; ``report.json``'s rows reference these lines)
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

from collections.abc import Iterator

from judge.record.model import Record
from judge.record.store import record_files, values_json
from judge.report.chunks_text import MISSING_LABELS_FILE, missing_labels_file
from judge.report.data import verdicts_csv
from judge.report.history_page import NIGHT_MARKS_FILE, marks_json
from judge.report.markdown import render_report_md
from judge.report.review_page import render_review_page
from judge.report.values_svg import VALUES_SVG, values_svg


def render_files(report: Record, *, with_record: bool = True) -> dict[str, str | bytes]:
    """File name → text, for every file of the folder (``folder_files`` held at once)."""
    return dict(folder_files(report, with_record=with_record))


def folder_files(report: Record, *, with_record: bool = True) -> Iterator[tuple[str, str | bytes]]:
    """Every file of the folder as (name, text), each rendered when it is asked for
    (``with_record`` False: all but the record's own files, for a folder whose record is the
    source they are rendered from: they were just read, so they hold these bytes already). A writer that writes each before asking for the next
    (``ReportFolder.write_files``, ``ReportsDir.publish``) holds one file at a time, not the
    whole folder: at 100,000 questions the folder is hundreds of MB. The record's own files
    (``report.json``, ``items.jsonl``, ``chunks.jsonl``, ``verdicts.jsonl``:
    ``judge.record.store.record_files``) are the UTF-8 bytes their encoder made; the rest
    text."""
    yield "manifest.json", report.manifest.to_json()
    yield "report.md", render_report_md(report)
    if with_record:
        yield from record_files(report).items()
    yield "values.json", values_json(report)
    yield "verdicts.csv", verdicts_csv(report)
    yield "review.html", render_review_page(report)
    yield NIGHT_MARKS_FILE, marks_json(report)
    picture = values_svg(report)
    if picture is not None:
        yield VALUES_SVG, picture
    missing = missing_labels_file(report)
    if missing is not None:
        yield MISSING_LABELS_FILE, missing
