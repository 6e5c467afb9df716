"""Reading saved runs in the terminal: one verdict in its chunks, or two runs side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judge.errors import ConfigError
from judge.history import SECTIONS, compare_metrics
from judge.records import changed_verdicts, read_items, read_verdicts
from judge.runs_index import resolve_folder
from judge.verdict import review_reasons

BOLD, YELLOW, RED, DIM, RESET = "\033[1m", "\033[43m\033[30m", "\033[31m", "\033[2m", "\033[0m"


def show_item(reports_dir: Path, folder_name: str | None, question_id: str, color: bool) -> str:
    """Question, answer, scores, and the judged chunks with the quote marked at its span.

    With ``color`` the quote is highlighted; without, it is wrapped in ⟦ ⟧ so that plain
    logs and pipes still show where it is.
    """
    folder = resolve_folder(reports_dir, folder_name)
    items = read_items(folder)
    verdicts = read_verdicts(folder)
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
            + f"     {label['labeller']}: F{label['faithfulness']} R{label['relevance']} {label.get('note', '')}"
        )
    if v.error:
        lines.append(style(RED, f"error     {v.error}"))
    for reason in review_reasons(v):
        lines.append(style(RED, f"review    {reason}"))
    lines.append("")
    for chunk in item.context:
        text = str(chunk["text"])
        golden = " · golden" if chunk["chunk_id"] in item.relevant_chunks else ""
        lines.append(style(DIM, f"#{chunk['rank']} {chunk['chunk_id']}{golden}"))
        match = v.match
        if (
            match is not None
            and match.chunk_id == chunk["chunk_id"]
            and match.start is not None
            and match.end is not None
        ):
            quote = text[match.start : match.end]
            marked = style(YELLOW, quote) if color else f"⟦{quote}⟧"
            text = text[: match.start] + marked + text[match.end :]
        lines.append(text)
        lines.append("")
    return "\n".join(lines).rstrip()


def _tables(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    metrics: dict[str, Any] = {}
    for section in SECTIONS:
        table = report["tables"][section]
        metrics[section] = {
            row["type"]: {k: v for k, v in row.items() if k != "type" and isinstance(v, float)}
            for row in table["rows"]
        }
    return report["manifest"], metrics


def diff_runs(reports_dir: Path, a: str, b: str, threshold: float) -> str:
    """Every metric that moved beyond ``threshold`` from run A to run B, and flipped verdicts."""
    folder_a, folder_b = resolve_folder(reports_dir, a), resolve_folder(reports_dir, b)
    manifest_a, metrics_a = _tables(folder_a)
    manifest_b, metrics_b = _tables(folder_b)
    fa, fb = manifest_a["fingerprints"], manifest_b["fingerprints"]
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
        moved = [c for c in changes if c.direction != "noise"]
        lines.append(
            f"\n{section}: {len(moved)} moves beyond ±{threshold:g}, {len(changes) - len(moved)} within"
        )
        lines += [f"  {c.describe()}" for c in moved]
    old, new = read_verdicts(folder_a), read_verdicts(folder_b)
    flips = changed_verdicts(old, new)
    lines.append(f"\nverdicts changed: {len(flips)}")
    lines += [f"  {flip.describe()}" for flip in flips]
    return "\n".join(lines)
