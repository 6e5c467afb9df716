"""The audit as text: agreement per axis and type with intervals, confusion, disagreements, and
the judge's means corrected with the labels (terminal, and a table for report.md).

An optional axis (``judge.axes.OPTIONAL_AXES``: ``correctness``) is printed as one more axis
where the audit has it (labels that carry it, for a run that judged it), and absent otherwise:
an audit of the two axes reads as it always did."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from judge.audit.types import (
    Agreement,
    AuditResult,
    AxisStats,
    Disagreement,
)
from judge.axes import AXES
from judge.formatting import FEW_ITEMS, fmt_interval, fmt_number, fmt_share, terminal_text
from judge.formatting import markdown_text as md
from judge.report.corrected_text import AXIS_OVER, axes_to_print, corrected_lines


def _word(text: object) -> str:
    """An id, a type, a name from data, safe to print and kept on its line."""
    return terminal_text(text, one_line=True)


def _not_ok(agreement_: Agreement) -> str:
    return ", ".join(f"{_word(status)} {count}" for status, count in agreement_.not_ok)


def _headline(agreement_: Agreement, is_judge: bool) -> str:
    second = "non-ok counted as wrong" if is_judge else "it scores every answer, no non-ok verdicts"
    return (
        f"{_word(agreement_.judge)}: both scores exact {fmt_share(agreement_.both_exact)}"
        f"{fmt_interval(agreement_.both_exact_ci, True)} of {agreement_.n} judged; "
        f"{fmt_share(agreement_.both_exact_all)} of {agreement_.labelled} labelled ({second})"
    )


def _majority(s: AxisStats) -> str:
    if s.majority_exact is None:
        return "–"
    return f"{fmt_share(s.majority_exact)} (always {s.majority_class})"


def _in_order(stats_by_type: Mapping[str, AxisStats], order: list[str]) -> list[str]:
    """The types of ``stats_by_type`` in ``order``, any other after them in their own order,
    then ``all``: one type order in every table of the audit."""
    types = [t for t in order if t in stats_by_type and t != "all"]
    types += [t for t in stats_by_type if t not in types and t != "all"]
    return [*types, "all"] if "all" in stats_by_type else types


def _backend(judge_name: str) -> str:
    """The backend of a judge as the manifest describes it ("lexical · lexical-1")."""
    return judge_name.partition(" · ")[0]


def _same_figures(judge: Agreement, lexical: Agreement) -> bool:
    """Whether the judge's agreement figures are the lexical baseline's, every one (as they
    are when the judge is the lexical backend): then printing both says nothing twice."""
    return (
        judge.per_axis == lexical.per_axis
        and (judge.both_exact, judge.both_exact_ci, judge.n)
        == (lexical.both_exact, lexical.both_exact_ci, lexical.n)
        and (judge.labelled, judge.both_exact_all) == (lexical.labelled, lexical.both_exact_all)
    )


def render_audit(
    result: AuditResult,
    judge_name: str,
    limit: int | None = None,
    full_list_path: Path | None = None,
) -> str:
    """The audit as terminal text; everything from data in it goes through ``terminal_text``
    (questions, answers, notes and quotes keep their lines).

    The first ``limit`` disagreements are printed, largest score gap first (None or 0: all;
    ``judge audit`` passes its ``--limit``, 20 by default); the rest are counted, and
    ``full_list_path`` (where the caller wrote them all) is named.
    """
    same = _same_figures(result.judge, result.lexical)
    lines = _header_lines(result, judge_name, same)
    # The types in the corrected estimates' order (``judge.audit.ppi``: the per-type tables').
    order = list(result.corrected.get(AXES[0], {}))
    for agreement_ in (result.judge,) if same else (result.judge, result.lexical):
        lines.append("")
        lines += _agreement_lines(agreement_, agreement_ is result.judge, order)
    lines.append("")
    for axis, (alpha, shared) in result.humans.items():
        lines.append(
            f"humans among themselves, {axis}: Krippendorff's alpha (ordinal) {fmt_number(alpha)} "
            f"over {shared} items labelled by 2+ people"
        )
    lines += corrected_lines(result.corrected, result.pooled)
    lines += _disagreement_lines(result.judge.disagreements, limit, full_list_path)
    return "\n".join(lines)


def _header_lines(result: AuditResult, judge_name: str, same: bool) -> list[str]:
    """What the audit is about: the run, the judge, the labels and labellers, the coverage, how
    the lexical baseline is shown (``same``: once, as the judge), and how to read the tables."""
    judge = result.judge
    lines = [
        f"agreement with human labels · run {_word(result.folder)} · judge {_word(judge_name)}"
    ]
    n = judge.n
    names = ", ".join(_word(name) for name in result.labellers)
    lines.append(
        f"labels: {judge.labelled} pairs from {len(result.labellers)} labeller(s) ({names})"
    )
    coverage = (
        f"coverage: {n} of {judge.labelled} labelled items judged ok ({fmt_share(judge.coverage)})"
    )
    if judge.not_ok:
        coverage += f"; not ok: {_not_ok(judge)}"
    lines.append(coverage)
    if same:
        # The lexical judge is its own baseline: one section, and a line that says why.
        lines.append(
            "the judge is the lexical baseline: its figures are the baseline's, shown once"
            if _backend(judge_name) == "lexical"
            else "the lexical baseline scored every labelled answer as the judge did: the same "
            "figures, shown once"
        )
    else:
        lines.append(
            f"the judge and the lexical baseline are both scored on these {n} labels; the "
            "second figure is over every label"
        )
    if n < FEW_ITEMS:
        lines.append(
            f"note: {n} pairs give wide intervals (95 % bootstrap intervals in brackets); "
            "treat differences of a few points as noise"
        )
    lines.append(
        "bal. acc.: mean recall over the human scores present (always answering one score gets "
        "1/classes); majority: exact agreement of always answering the most common human score"
    )
    return lines


def _agreement_lines(agreement_: Agreement, is_judge: bool, order: list[str]) -> list[str]:
    """One judge's (or the baseline's) agreement: its headline, then per axis a table of the
    types (``order`` first) and the confusion matrix over all of them."""
    lines = [_headline(agreement_, is_judge)]
    for axis in axes_to_print(agreement_.per_axis):
        lines.append(f"  {axis}{AXIS_OVER.get(axis, '')}")
        lines.append(
            f"    {'type':<14}{'n':>4}  {'exact':<24}{'within 1':>9}  "
            f"{'kappa (quadratic)':<20}{'bal. acc.':>10}  majority"
        )
        stats_by_type = agreement_.per_axis.get(axis, {})
        for type_name in _in_order(stats_by_type, order):
            s = stats_by_type[type_name]
            exact = fmt_share(s.exact) + fmt_interval(s.exact_ci, True)
            kappa = fmt_number(s.kappa) + fmt_interval(s.kappa_ci, False)
            lines.append(
                f"    {_word(type_name):<14}{s.n:>4}  {exact:<24}{fmt_share(s.within_one):>9}  "
                f"{kappa:<20}{fmt_share(s.balanced_accuracy):>10}  {_majority(s)}"
            )
        overall = stats_by_type.get("all")
        if overall is not None:
            lines.append(
                "    confusion (rows human 0/1/2, columns judge 0/1/2): "
                + " | ".join(" ".join(f"{c:>2}" for c in row) for row in overall.confusion)
            )
    return lines


def _disagreement_lines(
    disagreements: list[Disagreement], limit: int | None, full_list_path: Path | None
) -> list[str]:
    if not disagreements:
        return []
    shown = disagreements if limit is None or limit <= 0 else disagreements[:limit]
    total = len(disagreements)
    first = f"; the first {len(shown)}" if len(shown) < total else ""
    lines = [
        "",
        f"disagreements ({total}), largest score gap first{first}: "
        "read these before editing the prompt",
    ]
    for d in shown:
        v, label = d.verdict, d.label
        match = f" [{v.match.kind}]" if v.match else ""
        lines += [
            f"- {_word(d.item.question_id)} ({_word(d.item.type)}) human "
            f"{_word(label.labeller)} F{label.faithfulness} R{label.relevance} · "
            f"judge F{v.faithfulness} R{v.relevance}",
            f"    question: {terminal_text(d.item.question)}",
            f"    answer:   {terminal_text(d.item.answer)}",
            f"    judge:    {terminal_text(v.note)}",
            f"    quote:    {terminal_text(v.evidence or '(none)')}{match}",
        ]
        if label.note:
            lines.append(f"    human:    {terminal_text(label.note)}")
    more = total - len(shown)
    where = f"all {total} in {_word(full_list_path)}" if full_list_path is not None else ""
    if more:
        lines.append(f"… {more} more" + (f"; {where}" if where else " (--limit 0 shows all)"))
    elif where:
        lines.append(f"(also in {_word(full_list_path)})")
    return lines


def _majority_share(stats: AxisStats | None) -> str:
    """The majority-class figure: exact agreement of always answering the most common human
    score, with that score ("73 % (always 2)"): the bar an exact-agreement figure must clear."""
    if stats is None or stats.majority_exact is None:
        return "—"
    return f"{fmt_share(stats.majority_exact)} (always {stats.majority_class})"


def audit_lines(audit: AuditResult) -> list[str]:
    """The headline agreement figures, judge next to the lexical baseline, each axis's exact
    agreement beside its majority-class line ("always 2"): a judge below it is worse than a
    constant."""
    pct, num = fmt_share, fmt_number
    lines = [
        f"{audit.judge.labelled} labels from {', '.join(md(name) for name in audit.labellers)}; "
        f"the judge gave an ok verdict on {audit.judge.n} ({pct(audit.judge.coverage)}), and "
        f"both rows are scored on those {audit.judge.n}. `judge audit` gives the intervals, "
        "confusion matrices and the disagreements. The majority columns are what always "
        "answering the most common human score would get: an exact figure below its majority "
        "is worse than that constant.",
        "",
        "| judge | both exact | both exact, all labels (non-ok wrong) | faithfulness exact "
        "| faithfulness majority | faithfulness κ | faithfulness bal. acc. | relevance exact "
        "| relevance majority | relevance κ | relevance bal. acc. |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    below: list[str] = []
    for row in (audit.judge, audit.lexical):
        f = row.per_axis["faithfulness"].get("all")
        r = row.per_axis["relevance"].get("all")
        lines.append(
            f"| {md(row.judge)} | {pct(row.both_exact)} | {pct(row.both_exact_all)} "
            f"| {pct(f.exact if f else None)} | {_majority_share(f)} | {num(f.kappa if f else None)} "
            f"| {pct(f.balanced_accuracy if f else None)} | {pct(r.exact if r else None)} "
            f"| {_majority_share(r)} | {num(r.kappa if r else None)} "
            f"| {pct(r.balanced_accuracy if r else None)} |"
        )
        below += _below_majority(row.judge, (("faithfulness", f), ("relevance", r)))
    correctness = audit.judge.per_axis.get("correctness", {}).get("all")
    if correctness is not None:
        lines += [
            "",
            f"Correctness (against the reference answer), over the {correctness.n} labels that "
            f"carry it and whose answer the judge gave an ok correctness verdict: exact "
            f"{pct(correctness.exact)} (majority {_majority_share(correctness)}), κ "
            f"{num(correctness.kappa)}, bal. acc. {pct(correctness.balanced_accuracy)}.",
        ]
        below += _below_majority(audit.judge.judge, (("correctness", correctness),))
    if below:
        lines += ["", f"**Below the majority class**: {'; '.join(below)}."]
    if audit.judge.n < FEW_ITEMS:
        lines += ["", f"With {audit.judge.n} labels the intervals are wide: a few points is noise."]
    return lines


def _below_majority(judge: str, stats: tuple[tuple[str, AxisStats | None], ...]) -> list[str]:
    """The axes whose exact agreement is below always answering the majority class, each as a
    clause of report.md's "Below the majority class" line."""
    return [
        f"{md(judge)}'s {axis} agreement ({fmt_share(s.exact)}) is below always answering "
        f"{s.majority_class} ({fmt_share(s.majority_exact)})"
        for axis, s in stats
        if s is not None
        and s.exact is not None
        and s.majority_exact is not None
        and s.exact < s.majority_exact
    ]


def audit_gate_lines(failures: Sequence[str], *, gated: bool) -> list[str]:
    """The audit gate's verdict after a blank line: FAILED with every bar missed (``--min-kappa``,
    ``--min-agreement``), passed when a bar was set (``gated``), nothing when none was."""
    if failures:
        return ["", "audit gate: FAILED: " + "; ".join(failures)]
    return ["", "audit gate: passed"] if gated else []
