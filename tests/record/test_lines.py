"""A report folder's per-question files, each text once (``judge.record.lines``): items by
chunk id with the texts once in chunks.jsonl, a chunk of another text kept in its item, an
older folder's lines (and rows) read as they are, and a damaged reference said in one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.judging.types import ContextChunk, Verdict
from judge.pipeline.evaluate import evaluate
from judge.record.lines import (
    CHUNKS_FILE,
    ITEMS_FILE,
    VERDICTS_FILE,
    question_lines,
    read_chunk_texts,
    read_items,
)
from judge.record.store import read_record
from judge.results.item_record import ItemRecord

Tiny = Callable[..., Config]

PLANS = "年額プランは3,800円です。"
TRIAL = "A 7-day free trial is included."


def _item(qid: str, *chunks: tuple[str, str]) -> ItemRecord:
    return ItemRecord(
        question_id=qid,
        type="factual",
        split="",
        question="年額プランはいくらですか？",
        answer="3,800円です。",
        context=[ContextChunk(rank, cid, text) for rank, (cid, text) in enumerate(chunks, 1)],
        retrieval={"mrr": 1.0},
        labels=[],
    )


def _verdict(qid: str) -> Verdict:
    return Verdict(question_id=qid, item_key="k", status="ok", faithfulness=2, relevance=2)


def _write(folder: Path, items: list[ItemRecord]) -> None:
    lines = question_lines((item, _verdict(item.question_id)) for item in items)
    (folder / ITEMS_FILE).write_bytes(lines.items)
    (folder / CHUNKS_FILE).write_bytes(lines.chunks)
    (folder / VERDICTS_FILE).write_bytes(lines.verdicts)


def test_each_chunk_text_is_stored_once_and_items_read_back_sharing_it(tmp_path: Path) -> None:
    items = [
        _item("q1", ("pricing/plans", PLANS), ("trial", TRIAL)),
        _item("q2", ("trial", TRIAL), ("pricing/plans", PLANS)),
    ]
    _write(tmp_path, items)
    chunks = (tmp_path / CHUNKS_FILE).read_text("utf-8")
    assert chunks.count(PLANS) == 1 and chunks.count(TRIAL) == 1
    assert PLANS not in (tmp_path / ITEMS_FILE).read_text("utf-8")
    back = read_items(tmp_path)
    assert list(back.values()) == items
    # One text object for every item's chunk of that id: the record in memory holds it once.
    assert back["q1"].context[0].text is back["q2"].context[1].text


def test_a_chunk_whose_text_differs_from_its_ids_keeps_its_own(tmp_path: Path) -> None:
    """A run may give the text its generator saw: the same id with another text is kept in
    its item, exactly."""
    items = [
        _item("q1", ("pricing/plans", PLANS)),
        _item("q2", ("pricing/plans", "年額プランは4,200円です。"), ("trial", TRIAL)),
    ]
    _write(tmp_path, items)
    line = (tmp_path / ITEMS_FILE).read_text("utf-8").splitlines()[1]
    assert json.loads(line)["context"] == [
        {"rank": 1, "chunk_id": "pricing/plans", "text": "年額プランは4,200円です。"},
        {"rank": 2, "chunk_id": "trial"},
    ]
    assert list(read_items(tmp_path).values()) == items


def test_an_older_folders_items_with_their_texts_read_as_they_are(tmp_path: Path) -> None:
    """Before format 4 each line held every chunk's text, and there was no chunks.jsonl."""
    item = _item("q1", ("pricing/plans", PLANS), ("trial", TRIAL))
    (tmp_path / ITEMS_FILE).write_text(item.model_dump_json() + "\n", encoding="utf-8")
    assert read_chunk_texts(tmp_path) == {}
    assert read_items(tmp_path) == {"q1": item}


def test_a_chunk_named_but_nowhere_is_one_located_line(tmp_path: Path) -> None:
    _write(tmp_path, [_item("q1", ("pricing/plans", PLANS)), _item("q2", ("trial", TRIAL))])
    (tmp_path / CHUNKS_FILE).write_text(
        json.dumps({"chunk_id": "pricing/plans", "text": PLANS}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_items(tmp_path)
    (line,) = caught.value.problems
    assert line.startswith(f"{tmp_path / ITEMS_FILE}:2: context chunk 'trial' has no text here")
    assert "the folder is damaged" in line and "judge report FOLDER --rederive" in line


def test_a_chunk_twice_in_chunks_jsonl_is_one_located_line(tmp_path: Path) -> None:
    line = json.dumps({"chunk_id": "trial", "text": TRIAL}) + "\n"
    (tmp_path / CHUNKS_FILE).write_text(line * 2, encoding="utf-8")
    with pytest.raises(InputError, match=r"chunks\.jsonl:2: chunk 'trial' is there twice"):
        read_chunk_texts(tmp_path)


def test_a_row_whose_line_is_gone_is_one_located_line(tiny: Tiny) -> None:
    folder = evaluate(tiny(), backend="lexical").folder.path
    items = (folder / ITEMS_FILE).read_text("utf-8").splitlines()
    gone = json.loads(items[0])["question_id"]
    (folder / ITEMS_FILE).write_text("\n".join(items[1:]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_record(folder)
    (line,) = caught.value.problems
    assert line.startswith(
        f"{folder / 'report.json'}: question '{gone}' has its item in items.jsonl, "
        "which has no line for it; the folder is damaged"
    )


def test_a_folder_of_format_3_reads_into_the_same_record(tiny: Tiny) -> None:
    """Format 3's rows held their items and verdicts (texts included) and its items.jsonl
    every text, with no chunks.jsonl: read without the per-question files."""
    result = evaluate(tiny(), backend="lexical")
    folder = result.folder.path
    data = result.report.model_dump(mode="json", by_alias=True)
    data["format_version"] = 3
    (folder / "report.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    for name in (ITEMS_FILE, CHUNKS_FILE, VERDICTS_FILE):
        (folder / name).unlink()  # not read: the rows hold everything
    assert read_record(folder) == result.report


def test_a_record_read_back_shares_the_field_sets_of_its_frozen_models(tiny: Tiny) -> None:
    """Read back, the rows, verdicts and matches with the same fields given share one set of
    their names (pydantic keeps one per instance: more bytes than a verdict's values); an item
    (not frozen) keeps its own, and a copy with a change leaves the shared set as it was."""
    result = evaluate(tiny(), backend="lexical")
    record = read_record(result.folder.path)
    assert record == result.report
    verdicts = record.verdicts
    assert len(verdicts) > 1
    assert len({id(v.__pydantic_fields_set__) for v in verdicts}) < len(verdicts)
    first, second = (r for r in record.questions[:2])
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    items = record.items
    assert items[0].__pydantic_fields_set__ is not items[1].__pydantic_fields_set__
    shared = set(verdicts[0].__pydantic_fields_set__)
    changed = verdicts[0].model_copy(update={"note": "年額プランの数字が違う"})
    assert "note" in changed.model_fields_set
    assert verdicts[0].__pydantic_fields_set__ == shared
    assert [v.model_dump() for v in verdicts] == [v.model_dump() for v in result.report.verdicts]
