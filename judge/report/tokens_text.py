"""The "Tokens and time" section of report.md: what judging cost, per question type.

A pure function of the run record (``Record.tokens``, ``judge.results.tokens``). A backend
that reports no token counts (the lexical baseline) gets one line saying so, never a column
of zeros; a count reported for only some items says over how many.
"""

from __future__ import annotations

from judge.formatting import markdown_text as md
from judge.grouped import ALL
from judge.record.model import Record
from judge.results.tokens import TokenCount, TokenTotals

NOT_REPORTED = "not reported"


def _tokens(value: int | None) -> str:
    return NOT_REPORTED if value is None else f"{value:,}"


def _seconds(count: TokenCount) -> str:
    return NOT_REPORTED if count.seconds is None else f"{count.seconds:,.1f}"


def _items(count: TokenCount) -> str:
    """ "30", or "28 of 30" when only some replies came with counts."""
    if count.counted == count.items:
        return str(count.items)
    return f"{count.counted} of {count.items}"


def _row(name: str, count: TokenCount) -> str:
    cells = [
        md(name),
        _items(count),
        _tokens(count.prompt_tokens),
        _tokens(count.completion_tokens),
        _seconds(count),
    ]
    return "| " + " | ".join(cells) + " |"


def token_lines(report: Record) -> list[str]:
    """The section's Markdown lines, heading first, ending with a blank line; then a line per
    further judgement that ran (chunk grades, correctness), with its own cost."""
    lines = token_section(report.tokens, report.manifest.judge.backend)
    further = [_further(name, count) for name, count in report.further_tokens.items()]
    if not further:
        return lines
    return [*lines[:-1], *further, ""]


def _further(name: str, count: TokenCount) -> str:
    return f"- {name}: {cost_text(count)}"


def cost_text(count: TokenCount) -> str:
    """What a further judgement cost, in a phrase: calls, from the cache, tokens where the
    backend counts them ("not reported", never 0), seconds."""
    tokens = (
        "tokens not reported"
        if not count.reported
        else f"{_tokens(count.prompt_tokens)} prompt + {_tokens(count.completion_tokens)} "
        "completion tokens"
    )
    seconds = "" if count.seconds is None else f", {count.seconds:,.1f} s"
    return f"{count.items} calls ({count.cached} from the cache), {tokens}{seconds}"


def token_section(totals: TokenTotals, backend: str) -> list[str]:
    """``token_lines`` from the totals and the backend's kind (``ollama``, ``lexical``...)."""
    lines = ["## Tokens and time", ""]
    total = totals.total
    if not totals.reported:
        lines.append(f"- tokens: not reported by this backend ({md(backend)})")
        if total.seconds is not None:
            lines.append(f"- judge time: {total.seconds:,.1f} s over {total.timed} items")
        return [*lines, ""]
    lines += [
        "| type | items with counts | prompt tokens | completion tokens | seconds |",
        "|---|---:|---:|---:|---:|",
        *(_row(name, count) for name, count in totals.types.items()),
        _row(ALL, total),
        "",
    ]
    notes = []
    if total.cached:
        notes.append(
            f"{total.cached} of {total.items} verdicts came from the cache: their counts and "
            "seconds are those of the original replies"
        )
    notes.append(
        "seconds: each item's request time, added up (with several requests in flight, more "
        "than the wall time)"
    )
    return [*lines, *(f"- {note}" for note in notes), ""]
