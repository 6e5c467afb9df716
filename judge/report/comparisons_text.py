"""report.md's comparisons with earlier runs: the rule they were made with, what the golden set
can see per type, and per comparison a table of the questions that moved."""

from __future__ import annotations

from collections.abc import Sequence

from judge.formatting import markdown_text as md
from judge.record.model import Record
from judge.results.compare import SEASON, GateRule, SectionComparison, moved_list, p_value
from judge.results.gate import detectable, gate_judge_metrics, night_family
from judge.results.lasting import MIN_NIGHTS, Lasting

#: How many moved questions a row of report.md names (report.json has them all).
MOVED_IN_ROW = 10


def comparison_lines(comparisons: list[SectionComparison], against: str) -> list[str]:
    """Per comparison: its counts, then a table of every (type, metric) where a question
    moved (old and new mean over the pairs, the change with its 95 % interval, the pairs, the
    direction, the questions that moved); the comparisons where no question moved are counted."""
    lines = []
    for comp in comparisons:
        other = (
            against
            if comp.baseline == "baseline"
            else "the season"
            if comp.baseline == SEASON
            else md(comp.baseline or "—")
        )
        title = f"**{comp.section}** against {other}"
        if comp.baseline is None:
            lines.append(f"- {title}: {md(comp.note)}")
            continue
        rows = [c for c in comp.changes if c.moved]
        extra = f" ({md(comp.note)})" if comp.note else ""
        lines.append(
            f"- {title}: {comp.counts_text()}; {len(comp.changes) - len(rows)} of "
            f"{len(comp.changes)} with no question changed{extra}"
        )
        if not rows:
            continue
        lines += [
            "",
            "  | type | metric | pairs | old | new | change [95 % interval] | p | direction "
            "| questions that moved |",
            "  |---|---|---:|---:|---:|---|---:|---|---|",
        ]
        for c in rows:
            moved = moved_list(c.moved, MOVED_IN_ROW)
            nights = f" ({c.nights} nights)" if c.nights > 1 else ""
            p = c.p_fall if c.delta < 0 else c.p_rise
            lines.append(
                f"  | {md(c.type)} | {md(c.metric)} | {c.n} | {c.old:.3f} | {c.new:.3f}{nights} "
                f"| {c.delta:+.3f} [{c.low:+.3f}, {c.high:+.3f}] | {p_value(p)} "
                f"| {DIRECTION_WORDS[c.direction]} | {md(moved)} |"
            )
        lines.append("")
    return lines


DIRECTION_WORDS = {
    "collapsed": "**collapsed**",
    "regressed": "**regressed**",
    "improved": "improved",
    "listed": "listed (not shown)",
    "noise": "noise",
}


def rule_line(rule: GateRule) -> str:
    return (
        "Compared question by question (docs/gate.md): a type's metric regressed when its fall "
        "is beyond the margin and shown by an exact test within the night's family-wise level; "
        "it collapsed when most of its answers fell to the floor at once (whatever the type's "
        "size), and over the season when the last nights stay below each question's median of "
        f"earlier runs ({rule.describe()}). A move beyond the margin with p ≤ 0.1 that is not "
        "shown is listed, never a regression."
    )


def detectable_lines(report: Record) -> list[str]:
    """What this golden set can see, per type (``judge.results.gate.detectable``), as
    ``judge check`` says it."""
    per_type: dict[str, int] = {}
    scored: dict[str, int] = {}
    for row in report.questions:
        per_type[row.type] = per_type.get(row.type, 0) + 1
        labelled = row.item is not None and bool(row.item.relevant_chunks)
        scored[row.type] = scored.get(row.type, 0) + labelled
    judge_metrics = gate_judge_metrics(report.judge.metrics)
    family = night_family(per_type, scored, len(report.retrieval.metrics), len(judge_metrics))
    seen = detectable(per_type, family, report.rule)
    return ["What this golden set can see:", "", *(f"- {md(d.describe())}" for d in seen)]


def lasting_lines(lasting: Sequence[Lasting]) -> list[str]:
    """report.md's list of the answers below the baseline or the season since a date
    (``judge.results.lasting``): none when nothing is listed."""
    if not lasting:
        return []
    return [
        "",
        f"Below the baseline or the season for {MIN_NIGHTS} runs or more (never a failure by "
        "itself; listed until the answer is back or the baseline is re-pinned):",
        "",
        *[f"- {md(x.describe())}" for x in lasting],
    ]
