"""``report.md``: the per-type tables, the answers that could not be produced, the
comparisons, a prompt edit's flips, the agreement with human labels and what needs review, for
people.

Every piece of data (ids, types, folder and model names, notes, quotes, errors, labellers)
enters the Markdown through ``md`` (``judge.formatting.markdown_text``), so that it renders as
the text it is: no HTML, link or table cell can come out of it.
"""

from __future__ import annotations

import re

from judge.audit.agreement import AuditResult
from judge.audit.render import corrected_markdown_lines
from judge.formatting import FEW_ITEMS, fmt_number, fmt_share
from judge.formatting import markdown_text as md
from judge.judging.verdict import Verdict, review_reasons
from judge.report.build import Report
from judge.report.text_tables import render_markdown
from judge.results.compare import GateRule, SectionComparison, moved_list

#: How many moved questions a row of report.md names (report.json has them all).
MOVED_IN_ROW = 10


def _comparison_lines(comparisons: list[SectionComparison], against: str) -> list[str]:
    """Per comparison: its counts, then a table of every (type, metric) where a question
    moved (old and new mean over the pairs, the change with its 95 % interval, the pairs, the
    direction, the questions that moved); the comparisons where no question moved are counted."""
    lines = []
    for comp in comparisons:
        other = against if comp.baseline == "baseline" else md(comp.baseline or "—")
        title = f"**{comp.section}** against {other}"
        if comp.baseline is None:
            lines.append(f"- {title}: {md(comp.note)}")
            continue
        counts = comp.counts()
        rows = [c for c in comp.changes if c.moved]
        extra = f" ({md(comp.note)})" if comp.note else ""
        lines.append(
            f"- {title}: {counts['regressed']} regressed, {counts['improved']} improved, "
            f"{counts['too_few']} listed (too few questions to call), {counts['noise']} within "
            f"noise; {len(comp.changes) - len(rows)} of {len(comp.changes)} with no question "
            f"changed{extra}"
        )
        if not rows:
            continue
        lines += [
            "",
            "  | type | metric | pairs | old | new | change [95 % interval] | direction "
            "| questions that moved |",
            "  |---|---|---:|---:|---:|---|---|---|",
        ]
        for c in rows:
            moved = moved_list(c.moved, MOVED_IN_ROW)
            lines.append(
                f"  | {md(c.type)} | {md(c.metric)} | {c.n} | {c.old:.3f} | {c.new:.3f} "
                f"| {c.delta:+.3f} [{c.low:+.3f}, {c.high:+.3f}] | {DIRECTION_WORDS[c.direction]} "
                f"| {md(moved)} |"
            )
        lines.append("")
    return lines


DIRECTION_WORDS = {
    "regressed": "**regressed**",
    "improved": "improved",
    "too_few": "listed (too few questions)",
    "noise": "noise",
}


def _rule_line(rule: GateRule) -> str:
    return (
        "Compared question by question: a type's metric regressed when the 95 % bootstrap "
        "interval of its mean change lies below zero and the mean fell by more than its margin "
        f"({rule.describe()}); a move in a smaller type is listed, never a regression."
    )


