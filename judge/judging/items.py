"""What the judge is shown for each answer: the question, the top ``context_k`` chunks the
generator saw (in rank order, never the rest of the corpus, never the golden chunks), and the
answer, with a key that hashes exactly those.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from judge.hashing import tagged_hash
from judge.inputs.golden import Chunk, GoldenQuestion, GoldenSet
from judge.inputs.runs import Run, RunRecord


@dataclass(frozen=True, slots=True)
class ContextChunk:
    """A chunk as the generator (and therefore the judge) saw it.

    A plain dataclass, not a model: items are built by the thousand, and pydantic still reads
    and writes it as ``{rank, chunk_id, text}`` inside the report folder's records.
    """

    rank: int
    chunk_id: str
    text: str


def context_for(record: RunRecord, corpus: dict[str, Chunk], context_k: int) -> list[ContextChunk]:
    """The top ``context_k`` chunks of ``record`` with their text, in rank order."""
    return [
        ContextChunk(rank, item.chunk_id, item.text or corpus[item.chunk_id].text)
        for rank, item in enumerate(record.retrieved[:context_k], start=1)
    ]


class JudgeItem(NamedTuple):
    """One answer to judge, with exactly what the judge will see."""

    question: GoldenQuestion
    record: RunRecord
    context: list[ContextChunk]
    key: str
    """Hash of question text, context chunks (ids and text, in order) and answer."""


def item_key(question: str, context: Sequence[ContextChunk], answer: str) -> str:
    chunks = [[chunk.chunk_id, chunk.text] for chunk in context]
    return tagged_hash({"question": question, "context": chunks, "answer": answer}, 32)


def build_items(golden: GoldenSet, run: Run, context_k: int) -> list[JudgeItem]:
    """One item per golden question the run answered, in golden order."""
    items = []
    for question in golden.questions:
        record = run.records.get(question.id)
        if record is None:
            continue  # the adapter failed for it; reported with the run
        context = context_for(record, golden.corpus, context_k)
        items.append(
            JudgeItem(
                question, record, context, item_key(question.question, context, record.answer)
            )
        )
    return items
