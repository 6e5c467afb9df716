"""Reading saved runs in the terminal: one verdict in its chunks, or two runs side by side."""

from __future__ import annotations

from judge.errors import ConfigError
from judge.formatting import terminal_text
from judge.judging.verdict import review_reasons
from judge.results.compare import (
    SECTIONS,
    GateRule,
    SectionComparison,
    changed_verdicts,
    compare_values,
)
from judge.results.folder import ReportFolder
from judge.results.values import folder_values

BOLD, YELLOW, RED, DIM, RESET = "\033[1m", "\033[43m\033[30m", "\033[31m", "\033[2m", "\033[0m"

# Data is made safe to print field by field, before our colours go around it: an id or a name
# stays on its line (``_word``), an answer or a chunk keeps its lines (``_block``).


def _word(text: object) -> str:
    return terminal_text(text, one_line=True)


def _block(text: object) -> str:
    return terminal_text(text)


def show_item(folder: ReportFolder, question_id: str, color: bool) -> str:
    """Question, answer, scores, and the judged chunks with the quote marked at its span.

    With ``color`` the quote is highlighted; without, it is wrapped in ⟦ ⟧ so that plain
    logs and pipes still show where it is.
    """
    items = folder.items()
    verdicts = folder.verdicts()
    if question_id not in items:
        raise ConfigError(f"{question_id}: not in {folder.name} (it has {', '.join(items)})")
    item, v = items[question_id], verdicts[question_id]

    def style(code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if color else text

    scores = (
        f"faithfulness {v.faithfulness} · relevance {v.relevance}" if v.status == "ok" else v.status
    )
    split = f" · {_word(item.split)}" if item.split else ""
    lines = [
        style(BOLD, f"{_word(item.question_id)} · {_word(item.type)}{split} · {scores}"),
        f"run {_word(folder.name)}",
        "",
        style(BOLD, "question") + f"  {_block(item.question)}",
        style(BOLD, "answer") + f"    {_block(item.answer)}",
        style(BOLD, "quote")
        + f"     {_block(v.evidence) or '(none)'}"
        + (f"  [{v.match.kind}]" if v.match else ""),
        style(BOLD, "note") + f"      {_block(v.note)}",
    ]
    for label in item.labels:
        lines.append(
            style(BOLD, "human")
            + f"     {_word(label.labeller)}: F{label.faithfulness} R{label.relevance} "
            + _block(label.note)
        )
    if v.error:
        lines.append(style(RED, f"error     {_block(v.error)}"))
    for reason in review_reasons(v):
        lines.append(style(RED, f"review    {_block(reason)}"))
    lines.append("")
    for chunk in item.context:
        text = chunk.text
        golden = " · golden" if chunk.chunk_id in (item.relevant_chunks or ()) else ""
        lines.append(style(DIM, f"#{chunk.rank} {_word(chunk.chunk_id)}{golden}"))
        match = v.match
        if (
            match is not None
            and match.chunk_id == chunk.chunk_id
            and match.start is not None
            and match.end is not None
        ):
            quote = _block(text[match.start : match.end])
            marked = style(YELLOW, quote) if color else f"⟦{quote}⟧"
            lines.append(_block(text[: match.start]) + marked + _block(text[match.end :]))
        else:
            lines.append(_block(text))
        lines.append("")
    return "\n".join(lines).rstrip()


def diff_runs(folder_a: ReportFolder, folder_b: ReportFolder, rule: GateRule) -> str:
    """Run A against run B question by question, with the gate's rule (``rule``): what
    regressed, improved or moved in a type too small to call, then the flipped verdicts."""
    values_a, values_b = folder_values(folder_a), folder_values(folder_b)
    types = tuple(folder_b.manifest.config.get("data", {}).get("question_types", ()))
    fa = folder_a.manifest.fingerprints.model_dump()
    fb = folder_b.manifest.fingerprints.model_dump()
    lines = [f"{_word(folder_a.name)} → {_word(folder_b.name)}"]
    for key, what in (
        ("golden", "golden set"),
        ("corpus", "corpus"),
        ("judge", "judge configuration"),
        ("retrieval", "retrieval settings"),
        ("run", "RAG output"),
    ):
        if fa[key] != fb[key]:
            lines.append(f"note: the {what} differs between the two runs")
    lines.append(f"compared question by question ({rule.describe()})")
    for section in SECTIONS:
        comp = SectionComparison(
            section, folder_a.name, compare_values(section, values_a, values_b, rule, types), ""
        )
        counts = comp.counts()
        lines.append(
            f"\n{section}: {counts['regressed']} regressed, {counts['improved']} improved, "
            f"{counts['too_few']} listed (too few questions to call), {counts['noise']} within "
            "noise"
        )
        lines += [f"  {_word(c.describe())}" for c in comp.moved]
    old, new = folder_a.verdicts(), folder_b.verdicts()
    flips = changed_verdicts(old, new)
    lines.append(f"\nverdicts changed: {len(flips)}")
    lines += [f"  {_word(flip.describe())}" for flip in flips]
    return "\n".join(lines)
