"""The judge's means corrected with the human labels, as text: the terminal's lines and
report.md's table (``judge.audit.ppi`` computes them), with what each estimate used and why a
pooled row stands where a type is too small.

Which axes an audit prints is decided here too (``axes_to_print``), and used by the rest of
the audit's text (``judge.report.audit_text``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from judge.audit.types import (
    LEVEL,
    MIN_LABELLED,
    PSEUDO_LABELS,
    AuditResult,
    Corrected,
    CorrectedCell,
    Halving,
    PooledCell,
)
from judge.axes import AXES, SCORED_AXES, ScoredAxis
from judge.formatting import fmt_interval, fmt_number, terminal_text
from judge.formatting import markdown_text as md


def _word(text: object) -> str:
    """An id, a type, a name from data, safe to print and kept on its line."""
    return terminal_text(text, one_line=True)


def axes_to_print(present: Mapping[ScoredAxis, object]) -> list[ScoredAxis]:
    """The axes to print: the answer's two always, an optional one where ``present`` has it."""
    return [axis for axis in SCORED_AXES if axis in AXES or axis in present]


#: What an optional axis' heading adds (over which labels it is scored).
AXIS_OVER = {"correctness": " (against the reference answer; the labels that carry it)"}


def _corrected(cell: CorrectedCell) -> str:
    """The corrected estimate with its interval, or what stands in its place; a remark (the
    labels showed no disagreement to measure) follows in brackets."""
    e = cell.estimate
    if e is None:
        return cell.note or "–"
    remark = f" ({cell.remark})" if cell.remark else ""
    return f"{fmt_number(e.value)}{fmt_interval(e.shown, False)}{remark}"


def _pad(text: str, width: int) -> str:
    """``text`` in a column of ``width``, and two spaces after it when it is longer (a
    remark), so that the next column never runs into it."""
    return text.ljust(width) if len(text) < width else text + "  "


def _pooled(cell: PooledCell) -> str:
    if cell.estimate is None:
        return cell.note or "–"
    return f"{fmt_number(cell.estimate)}{fmt_interval(cell.interval, False)}"


#: The name of the pooled row, in both renderings (not a type: no type can be confused with it).
POOLED = "pooled, stratified"


def _pooled_why(pooled: Mapping[ScoredAxis, PooledCell], escape: Callable[[object], str]) -> str:
    """What the pooled row is over, in one sentence (types from data through ``escape``)."""
    cell = next(iter(pooled.values()), None)
    if cell is None:
        return ""
    parts = ", ".join(
        f"{escape(name)} {weight:.0%}"
        for name, weight in zip(cell.types, cell.weights, strict=True)
    )
    text = f"{POOLED}: each type's corrected estimate weighted by its share of the judged items ({parts})"
    if cell.without_labels:
        left = ", ".join(escape(name) for name in cell.without_labels)
        text += f"; without labels, left out: {left}"
    return text


def _halving(halving: Halving | None) -> str:
    if halving is None:
        return "–"
    if halving.new_questions == 0:
        return str(halving.more)
    if halving.from_run == 0:
        return f"{halving.more} (all new questions)"
    return f"{halving.more} ({halving.from_run} unlabelled + {halving.new_questions} new questions)"


def _labelled(cell: CorrectedCell) -> str:
    extra = f" ({cell.labels} labels)" if cell.labels != cell.labelled else ""
    return f"{cell.labelled}{extra}"


def _unused(
    corrected: Corrected, escape: Callable[[object], str], count: Callable[[CorrectedCell], int]
) -> str:
    """Labels left out of the estimates (``count`` says which), per type ("" when none);
    ``escape`` makes the type names (data) safe for where they go."""
    cells = corrected.get(AXES[0], {})
    parts = [
        f"{escape(name)} {count(cell)}"
        for name, cell in cells.items()
        if name != "all" and count(cell)
    ]
    return ", ".join(parts)


def _without_verdict(cell: CorrectedCell) -> int:
    return cell.unused_labels


def _chosen(cell: CorrectedCell) -> int:
    return cell.chosen_labels


def _labels_used(corrected: Corrected) -> str:
    """How many labels the estimates use, and on how many items ("243 labels on 240 items"),
    summed over the types of the first axis (every axis is estimated from the same items)."""
    cells = [cell for name, cell in corrected.get(AXES[0], {}).items() if name != "all"]
    labels = sum(cell.labels for cell in cells)
    items = sum(cell.labelled for cell in cells)
    on = f" on {items} items" if items != labels else ""
    return f"{labels} label{'' if labels == 1 else 's'}{on} judged ok"


#: Why review-page labels are left out, in both renderings.
CHOSEN_WHY = "review.html marks (the reviewer chose the items: not a random sample), not used"