def render_report_md(report: Report) -> str:
    m = report.manifest
    judge = m.judge
    lines = [
        f"# Report {md(m.folder)}",
        "",
        f"- judge: **{md(judge.describe())}** ({md(judge.chosen_because)})"
        + (f"; the model: {md(judge.model_about)}" if judge.model_about else ""),
        # The fingerprints are our own hex digests; paths and names are data.
        f"- prompt: {md(judge.prompt)} · fingerprint `{m.fingerprints.judge}`",
        f"- run: {md(m.run.source)} · golden `{m.fingerprints.golden}` · corpus "
        f"`{m.fingerprints.corpus}`",
        "- verdicts: " + ", ".join(f"{md(k)} {v}" for k, v in m.status_counts.items()),
        "",
        "## Per question type",
        "",
        render_markdown(report.judge),
        "",
    ]
    for split, table in report.splits.items():
        lines += [f"### Split: {md(split)}", "", render_markdown(table), ""]
    lines += failed_lines(report)
    lines += ["## Retrieval at every k", "", render_markdown(report.retrieval), ""]
    lines += ["## Compared with earlier runs", "", _rule_line(report.rule), ""]
    lines += _comparison_lines(report.comparisons, "the last compatible run")
    if report.baseline:
        lines += _comparison_lines(report.baseline, "the pinned baseline")
    lines.append("")
    if report.prompt_edit is not None:
        edit = report.prompt_edit
        lines += [
            "## Since the prompt edit",
            "",
            f"Only the judge prompt changed since {md(edit.previous_folder)}: "
            f"{len(edit.flips)} verdicts changed.",
            "",
        ]
        if edit.labelled:
            lines.append(
                f"Agreement with the human labels (both scores exact, {edit.labelled} labels): "
                f"{fmt_share(edit.agreement_before)} → {fmt_share(edit.agreement_after)}"
            )
            lines.append("")
        if edit.flips:
            lines += [
                "| question | before | after | quote before | quote after |",
                "|---|---|---|---|---|",
            ]
            for flip in edit.flips:
                lines.append(
                    f"| {md(flip.question_id)} | {md(verdict_scores(flip.old))} | "
                    f"{md(verdict_scores(flip.new))} | "
                    f"{_cell(flip.old.evidence)} | {_cell(flip.new.evidence)} |"
                )
            lines.append("")
    if report.audit is not None:
        lines += ["## Agreement with human labels", "", *audit_lines(report.audit), ""]
        corrected = corrected_markdown_lines(report.audit)
        if corrected:
            lines += ["### Corrected estimates", "", *corrected, ""]
    review = [(v, review_reasons(v)) for v in report.verdicts if review_reasons(v)]
    lines += ["## Needs review", ""]
    if not review:
        lines.append("Nothing flagged.")
    for verdict, reasons in review:
        lines.append(f"- **{md(verdict.question_id)}**: {md('; '.join(reasons))}")
    lines += ["", "Open `review.html` to see each quote inside the chunk it came from.", ""]
    return "\n".join(lines)


def failed_lines(report: Report) -> list[str]:
    """The section on the questions the RAG system gave no answer for (none when it answered
    every one): they have no verdict, so the tables count them in ``adapter_failed``."""
    if not report.adapter_failed:
        return []
    lines = [
        "## Answers that could not be produced",
        "",
        f"The adapter failed for {len(report.adapter_failed)} question(s): they have no answer, "
        "so no verdict, and the tables count them in `adapter_failed`.",
        "",
    ]
    lines += [
        f"- **{md(f.question_id)}** ({md(f.type)}): {md(f.error)}" for f in report.adapter_failed
    ]
    return [*lines, ""]


def audit_lines(audit: AuditResult) -> list[str]:
    """The headline agreement figures, judge next to the lexical baseline."""
    pct, num = fmt_share, fmt_number
    lines = [
        f"{audit.judge.labelled} labels from {', '.join(md(name) for name in audit.labellers)}; "
        f"the judge gave an ok verdict on {audit.judge.n} ({pct(audit.judge.coverage)}), and "
        f"both rows are scored on those {audit.judge.n}. `judge audit` gives the intervals, "
        "confusion matrices and the disagreements.",
        "",
        "| judge | both exact | both exact, all labels (non-ok wrong) | faithfulness exact "
        "| faithfulness κ | faithfulness bal. acc. | relevance exact | relevance κ "
        "| relevance bal. acc. | relevance majority |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in (audit.judge, audit.lexical):
        f = row.per_axis["faithfulness"].get("all")
        r = row.per_axis["relevance"].get("all")
        lines.append(
            f"| {md(row.judge)} | {pct(row.both_exact)} | {pct(row.both_exact_all)} "
            f"| {pct(f.exact if f else None)} | {num(f.kappa if f else None)} "
            f"| {pct(f.balanced_accuracy if f else None)} | {pct(r.exact if r else None)} "
            f"| {num(r.kappa if r else None)} | {pct(r.balanced_accuracy if r else None)} "
            f"| {pct(r.majority_exact if r else None)} |"
        )
    if audit.judge.n < FEW_ITEMS:
        lines += ["", f"With {audit.judge.n} labels the intervals are wide: a few points is noise."]
    return lines


def verdict_scores(verdict: Verdict) -> str:
    if verdict.status != "ok":
        return verdict.status
    return f"F{verdict.faithfulness} R{verdict.relevance}"


def _cell(text: str) -> str:
    """A quote shortened for a table cell (cut before escaping, so no escape is cut in half)."""
    text = re.sub("[ \t\n]+", " ", text).strip(" ")  # not split(): it would eat a raw CR
    return md(text[:60] + "…" if len(text) > 60 else text) or "—"
