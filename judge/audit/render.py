"""The audit as text: agreement per axis and type with intervals, confusion, disagreements."""

from __future__ import annotations

from judge.audit.agreement import AXES, AuditResult
from judge.audit.stats import Interval
from judge.formatting import FEW_ITEMS, fmt_number, fmt_share, terminal_text


def _ci(interval: Interval | None, percent: bool) -> str:
    if interval is None:
        return ""
    fmt = fmt_share if percent else fmt_number
    return f" [{fmt(interval.low)}, {fmt(interval.high)}]"


def _word(text: object) -> str:
    """An id, a type, a name from data, safe to print and kept on its line."""
    return terminal_text(text, one_line=True)


def render_audit(result: AuditResult, judge_name: str) -> str:
    """The audit as terminal text; everything from data in it goes through ``terminal_text``
    (questions, answers, notes and quotes keep their lines)."""
    lines = [
        f"agreement with human labels · run {_word(result.folder)} · judge {_word(judge_name)}"
    ]
    n = result.judge.n
    names = ", ".join(_word(name) for name in result.labellers)
    lines.append(f"labels: {n} pairs from {len(result.labellers)} labeller(s) ({names})")
    if n < FEW_ITEMS:
        lines.append(
            f"note: {n} pairs give wide intervals (95 % bootstrap intervals in brackets); "
            "treat differences of a few points as noise"
        )
    for agreement_ in (result.judge, result.lexical):
        lines.append("")
        lines.append(
            f"{_word(agreement_.judge)}: both scores exact {fmt_share(agreement_.both_exact)}"
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
                    f"    {_word(type_name):<14}{s.n:>4}  {exact:<24}{fmt_share(s.within_one):>9}  {kappa}"
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
    return "\n".join(lines)
