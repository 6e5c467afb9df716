"""Reading saved runs in the terminal: one verdict in its chunks, or two runs side by side."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from judge.errors import ConfigError
from judge.formatting import terminal_text
from judge.judging.types import ContextChunk, SentenceCheck, Verdict
from judge.record.model import QuestionRow, Record, RunDiff
from judge.report.evidence_text import (
    SENTENCE_WORDS,
    answer_pieces,
    cited_pieces,
    evidence_origin,
    unsupported_marker,
)
from judge.results.item_record import ItemRecord

BOLD, YELLOW, RED, DIM, RESET = "\033[1m", "\033[43m\033[30m", "\033[31m", "\033[2m", "\033[0m"
UNDERLINED_RED = "\033[4m\033[31m"

# Data is made safe to print field by field, before our colours go around it: an id or a name
# stays on its line (``_word``), an answer or a chunk keeps its lines (``_block``).


def _word(text: object) -> str:
    return terminal_text(text, one_line=True)


def _block(text: object) -> str:
    return terminal_text(text)


Style = Callable[[str, str], str]


def _styler(color: bool) -> Style:
    """A function that wraps text in an ANSI code when ``color``, and leaves it as it is when
    not (plain logs and pipes)."""

    def style(code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if color else text

    return style


def show_item(record: Record, question_id: str, color: bool) -> str:
    """Question, answer, scores, and the judged chunks with the evidence marked at its span.

    With ``color`` the evidence is highlighted; without, it is wrapped in ⟦ ⟧ so that plain
    logs and pipes still show where it is. In sentence mode the answer shows its unsupported
    sentences (underlined in red, and ``[✗2 unsupported]`` after each, which needs no colour),
    then every sentence's verdict with the context sentence it cites; the cited sentences are
    marked in their chunks with the numbers of the answer sentences citing them.
    """
    rows = {row.question_id: row for row in record.questions if row.item and row.verdict}
    if question_id not in rows:
        raise ConfigError(
            f"{question_id}: not in {record.manifest.folder} (it has {', '.join(rows)})"
        )
    row = rows[question_id]
    item, v = row.item, row.verdict
    assert item is not None and v is not None
    style = _styler(color)
    checks = v.sentences if v.status == "ok" and v.sentences is not None else None
    lines = _verdict_lines(record, item, v, checks, style)
    lines += _remarks(row, item, v, style)
    lines.append("")
    lines += _chunk_lines(item, v, checks, style, color)
    return "\n".join(lines).rstrip()


def _verdict_lines(
    record: Record,
    item: ItemRecord,
    v: Verdict,
    checks: tuple[SentenceCheck, ...] | None,
    style: Style,
) -> list[str]:
    """The heading, the question, the answer and what the judge found in it: the quote or cited
    sentence, or in sentence mode every sentence's verdict (``checks``); where the evidence
    came from."""
    scores = (
        f"faithfulness {v.faithfulness} · relevance {v.relevance}" if v.status == "ok" else v.status
    )
    split = f" · {_word(item.split)}" if item.split else ""
    lines = [
        style(BOLD, f"{_word(item.question_id)} · {_word(item.type)}{split} · {scores}"),
        f"run {_word(record.manifest.folder)}",
        "",
        style(BOLD, "question") + f"  {_block(item.question)}",
        style(BOLD, "answer")
        + f"    {_block(item.answer) if checks is None else _answer(item.answer, checks, style)}",
    ]
    if checks is None:
        lines.append(
            style(BOLD, "cited" if v.mode == "cited" else "quote")
            + f"     {_block(v.evidence) or '(none)'}"
            + (f"  [{v.match.kind}]" if v.match else "")
        )
    else:
        lines += _sentence_lines(checks, item.context, style)
    if v.status == "ok":
        lines.append(style(BOLD, "evidence") + f"  {_word(evidence_origin(v))}")
    return lines


def _remarks(row: QuestionRow, item: ItemRecord, v: Verdict, style: Style) -> list[str]:
    """The judge's note, the human labels, the verdict's error and why it needs review."""
    lines = [style(BOLD, "note") + f"      {_block(v.note)}"]
    for label in item.labels:
        lines.append(
            style(BOLD, "human")
            + f"     {_word(label.labeller)}: F{label.faithfulness} R{label.relevance} "
            + _block(label.note)
        )
    if v.error:
        lines.append(style(RED, f"error     {_block(v.error)}"))
    for reason in row.triage.reasons:
        lines.append(style(RED, f"review    {_block(reason)}"))
    return lines


def _chunk_lines(
    item: ItemRecord,
    v: Verdict,
    checks: tuple[SentenceCheck, ...] | None,
    style: Style,
    color: bool,
) -> list[str]:
    """Each judged chunk under its rank and id, with the quote or the cited sentences marked."""
    lines = []
    for chunk in item.context:
        golden = " · golden" if chunk.chunk_id in (item.relevant_chunks or ()) else ""
        lines.append(style(DIM, f"#{chunk.rank} {_word(chunk.chunk_id)}{golden}"))
        if checks is not None:
            lines.append(_cited_chunk(cited_pieces(chunk, checks), style, color))
        else:
            lines.append(_quoted_chunk(chunk.chunk_id, chunk.text, v, style, color))
        lines.append("")
    return lines


def _answer(answer: str, checks: tuple[SentenceCheck, ...], style: Style) -> str:
    """The answer with each unsupported sentence underlined and followed by its marker, and
    the sentences without a claim dimmed."""
    out = []
    for text, check in answer_pieces(answer, checks):
        shown = _block(text)
        if check is not None and check.verdict == "unsupported":
            shown = style(UNDERLINED_RED, shown) + style(RED, unsupported_marker(check))
        elif check is not None and check.verdict == "no_claim":
            shown = style(DIM, shown)
        out.append(shown)
    return "".join(out)


def _sentence_lines(
    checks: tuple[SentenceCheck, ...], context: list[ContextChunk], style: Style
) -> list[str]:
    """Every answer sentence with its verdict, and below it the context sentence it cites (by
    its number as the prompt showed it, and its chunk's rank and id)."""
    ranks = {chunk.chunk_id: chunk.rank for chunk in context}
    lines = [style(BOLD, "sentences")]
    for check in checks:
        word = SENTENCE_WORDS[check.verdict]
        line = f"  {check.n} {word:<13}  {_word(check.text)}"
        lines.append(style(RED, line) if check.verdict == "unsupported" else line)
        match = check.evidence
        if match is not None and match.cited:
            rank = ranks.get(match.chunk_id or "")
            where = f"#{rank} " if rank is not None else ""
            number = match.sentence
            which = f"sentence {number} " if number is not None else ""
            lines.append(
                f"  {'':<{len(str(check.n))}} {'':<13}  cites {which}({where}"
                f"{_word(match.chunk_id)}): {_word(check.evidence_text)}"
            )
    return lines


def _cited_chunk(
    pieces: list[tuple[str, tuple[int, ...] | None]], style: Style, color: bool
) -> str:
    out = []
    for text, citing in pieces:
        shown = _block(text)
        if citing is None:
            out.append(shown)
            continue
        numbers = ", ".join(map(str, citing))
        which = f"[sentence{'s' if len(citing) > 1 else ''} {numbers}]"
        out.append((style(YELLOW, shown) if color else f"⟦{shown}⟧") + style(DIM, which))
    return "".join(out)


def _quoted_chunk(chunk_id: str, text: str, v: Verdict, style: Style, color: bool) -> str:
    match = v.match
    if (
        match is not None
        and match.chunk_id == chunk_id
        and match.start is not None
        and match.end is not None
    ):
        quote = _block(text[match.start : match.end])
        marked = style(YELLOW, quote) if color else f"⟦{quote}⟧"
        return _block(text[: match.start]) + marked + _block(text[match.end :])
    return _block(text)


def _ids(question_ids: Sequence[str]) -> str:
    return f" ({', '.join(_word(q) for q in question_ids)})" if question_ids else ""


def diff_lines(diff: RunDiff) -> list[str]:
    """Run A against run B question by question (``judge.pipeline.diff``): which questions'
    answers and retrieved chunks changed, what regressed, improved or moved beyond the
    margin without being shown, then the flipped verdicts.

    The changed answers and retrieval (``judge.pipeline.diff.changed_answers``) come first,
    since they are what a moved mean or a flipped verdict is to be read against."""
    lines = [f"{_word(diff.old)} → {_word(diff.new)}"]
    lines += [f"note: the {what} differs between the two runs" for what in diff.differs]
    answers, retrieval = diff.answers_changed, diff.retrieval_changed
    lines.append(f"answers changed: {len(answers)}{_ids(answers)}")
    lines.append(
        f"retrieval changed (context chunks or their order): {len(retrieval)}{_ids(retrieval)}"
    )
    lines.append(f"compared question by question ({diff.rule.describe()})")
    for comp in diff.comparisons:
        lines.append(f"\n{comp.section}: {comp.counts_text()}")
        lines += [f"  {_word(c.describe())}" for c in comp.moved]
    lines.append(f"\nverdicts changed: {len(diff.flips)}")
    lines += [f"  {_word(flip.describe())}" for flip in diff.flips]
    return lines
