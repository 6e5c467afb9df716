"""What the judge saw for one question: the per-question part of the run record that the audit,
the review page and the comparisons read (``judge.record.model.QuestionRow.item``; a report folder's
``items.jsonl`` holds one a line)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from judge.inputs.labels import LabelScores
from judge.judging.types import ContextChunk


class ItemRecord(BaseModel):
    """What the judge saw for one question, kept with the report (``items.jsonl``)."""

    model_config = ConfigDict(extra="forbid")

    question_id: str
    type: str
    split: str
    question: str
    answer: str
    context: list[ContextChunk]
    """The top context_k chunks in rank order."""
    relevant_chunks: list[str] | None = None
    """None when the golden set does not say which chunks are relevant."""
    retrieval: dict[str, float]
    """Metrics at every k (empty for questions without relevant chunks)."""
    labels: list[LabelScores]
    """Human labels for this exact answer."""
    reference_answer: str | None = None
    """The golden set's reference answer, when it has one (the shipped prompt sends it to the
    judge; review.html and verdicts.csv show it)."""