def corrected_lines(corrected: Corrected, pooled: Mapping[ScoredAxis, PooledCell]) -> list[str]:
    """The corrected estimates as terminal lines (empty without any type); the pooled row
    (``AuditResult.pooled``: computed by the audit, never here) closes each axis' table."""
    if not any(corrected.values()):
        return []
    lines: list[str] = [
        "",
        f"corrected estimates (PPI++, {LEVEL:.0%} interval): the mean human score per type, "
        "from the labels and the judge's scores together",
        f"from {_labels_used(corrected)}; a type's estimate is shown once it has at least "
        f"{MIN_LABELLED} labelled items judged ok; interval: PPI++ with "
        f"{PSEUDO_LABELS} pseudo-labels in its variance, t quantile, within 0-2; to halve: more "
        "random labels that would make the interval half as wide (docs/audit.md)",
    ]
    for axis in axes_to_print(corrected):
        lines.append(f"  {axis}{AXIS_OVER.get(axis, '')}")
        lines.append(
            f"    {'type':<20}{'judged':>7}  {'judge mean':>10}  {'corrected':<44}"
            f"{'labelled':<18}to halve"
        )
        for name, cell in corrected.get(axis, {}).items():
            lines.append(
                f"    {_word(name):<20}{cell.judged:>7}  {fmt_number(cell.judge_mean):>10}  "
                f"{_pad(_corrected(cell), 44)}{_labelled(cell):<18}{_halving(cell.halving)}"
            )
        if axis in pooled:
            p = pooled[axis]
            lines.append(
                f"    {POOLED:<20}{p.judged:>7}  {fmt_number(p.judge_mean):>10}  "
                f"{_pooled(p):<44}{p.labelled:<18}–"
            )
    why = _pooled_why(pooled, _word)
    if why:
        lines.append(why)
    unused = _unused(corrected, _word, _without_verdict)
    if unused:
        lines.append(f"labels on items without an ok verdict, not used: {unused}")
    chosen = _unused(corrected, _word, _chosen)
    if chosen:
        lines.append(f"labels from {CHOSEN_WHY}: {chosen}")
    return lines


def corrected_markdown_lines(result: AuditResult) -> list[str]:
    """The corrected estimates as a paragraph and a table for report.md (no heading; empty
    without any type). Type names are data and go through ``markdown_text``."""
    corrected = result.corrected
    if not any(corrected.values()):
        return []
    pooled = result.pooled
    # An optional axis adds its three columns (its own judged and labelled counts with them:
    # it is asked for fewer questions and carried by fewer labels).
    extra = [axis for axis in axes_to_print(corrected) if axis not in AXES]
    lines = [*_MARKDOWN_INTRO, *_markdown_table_head(extra)]
    relevance = corrected.get("relevance", {})
    for name, f in corrected.get("faithfulness", {}).items():
        lines.append(_markdown_row(name, f, relevance[name], corrected, extra))
    pf, pr = pooled.get("faithfulness"), pooled.get("relevance")
    if pf is not None and pr is not None:
        lines.append(_markdown_pooled_row(pf, pr, pooled, extra))
    why = _pooled_why(pooled, md)
    if why:
        lines += ["", why[0].upper() + why[1:] + "."]
    unused = _unused(corrected, md, _without_verdict)
    if unused:
        lines += ["", f"Labels on items without an ok verdict, not used: {unused}."]
    chosen = _unused(corrected, md, _chosen)
    if chosen:
        lines += ["", f"Labels from {CHOSEN_WHY}: {chosen}."]
    return lines


#: The paragraph above report.md's table of corrected estimates, and the blank line after it.
_MARKDOWN_INTRO = [
    "The mean human score of each type, estimated from the human labels and the judge's "
    "scores together (prediction-powered inference, PPI++): the judge's mean corrected by "
    f"its average error on the labelled items, with a {LEVEL:.0%} interval (its variance "
    f"counts {PSEUDO_LABELS} pseudo-labels at the ends of the scale, with a t quantile, "
    "and it stays within 0–2). Only labels for the exact answer count; a type needs "
    f"{MIN_LABELLED} labelled items with an ok verdict. The *{POOLED}* row combines every "
    "type with labels, each weighted by its share of the judged items, so a small golden "
    "set gets a figure. *To halve*: how many more random labels would make the interval "
    "half as wide (docs/audit.md).",
    "",
]


def _markdown_table_head(extra: list[ScoredAxis]) -> list[str]:
    """The table's header and rule: the two axes, then each optional axis in ``extra``."""
    head = (
        "| type | judged | labelled | faithfulness: judge | faithfulness: corrected "
        "| to halve | relevance: judge | relevance: corrected | to halve |"
    )
    rule = "|---|---:|---:|---:|---|---|---:|---|---|"
    if extra:
        head = head.removesuffix(" |") + "".join(
            f" | {axis}: judged | {axis}: labelled | {axis}: judge | {axis}: corrected | to halve |"
            for axis in extra
        )
        rule += "---:|---:|---:|---|---|" * len(extra)
    return [head, rule]


def _markdown_row(
    name: str,
    f: CorrectedCell,
    r: CorrectedCell,
    corrected: Corrected,
    extra: list[ScoredAxis],
) -> str:
    """One type's row: faithfulness ``f``, relevance ``r``, then each optional axis (dashes
    where the type has no estimate of it)."""
    row = (
        f"| {md(name)} | {f.judged} | {_labelled(f)} | {fmt_number(f.judge_mean)} "
        f"| {_corrected(f)} | {_halving(f.halving)} | {fmt_number(r.judge_mean)} "
        f"| {_corrected(r)} | {_halving(r.halving)} |"
    )
    for axis in extra:
        c = corrected[axis].get(name)
        row += (
            " – | – | – | – | – |"
            if c is None
            else f" {c.judged} | {_labelled(c)} | {fmt_number(c.judge_mean)} "
            f"| {_corrected(c)} | {_halving(c.halving)} |"
        )
    return row


def _markdown_pooled_row(
    pf: PooledCell,
    pr: PooledCell,
    pooled: Mapping[ScoredAxis, PooledCell],
    extra: list[ScoredAxis],
) -> str:
    """The pooled row: faithfulness ``pf``, relevance ``pr``, then each optional axis."""
    row = (
        f"| *{POOLED}* | {pf.judged} | {pf.labelled} | {fmt_number(pf.judge_mean)} "
        f"| {_pooled(pf)} | – | {fmt_number(pr.judge_mean)} | {_pooled(pr)} | – |"
    )
    for axis in extra:
        p = pooled.get(axis)
        row += (
            " – | – | – | – | – |"
            if p is None
            else f" {p.judged} | {p.labelled} | {fmt_number(p.judge_mean)} | {_pooled(p)} | – |"
        )
    return row
