"""What a report folder keeps about each judged item, and readers for a folder's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.jsonl import parse_records, read_jsonl
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
    """``items.jsonl`` of a run folder, by question id (damaged lines: one InputError)."""
    path = folder / "items.jsonl"
    return {item.question_id: item for _, item in parse_records(path, read_jsonl(path), ItemRecord)}


def read_verdicts(folder: Path) -> dict[str, Verdict]:
    """``verdicts.jsonl`` of a run folder, by question id (damaged lines: one InputError)."""
    path = folder / "verdicts.jsonl"
    return {v.question_id: v for _, v in parse_records(path, read_jsonl(path), Verdict)}


class Flip(NamedTuple):
    """A verdict that changed between two runs of the same items."""

    question_id: str
    old: Verdict
    new: Verdict

    def describe(self) -> str:
        o, n = self.old, self.new
        return (
            f"{self.question_id}: F{o.faithfulness} R{o.relevance} ({o.status}) → "
            f"F{n.faithfulness} R{n.relevance} ({n.status})"
        )


def changed_verdicts(old: dict[str, Verdict], new: dict[str, Verdict]) -> list[Flip]:
    """Verdicts whose status or scores differ, for the questions judged in both."""

    def outcome(v: Verdict) -> tuple[str, int | None, int | None]:
        return v.status, v.faithfulness, v.relevance

    return [
        Flip(qid, old[qid], verdict)
        for qid, verdict in new.items()
        if qid in old and outcome(old[qid]) != outcome(verdict)
    ]
