"""What the judge saw for one question (judge.results.item_record): a line of ``items.jsonl``
read and written as it is, with its optional fields defaulted and anything unknown refused."""

from __future__ import annotations

import json

import pydantic
import pytest

from judge.inputs.labels import LabelScores
from judge.judging.types import ContextChunk
from judge.results.item_record import ItemRecord

LINE = {
    "question_id": "q1",
    "type": "factual",
    "split": "tune",
    "question": "年額プランはいくらですか？",
    "answer": "年額3,800円です。",
    "context": [
        {"rank": 1, "chunk_id": "pricing/plans", "text": "年額プランは3,800円です。"},
        {"rank": 2, "chunk_id": "pricing/trial", "text": "7日間の無料体験があります。"},
    ],
    "relevant_chunks": ["pricing/plans"],
    "retrieval": {"recall@1": 1.0, "mrr": 1.0},
    "labels": [{"question_id": "q1", "faithfulness": 2, "relevance": 1, "labeller": "ana"}],
    "reference_answer": "3,800円",
}


def test_an_items_line_reads_into_typed_parts_and_writes_back_the_same() -> None:
    item = ItemRecord.model_validate_json(json.dumps(LINE, ensure_ascii=False))
    assert item.context[0] == ContextChunk(1, "pricing/plans", "年額プランは3,800円です。")
    assert item.labels == [
        LabelScores(question_id="q1", faithfulness=2, relevance=1, labeller="ana")
    ]
    back = json.loads(item.model_dump_json())
    # The label's optional fields are written out with their defaults; the rest as read.
    assert back["labels"][0] == LINE["labels"][0] | {
        "correctness": None,
        "note": "",
        "labelled_at": None,
        "source": None,
    }
    assert {k: v for k, v in back.items() if k != "labels"} == {
        k: v for k, v in LINE.items() if k != "labels"
    }


def test_the_optional_fields_default_to_unknown() -> None:
    bare = {k: v for k, v in LINE.items() if k not in ("relevant_chunks", "reference_answer")}
    item = ItemRecord.model_validate(bare)
    # No relevant chunks given: unknown (None), not "none are relevant" ([]).
    assert item.relevant_chunks is None
    assert item.reference_answer is None


@pytest.mark.parametrize("missing", ["question_id", "context", "retrieval", "labels"])
def test_a_required_field_missing_is_refused(missing: str) -> None:
    with pytest.raises(pydantic.ValidationError, match=missing):
        ItemRecord.model_validate({k: v for k, v in LINE.items() if k != missing})


def test_an_unknown_field_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match="extra"):
        ItemRecord.model_validate(LINE | {"verdict": "ok"})
