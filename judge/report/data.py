"""Report files for machines and spreadsheets: ``report.json`` and ``verdicts.csv``."""

from __future__ import annotations

from typing import Any

from judge.audit.agreement import as_json as audit_json
from judge.formatting import bom_csv
from judge.judging.verdict import review_reasons
from judge.report.build import Report
from judge.report.markdown import verdict_scores
from judge.results.compare import SectionComparison
from judge.results.manifest import FORMAT_VERSION


def report_json(report: Report) -> dict[str, Any]:
    def comparison(comp: SectionComparison) -> dict[str, Any]:
        return {
            "section": comp.section,
            "against": comp.baseline,
            "note": comp.note,
            "changes": [c.to_json() for c in comp.changes],
        }

    edit = report.prompt_edit
    return {
        "format_version": FORMAT_VERSION,
        "manifest": report.manifest.model_dump(mode="json"),
        "tables": {
            "judge": report.judge.to_json(),
            "retrieval": report.retrieval.to_json(),
            "splits": {s: t.to_json() for s, t in report.splits.items()},
        },
        "rule": report.rule._asdict(),
        "comparisons": [comparison(c) for c in report.comparisons],
        "baseline": [comparison(c) for c in report.baseline],
        "prompt_edit": None
        if edit is None
        else {
            "previous": edit.previous_folder,
            "agreement_before": edit.agreement_before,
            "agreement_after": edit.agreement_after,
            "labelled": edit.labelled,
            "flips": [
                {
                    "question_id": f.question_id,
                    "before": verdict_scores(f.old),
                    "after": verdict_scores(f.new),
                    "quote_before": f.old.evidence,
                    "quote_after": f.new.evidence,
                }
                for f in edit.flips
            ],
        },
        "agreement": None if report.audit is None else audit_json(report.audit),
        "adapter_failed": {f.question_id: f.error for f in report.adapter_failed},
        "needs_review": {
            v.question_id: review_reasons(v) for v in report.verdicts if review_reasons(v)
        },
        "regressions": len(report.regressions),
    }


def verdicts_csv(report: Report) -> str:
    """One row per question, UTF-8 with a BOM so that spreadsheets read the Japanese right.

    ``bom_csv`` keeps every text cell from being read as a formula (ids, notes, quotes, errors
    all come from data)."""
    items = {item.question_id: item for item in report.items}
    metrics = sorted({m for item in report.items for m in item.retrieval})
    header = [
        "question_id",
        "type",
        "split",
        "status",
        "faithfulness",
        "relevance",
        "evidence",
        "match_kind",
        "chunk_id",
        "span_start",
        "span_end",
        "coverage",
        "needs_review",
        "note",
        "error",
        *metrics,
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "cached",
    ]
    rows = []
    for v in report.verdicts:
        item = items.get(v.question_id)
        match = v.match
        rows.append(
            [
                v.question_id,
                item.type if item else "",
                item.split if item else "",
                v.status,
                v.faithfulness,
                v.relevance,
                v.evidence,
                match.kind if match else "",
                match.chunk_id if match else "",
                match.start if match else "",
                match.end if match else "",
                match.coverage if match else "",
                "; ".join(review_reasons(v)),
                v.note,
                v.error or "",
                *[item.retrieval.get(m, "") if item else "" for m in metrics],
                v.prompt_tokens,
                v.completion_tokens,
                round(v.latency_s, 3),
                v.cached,
            ]
        )
    return bom_csv(header, rows)
