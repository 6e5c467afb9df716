"""Every file of a report folder, rendered from a ``Report`` (written by ``judge.results``).

- ``manifest.json``  format version first; configuration, fingerprints, versions, timings
- ``report.md``      per-type tables, the comparison with earlier runs, items needing review
- ``report.json``    the same, for machines
- ``verdicts.csv``   one row per question: every metric, score, quote, match kind, span
- ``verdicts.jsonl`` the verdicts as data; ``items.jsonl`` what the judge saw
- ``run.jsonl``      the run that was judged
- ``review.html``    the reviewers' page
"""

from __future__ import annotations

import json

from judge.inputs.runs import run_lines
from judge.jsonl import jsonl_text
from judge.report.build import Report
from judge.report.data import report_json, verdicts_csv
from judge.report.markdown import render_report_md
from judge.report.review_page import render_review_page


def render_files(report: Report) -> dict[str, str]:
    """File name → text, for every file of the folder."""
    return {
        "manifest.json": report.manifest.to_json(),
        "report.md": render_report_md(report),
        "report.json": json.dumps(report_json(report), ensure_ascii=False, indent=2) + "\n",
        "verdicts.csv": verdicts_csv(report),
        "verdicts.jsonl": jsonl_text(report.verdicts),
        "items.jsonl": jsonl_text(report.items),
        "run.jsonl": jsonl_text(run_lines(report.run)),
        "review.html": render_review_page(report),
    }
