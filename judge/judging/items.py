"""What the judge is shown for each answer: the question, the top ``context_k`` chunks the
generator saw (in rank order, never the rest of the corpus, never the golden chunks), the
answer, and the question's reference answer (for prompts that use ``$reference``), with a key
that hashes exactly those.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import NamedTuple

from judge.hashing import HASH_SCHEME
from judge.inputs.golden import Chunk, GoldenQuestion, GoldenSet
from judge.inputs.runs import Run, RunRecord
from judge.judging.types import ContextChunk


@functools.lru_cache(maxsize=1 << 14)
def _shown(rank: int, chunk_id: str, text: str) -> ContextChunk:
    """The one ``ContextChunk`` for a chunk's text at a rank: immutable, so every item that
    shows it shares it. A run of 10,000 items shows a few thousand distinct ones instead of
    50,000 objects that all live to the end of the run, which the garbage collector would scan
    again and again (docs/benchmarks.md)."""
    return ContextChunk(rank, chunk_id, text)


def context_for(record: RunRecord, corpus: dict[str, Chunk], context_k: int) -> list[ContextChunk]:
    """The top ``context_k`` chunks of ``record`` with their text, in rank order."""
    return [
        _shown(rank, item.chunk_id, item.text or corpus[item.chunk_id].text)
        for rank, item in enumerate(record.retrieved[:context_k], start=1)
    ]


class JudgeItem(NamedTuple):
    """One answer to judge, with exactly what the judge will see."""

    question: GoldenQuestion
    record: RunRecord
    context: list[ContextChunk]
    key: str
    """Hash of question text, context chunks (ids and text, in order), answer and reference."""

    @property
    def question_id(self) -> str:
        return self.question.id


def item_key(
    question: str, context: Sequence[ContextChunk], answer: str, reference: str | None = None
) -> str:
    """The cache key of one item: it changes exactly when what a prompt can show changes.

    The reference answer is hashed whenever there is one, whether or not the prompt uses
    ``$reference``: the key cannot see the prompt, and a cached verdict given under one reference
    must never be served for another. An absent and an empty reference render the same (``""``)
    and leave the key as it was before references were hashed, so questions without one keep
    their cached verdicts.
    """
    # tagged_hash({"question": ..., "context": [[id, text], ...], "answer": ..., "reference":
    # ...}, 32), its canonical JSON written out (keys in sorted order, no spaces, each string as
    # json.dumps writes it), with each chunk's part written once per chunk rather than once per
    # item (tests/judging/test_items.py compares the two).
    parts = ['{"answer":', _json_string(answer), ',"context":[']
    parts.append(",".join([_chunk_json(chunk.chunk_id, chunk.text) for chunk in context]))
    parts += ['],"question":', _json_string(question)]
    if reference:
        parts += [',"reference":', _json_string(reference)]
    parts.append("}")
    digest = hashlib.sha256("".join(parts).encode("utf-8")).hexdigest()
    return f"{HASH_SCHEME}:{digest[:32]}"


#: How ``json.dumps(..., ensure_ascii=False)`` (``hashing.canonical_json``) writes a string.
_json_string: Callable[[str], str] = json.encoder.encode_basestring


@functools.lru_cache(maxsize=1 << 14)
def _chunk_json(chunk_id: str, text: str) -> str:
    """A context chunk's ``[id, text]`` in canonical JSON."""
    return f"[{_json_string(chunk_id)},{_json_string(text)}]"


def build_items(golden: GoldenSet, run: Run, context_k: int) -> list[JudgeItem]:
    """One item per golden question the run answered, in golden order."""
    items = []
    for question in golden.questions:
        record = run.records.get(question.id)
        if record is None:
            continue  # the adapter failed for it; reported with the run
        context = context_for(record, golden.corpus, context_k)
        key = item_key(question.question, context, record.answer, question.reference_answer)
        items.append(JudgeItem(question, record, context, key))
    return items
