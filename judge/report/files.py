"""Every file of a report folder, rendered from a ``Record`` (written by ``judge.results``).

- ``manifest.json``  format version first; configuration, fingerprints, versions, timings
- ``report.md``      per-type tables, the comparison with earlier runs, items needing review
- ``report.json``    the run record itself (``judge.record``), for machines and for every
                     later command that reads the folder
- ``verdicts.csv``   one row per question: every metric, score, quote, match kind, span
- ``verdicts.jsonl`` the verdicts as data; ``items.jsonl`` what the judge saw
- ``run.jsonl``      the run that was judged
- ``review.html``    the reviewers' page
"""

from __future__ import annotations

from judge.inputs.runs import run_lines
from judge.jsonl import jsonl_text
from judge.record import Record, record_json
from judge.report.data import verdicts_csv
from judge.report.markdown import render_report_md
from judge.report.review_page import render_review_page


def render_files(report: Record) -> dict[str, str]:
    """File name → text, for every file of the folder."""
    return {
        "manifest.json": report.manifest.to_json(),
        "report.md": render_report_md(report),
        "report.json": record_json(report),
        "verdicts.csv": verdicts_csv(report),
        "verdicts.jsonl": jsonl_text(report.verdicts),
        "items.jsonl": jsonl_text(report.items),
        "review.html": render_review_page(report),
        # A record read back from a folder has no run in memory: the folder keeps its own.
        **({} if report.run is None else {"run.jsonl": jsonl_text(run_lines(report.run))}),
    }
