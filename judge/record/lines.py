"""A report folder's per-question files, each text once (folder format 4): ``items.jsonl``
(what the judge saw, one question a line), ``chunks.jsonl`` (the text of each context chunk,
once) and ``verdicts.jsonl`` (the verdicts, one a line), encoded from the record and read back
into its rows. ``judge.record.store`` writes and reads them beside ``report.json``, whose rows
reference these lines instead of holding copies of them.

At 100,000 questions of five chunks each from a corpus of a few hundred, the same chunk text
was stored half a million times (in ``report.json``'s rows and again in ``items.jsonl``); now a
chunk's text is one line of ``chunks.jsonl``, and an item's context names its chunks:
``{"rank": 1, "chunk_id": "doc12/h92"}``. A chunk whose text differs from the one its id has
in ``chunks.jsonl`` (a run may give the text its generator saw) keeps its own text in the
item: ``{"rank": 1, "chunk_id": "x", "text": "..."}``. So an ``items.jsonl`` line joined with
``chunks.jsonl`` by ``chunk_id`` is the item exactly, and a line of an older folder (every
chunk with its text) reads as it is.

Read back, every item's chunk of one id shares the one text object of ``chunks.jsonl``: the
record in memory holds each text once too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticSerializationError

from judge.errors import InputError
from judge.io.jsonl import Line, read_jsonl
from judge.io.validation import parse_records
from judge.judging.types import Verdict
from judge.results.item_record import ItemRecord

ITEMS_FILE = "items.jsonl"
CHUNKS_FILE = "chunks.jsonl"
VERDICTS_FILE = "verdicts.jsonl"

#: What a damaged per-question file of a folder needs.
REMEDY = "write the folder again with 'judge report FOLDER --rederive' (from its run and the cache)"


class ChunkText(BaseModel):
    """A line of ``chunks.jsonl``: a context chunk's text, by its id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk_id: str
    text: str


class QuestionLines(NamedTuple):
    """The record's per-question files as the UTF-8 bytes pydantic's serializer makes them
    (neither decoded nor encoded again)."""

    items: bytes
    chunks: bytes
    verdicts: bytes


def model_json_bytes(model: BaseModel, **options: Any) -> bytes:
    """``model_dump_json`` as the UTF-8 bytes pydantic makes (not decoded to a string)."""
    return model.__pydantic_serializer__.to_json(model, **options)


def _item_line(item: ItemRecord, texts: dict[str, str], chunks: list[bytes]) -> bytes:
    """``item``'s line of ``items.jsonl``: its chunks by id (a text not yet in ``texts`` is
    added, and its line to ``chunks``), a chunk whose text differs from its id's with its
    own text, the unset optional fields left out."""
    own = []
    for index, chunk in enumerate(item.context):
        known = texts.get(chunk.chunk_id)
        if known is None:
            texts[chunk.chunk_id] = chunk.text
            chunks.append(
                model_json_bytes(ChunkText(chunk_id=chunk.chunk_id, text=chunk.text)) + b"\n"
            )
        elif known is not chunk.text and known != chunk.text:
            own.append(index)
    if not own:
        context: dict[Any, Any] = {"__all__": {"text"}}
    else:
        context = {i: {"text"} for i in range(len(item.context)) if i not in own}
    return model_json_bytes(item, exclude_none=True, exclude={"context": context}) + b"\n"


def question_lines(rows: Iterable[tuple[ItemRecord | None, Verdict | None]]) -> QuestionLines:
    """The three files of the rows' (item, verdict) pairs, in row order: ``verdicts.jsonl``
    every verdict, ``items.jsonl`` the item of every row with a verdict (``Record.items``),
    ``chunks.jsonl`` each chunk text once, in the order the items first show it.

    Raises ``PydanticSerializationError`` for a text that cannot be encoded (half a UTF-16
    character); the caller says which (``judge.io.jsonl.jsonl_text``)."""
    texts: dict[str, str] = {}
    items: list[bytes] = []
    chunks: list[bytes] = []
    verdicts: list[bytes] = []
    for item, verdict in rows:
        if verdict is None:
            continue
        verdicts.append(model_json_bytes(verdict, exclude_none=True) + b"\n")
        if item is not None:
            items.append(_item_line(item, texts, chunks))
    return QuestionLines(b"".join(items), b"".join(chunks), b"".join(verdicts))


def encodable(rows: Iterable[tuple[ItemRecord | None, Verdict | None]]) -> QuestionLines | None:
    """``question_lines``, or None when a text cannot be encoded."""
    try:
        return question_lines(rows)
    except PydanticSerializationError:
        return None


