"""The audit as text: agreement per axis and type with intervals, confusion, disagreements."""

from __future__ import annotations

from judge.audit.agreement import AXES, AuditResult
from judge.audit.stats import Interval
from judge.formatting import FEW_ITEMS, fmt_number, fmt_share


def _ci(interval: Interval | None, percent: bool) -> str:
    if interval is None:
        return ""
    fmt = fmt_share if percent else fmt_number
    return f" [{fmt(interval.low)}, {fmt(interval.high)}]"


def render_audit(result: AuditResult, judge_name: str) -> str:
    """The audit as text (also used, as Markdown-friendly text, in reports)."""
    lines = [f"agreement with human labels · run {result.folder} · judge {judge_name}"]
    n = result.judge.n
    lines.append(
        f"labels: {n} pairs from {len(result.labellers)} labeller(s) ({', '.join(result.labellers)})"
    )
    if n < FEW_ITEMS:
        lines.append(
            f"note: {n} pairs give wide intervals (95 % bootstrap intervals in brackets); "
            "treat differences of a few points as noise"
        )
    for agreement_ in (result.judge, result.lexical):
        lines.append("")
        lines.append(
            f"{agreement_.judge}: both scores exact {fmt_share(agreement_.both_exact)}"
            f"{_ci(agreement_.both_exact_ci, True)} over {agreement_.n} labels"
        )
        for axis in AXES:
            lines.append(f"  {axis}")
            lines.append(
                f"    {'type':<14}{'n':>4}  {'exact':<24}{'within 1':>9}  kappa (quadratic)"
            )
            stats_by_type = agreement_.per_axis.get(axis, {})
            for type_name in [*sorted(t for t in stats_by_type if t != "all"), "all"]:
                if type_name not in stats_by_type:
                    continue
                s = stats_by_type[type_name]
                exact = fmt_share(s.exact) + _ci(s.exact_ci, True)
                kappa = fmt_number(s.kappa) + _ci(s.kappa_ci, False)
                lines.append(
                    f"    {type_name:<14}{s.n:>4}  {exact:<24}{fmt_share(s.within_one):>9}  {kappa}"
                )
            overall = stats_by_type.get("all")
            if overall is not None:
                lines.append(
                    "    confusion (rows human 0/1/2, columns judge 0/1/2): "
                    + " | ".join(" ".join(f"{c:>2}" for c in row) for row in overall.confusion)
                )
    lines.append("")
    for axis, (alpha, shared) in result.humans.items():
        lines.append(
            f"humans among themselves, {axis}: Krippendorff's alpha (ordinal) {fmt_number(alpha)} "
            f"over {shared} items labelled by 2+ people"
        )
    if result.judge.disagreements:
        lines.append("")
        lines.append(
            f"disagreements ({len(result.judge.disagreements)}): read these before editing the prompt"
        )
        for d in result.judge.disagreements:
            v, label = d.verdict, d.label
            match = f" [{v.match.kind}]" if v.match else ""
            lines += [
                f"- {d.item.question_id} ({d.item.type}) human {label.labeller} F{label.faithfulness} "
                f"R{label.relevance} · judge F{v.faithfulness} R{v.relevance}",
                f"    question: {d.item.question}",
                f"    answer:   {d.item.answer}",
                f"    judge:    {v.note}",
                f"    quote:    {v.evidence or '(none)'}{match}",
            ]
            if label.note:
                lines.append(f"    human:    {label.note}")
    return "\n".join(lines)
