"""What a report folder keeps about each judged item, and readers for a folder's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from judge.verdict import Verdict


class ItemRecord(BaseModel):
    """What the judge saw for one question, kept with the report (``items.jsonl``)."""

    model_config = ConfigDict(extra="forbid")

    question_id: str
    type: str
    split: str
    question: str
    answer: str
    context: list[dict[str, Any]]
    """[{rank, chunk_id, text}] in rank order."""
    relevant_chunks: list[str]
    retrieval: dict[str, float]
    """Metrics at every k (empty for questions without relevant chunks)."""
    labels: list[dict[str, Any]]
    """Human labels for this exact answer."""


def read_items(folder: Path) -> dict[str, ItemRecord]:
    items = {}
    for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = ItemRecord.model_validate_json(line)
            items[item.question_id] = item
    return items


def read_verdicts(folder: Path) -> dict[str, Verdict]:
    verdicts = {}
    for line in (folder / "verdicts.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            verdict = Verdict.model_validate_json(line)
            verdicts[verdict.question_id] = verdict
    return verdicts
