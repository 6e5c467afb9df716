"""A demo RAG "system" for ``judge sweep``: it re-ranks the sample's recorded run.

The recorded run (golden/sample/run.jsonl) has ten ranked chunks per question with the
retriever's scores. Under a setting, each chunk's score becomes a blend of the retriever's
(scaled to 0-1 per question) and a lexical overlap between the question and the chunk, and the
chunks are re-ranked by it; the answer stays the recorded one. Two parameters:

- ``lexical_weight``: 0 keeps the recorded order; 1 ranks by overlap alone;
- ``with_heading``: whether the chunk's heading counts in the overlap.

Both adapter shapes ``judge sweep`` accepts are here:

- ``build(params)`` (``sweep.factory``): called once per setting, returns the function that
  answers one question; the place to load an index or a model once;
- ``answer(question, params)`` (``sweep.answer``): called for every question.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from judge.textnorm import lexical_tokens

SAMPLE = Path(__file__).resolve().parent.parent / "golden" / "sample"


@cache
def _sample() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The recorded run by question text, and the corpus by chunk id."""
    ids = {}
    for line in (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        ids[q["question"]] = q["id"]
    records = {}
    for line in (SAMPLE / "run.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "id" in record:  # the first line is the run's metadata
            records[record["id"]] = record
    corpus = {}
    for line in (SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        chunk = json.loads(line)
        corpus[chunk["chunk_id"]] = chunk
    return {text: records[qid] for text, qid in ids.items() if qid in records}, corpus


def _overlap(question: str, text: str) -> float:
    """Share of the question's tokens (words, CJK character pairs) found in the text."""
    asked = set(lexical_tokens(question))
    return len(asked & set(lexical_tokens(text))) / len(asked) if asked else 0.0


def build(params: dict[str, Any]) -> Callable[[str], dict[str, Any]]:
    weight = params["lexical_weight"]
    with_heading = params["with_heading"]
    if not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise ValueError(f"lexical_weight must be a number from 0 to 1, not {weight!r}")
    if not isinstance(with_heading, bool):
        raise ValueError(f"with_heading must be true or false, not {with_heading!r}")
    records, corpus = _sample()

    def answer(question: str) -> dict[str, Any]:
        record = records[question]
        scores = [item["score"] for item in record["retrieved"]]
        low, high = min(scores), max(scores)
        ranked = []
        for position, item in enumerate(record["retrieved"]):
            chunk = corpus[item["chunk_id"]]
            text = f"{chunk.get('heading', '')} {chunk['text']}" if with_heading else chunk["text"]
            scaled = (item["score"] - low) / (high - low) if high > low else 1.0
            blended = (1 - weight) * scaled + weight * _overlap(question, text)
            ranked.append((-blended, position, item["chunk_id"]))  # ties keep recorded order
        ranked.sort()
        return {
            "retrieved": [
                {"chunk_id": chunk_id, "score": round(-score, 6)} for score, _, chunk_id in ranked
            ],
            "answer": record["answer"],
        }

    return answer


def answer(question: str, params: dict[str, Any]) -> dict[str, Any]:
    return _built(params["lexical_weight"], params["with_heading"])(question)


@cache
def _built(weight: float, with_heading: bool) -> Callable[[str], dict[str, Any]]:
    return build({"lexical_weight": weight, "with_heading": with_heading})
