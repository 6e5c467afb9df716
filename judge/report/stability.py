"""The judge stability check as a view: a Markdown section and console lines.

Pure functions of ``judge.judging.types.StabilityReport`` (plain data): the check computes,
this module only lays the numbers out. Identifiers and errors from the inputs are escaped where
they are shown (``markdown_text``, ``terminal_text``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from judge.formatting import markdown_text, terminal_text
from judge.grouped import ALL
from judge.judging.types import Count, StabilityReport, VariantFlags, VariantRow

_HEADER = (
    "variant",
    "type",
    "n",
    "F changed",
    "R changed",
    "F up",
    "R up",
    "to 2/2",
    "not ok",
    "n/a",
)


def count_text(count: Count) -> str:
    """``k/n (p %)``, with "–" for the share of nothing (``0/0 (–)``)."""
    share = count.share
    return f"{count.k}/{count.n} ({'–' if share is None else f'{share * 100:.0f} %'})"


def _cells(row: VariantRow, count: Callable[[Count], str]) -> list[str]:
    return [
        row.variant,
        row.question_type,
        str(row.pairs),
        count(row.changed["faithfulness"]),
        count(row.changed["relevance"]),
        count(row.moved_up["faithfulness"]),
        count(row.moved_up["relevance"]),
        count(row.became_full),
        str(row.not_ok),
        str(row.not_applicable),
    ]


def _fr(scores: tuple[int, int]) -> str:
    return f"F{scores[0]} R{scores[1]}"


def _summary(report: StabilityReport) -> str:
    return (
        f"{len(report.sampled)} of {report.population} answers sampled (seed {report.seed}); "
        f"{report.verdicts} verdicts, {report.from_cache} from the cache, "
        f"{report.elapsed_s:.1f} s"
    )


def stability_markdown(report: StabilityReport) -> list[str]:
    """A Markdown section: what was done, the table, the changed items and the failures."""
    md = markdown_text
    lines = [
        "## Judge stability",
        "",
        f"Judge: {md(report.judge)}. {md(_summary(report))}.",
        "",
        f"Sampled: {', '.join(md(qid) for qid in report.sampled) or 'none'}.",
        "",
        "Each sampled answer was judged again with its chunks reversed and shuffled, and with a "
        "fixed instruction to the judge appended to the answer (English, Japanese). n counts "
        'the pairs where both verdicts are ok; "up" is a higher score in the variant; '
        '"to 2/2" counts, of the originals below 2/2, those the variant put at 2/2; "not ok" '
        'pairs are not compared; "n/a" answers have too few chunks to reorder.',
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|---|---|" + "---:|" * (len(_HEADER) - 2),
    ]
    for row in report.rows:
        cells = [md(c) for c in _cells(row, count_text)]
        if row.question_type == ALL:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if report.flips:
        lines += [
            f"Changed verdicts ({len(report.flips)}):",
            "",
            "| question | type | variant | before | after |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(c.question_id)} | {md(c.question_type)} | {c.variant} | {_fr(c.before)} "
            f"| {_fr(c.after)} |"
            for c in report.flips
        ]
    else:
        lines.append("No verdict changed.")
    if report.failures:
        lines += ["", f"Verdicts not ok ({len(report.failures)}), their pairs not compared:", ""]
        lines += [
            f"- {md(f.question_id)} ({f.variant or 'original'}): {md(f.status)}: {md(f.error)}"
            for f in report.failures
        ]
    summary = flags_summary(report)
    if summary is not None:
        lines += ["", md(summary[0].upper() + summary[1:]) + "."]
        named = [line for f in report.flags for line in _flagged_lines(f, md)]
        if named:
            lines += ["", *[f"- {line}" for line in named]]
    lines.append("")
    return lines


def _flag_name(flags: VariantFlags) -> str:
    return flags.variant or "original"


#: Flagged verdicts named per variant (Markdown and console); the rest are counted.
FLAGGED_NAMED = 10


def flags_summary(report: StabilityReport) -> str | None:
    """One line: per variant, how many of its verdicts carry review flags (None for a report
    without the flags)."""
    if not report.flags:
        return None
    counts = "; ".join(f"{_flag_name(f)} {count_text(f.count)}" for f in report.flags)
    return (
        f"verdicts with review flags (their own, or an instruction to the judge found in the "
        f"answer or a chunk, whatever the status): {counts}; the injection variants should "
        "all be flagged"
    )


def _flagged_lines(flags: VariantFlags, say: Callable[[str], str]) -> list[str]:
    shown = [
        f"{say(f.question_id)} ({_flag_name(flags)}, {f.status}): {say('; '.join(f.reasons))}"
        for f in flags.flagged[:FLAGGED_NAMED]
    ]
    left = len(flags.flagged) - FLAGGED_NAMED
    return shown + ([f"… {left} more {_flag_name(flags)} verdicts flagged"] if left > 0 else [])


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _compact(count: Count) -> str:
    share = count.share
    return f"{count.k}/{count.n}" + ("" if share is None else f" {share:.0%}")


#: Changed verdicts listed on the console; the rest are in the Markdown section.
CONSOLE_FLIPS = 10


def stability_lines(report: StabilityReport) -> list[str]:
    """The report as plain-text lines for the console: one aligned table (shares as "k/n p%"),
    then the first changed items and the failures."""
    rows = [list(_HEADER)] + [
        [terminal_text(c, one_line=True) for c in _cells(row, _compact)] for row in report.rows
    ]
    widths = [max(_width(r[i]) for r in rows) for i in range(len(_HEADER))]

    def line(cells: list[str]) -> str:
        out = [
            cell + " " * (widths[i] - _width(cell))
            if i < 2
            else " " * (widths[i] - _width(cell)) + cell
            for i, cell in enumerate(cells)
        ]
        return "  ".join(out).rstrip()

    lines = [
        f"judge stability ({terminal_text(report.judge, one_line=True)}): "
        + terminal_text(_summary(report), one_line=True),
        line(rows[0]),
    ]
    previous = None
    for cells, row in zip(rows[1:], report.rows, strict=True):
        if row.variant != previous:
            lines.append("-" * _width(line(rows[0])))
            previous = row.variant
        lines.append(line(cells))
    if report.flips:
        lines.append(f"{len(report.flips)} changed verdicts:")
        lines += [
            f"  {terminal_text(c.question_id, one_line=True)} {c.variant}: "
            f"{_fr(c.before)} → {_fr(c.after)}"
            for c in report.flips[:CONSOLE_FLIPS]
        ]
        if len(report.flips) > CONSOLE_FLIPS:
            lines.append(f"  … {len(report.flips) - CONSOLE_FLIPS} more")
    else:
        lines.append("no verdict changed")
    for f in report.failures:
        lines.append(
            f"not ok: {terminal_text(f.question_id, one_line=True)} ({f.variant or 'original'}): "
            f"{f.status}: {terminal_text(f.error, one_line=True)}"
        )
    summary = flags_summary(report)
    if summary is not None:
        # The counts only: the Markdown section names each flagged verdict with its reasons.
        lines.append(terminal_text(summary, one_line=True) + " (the report names them)")
    return lines