def _damaged(path: Path, number: int, problem: str) -> InputError:
    return InputError([f"{path}:{number}: {problem}; the folder is damaged: {REMEDY}"])


def read_chunk_texts(folder: Path) -> dict[str, str]:
    """``chunks.jsonl`` as chunk id → text; a folder without one (written before format 4)
    has none."""
    path = folder / CHUNKS_FILE
    if not path.exists():
        return {}
    texts: dict[str, str] = {}
    for number, chunk in parse_records(path, read_jsonl(path), ChunkText):
        if chunk.chunk_id in texts:
            raise _damaged(path, number, f"chunk '{chunk.chunk_id}' is there twice")
        texts[chunk.chunk_id] = chunk.text
    return texts


def _with_texts(path: Path, lines: list[Line], texts: dict[str, str]) -> list[Line]:
    """The item lines with each chunk named by id given its text from ``texts`` (the lines'
    objects are changed in place: they are this reader's own)."""
    for line in lines:
        context = line.value.get("context") if isinstance(line.value, dict) else None
        if not isinstance(context, list):
            continue  # the model says what is wrong
        for chunk in context:
            if isinstance(chunk, dict) and "text" not in chunk and "chunk_id" in chunk:
                text = texts.get(chunk["chunk_id"]) if isinstance(chunk["chunk_id"], str) else None
                if text is None:
                    raise _damaged(
                        path,
                        line.number,
                        f"context chunk {chunk['chunk_id']!r} has no text here and none in "
                        f"{CHUNKS_FILE}",
                    )
                chunk["text"] = text
    return lines


def read_items(folder: Path) -> dict[str, ItemRecord]:
    """``items.jsonl`` by question id, each chunk's text from ``chunks.jsonl`` (or its own)."""
    path = folder / ITEMS_FILE
    lines = _with_texts(path, read_jsonl(path), read_chunk_texts(folder))
    return {item.question_id: item for _, item in parse_records(path, lines, ItemRecord)}


def read_verdicts(folder: Path) -> dict[str, Verdict]:
    """``verdicts.jsonl`` by question id (the verdicts' and their matches' field sets shared:
    ``share_fields_sets``)."""
    path = folder / VERDICTS_FILE
    verdicts = {v.question_id: v for _, v in parse_records(path, read_jsonl(path), Verdict)}
    share_fields_sets(m for v in verdicts.values() for m in (v, v.match) if m is not None)
    return verdicts


def join_rows(folder: Path, rows: object, source: Path) -> None:
    """Give each row of ``source`` (``report.json`` as read, a list of objects) that
    references its item or verdict (the key left out) the line of ``items.jsonl`` or
    ``verdicts.jsonl`` of its question id; the files are read only when a row references them
    (a folder of format 3 holds them in its rows). A reference without its line is one
    located line."""
    if not isinstance(rows, list):
        return  # the model says what is wrong
    wanted = [
        row for row in rows if isinstance(row, dict) and not {"item", "verdict"} <= row.keys()
    ]
    if not wanted:
        return
    items = read_items(folder) if any("item" not in row for row in wanted) else {}
    verdicts = read_verdicts(folder) if any("verdict" not in row for row in wanted) else {}
    for row in wanted:
        qid = row.get("question_id")
        for key, found, name in (("item", items, ITEMS_FILE), ("verdict", verdicts, VERDICTS_FILE)):
            if key in row:
                continue
            value = found.get(qid) if isinstance(qid, str) else None
            if value is None:
                raise InputError(
                    [
                        f"{source}: question {qid!r} has its {key} in {name}, "
                        f"which has no line for it; the folder is damaged: {REMEDY}"
                    ]
                )
            row[key] = value


def share_fields_sets(models: Iterable[BaseModel]) -> None:
    """Give the frozen ``models`` with the same set of fields given one set object between
    them (pydantic keeps, per instance, the names of the fields it was given: a set of a dozen
    names is 728 bytes, more than the verdict's own values). A record read back holds three
    such models per question (its row, verdict and match): about 2 kB a question, 200 MB at
    100,000. Only frozen models: nothing assigns to them, and ``model_copy`` copies the set
    before it changes it; an item (not frozen) keeps its own."""
    shared: dict[frozenset[str], set[str]] = {}
    for model in models:
        if not model.model_config.get("frozen"):
            continue
        fields = model.__pydantic_fields_set__
        one = shared.setdefault(frozenset(fields), fields)
        if one is not fields:
            object.__setattr__(model, "__pydantic_fields_set__", one)
