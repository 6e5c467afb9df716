"""Reading saved runs in the terminal: one verdict in its chunks, or two runs side by side."""

from __future__ import annotations

from judge.errors import ConfigError
from judge.judging.verdict import review_reasons
from judge.results.compare import SECTIONS, changed_verdicts, compare_metrics
from judge.results.folder import ReportFolder

BOLD, YELLOW, RED, DIM, RESET = "\033[1m", "\033[43m\033[30m", "\033[31m", "\033[2m", "\033[0m"


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
    lines = [
        style(
            BOLD,
            f"{item.question_id} · {item.type}{' · ' + item.split if item.split else ''} · {scores}",
        ),
        f"run {folder.name}",
        "",
        style(BOLD, "question") + f"  {item.question}",
        style(BOLD, "answer") + f"    {item.answer}",
        style(BOLD, "quote")
        + f"     {v.evidence or '(none)'}"
        + (f"  [{v.match.kind}]" if v.match else ""),
        style(BOLD, "note") + f"      {v.note}",
    ]
    for label in item.labels:
        lines.append(
            style(BOLD, "human")
            + f"     {label.labeller}: F{label.faithfulness} R{label.relevance} {label.note}"
        )
    if v.error:
        lines.append(style(RED, f"error     {v.error}"))
    for reason in review_reasons(v):
        lines.append(style(RED, f"review    {reason}"))
    lines.append("")
    for chunk in item.context:
        text = chunk.text
        golden = " · golden" if chunk.chunk_id in (item.relevant_chunks or ()) else ""
        lines.append(style(DIM, f"#{chunk.rank} {chunk.chunk_id}{golden}"))
        match = v.match
        if (
            match is not None
            and match.chunk_id == chunk.chunk_id
            and match.start is not None
            and match.end is not None
        ):
            quote = text[match.start : match.end]
            marked = style(YELLOW, quote) if color else f"⟦{quote}⟧"
            text = text[: match.start] + marked + text[match.end :]
        lines.append(text)
        lines.append("")
    return "\n".join(lines).rstrip()


def diff_runs(folder_a: ReportFolder, folder_b: ReportFolder, threshold: float) -> str:
    """Every metric that moved beyond ``threshold`` from run A to run B, and flipped verdicts."""
    metrics_a, metrics_b = folder_a.metrics(), folder_b.metrics()
    fa = folder_a.manifest.fingerprints.model_dump()
    fb = folder_b.manifest.fingerprints.model_dump()
    lines = [f"{folder_a.name} → {folder_b.name}"]
    for key, what in (
        ("golden", "golden set"),
        ("corpus", "corpus"),
        ("judge", "judge configuration"),
        ("retrieval", "retrieval settings"),
        ("run", "RAG output"),
    ):
        if fa[key] != fb[key]:
            lines.append(f"note: the {what} differs between the two runs")
    for section in SECTIONS:
        changes = compare_metrics(section, metrics_a[section], metrics_b[section], threshold)
        moved = [c for c in changes if c.direction != "noise"]  # in the order of the table
        lines.append(
            f"\n{section}: {len(moved)} moves beyond ±{threshold:g}, {len(changes) - len(moved)} within"
        )
        lines += [f"  {c.describe()}" for c in moved]
    old, new = folder_a.verdicts(), folder_b.verdicts()
    flips = changed_verdicts(old, new)
    lines.append(f"\nverdicts changed: {len(flips)}")
    lines += [f"  {flip.describe()}" for flip in flips]
    return "\n".join(lines)
