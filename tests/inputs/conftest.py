"""Fixtures of the input tests: a module of adapters on the Python path."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.formatting import bom_csv

ADAPTER = """
import asyncio

def answer(question):
    if "Windows" in question:
        raise RuntimeError("search index offline")
    if "iPad" in question:
        return {"retrieved": [{"chunk_id": "widgets/sizes", "score": 0.9}], "answer": "非対応です。"}
    return {"retrieved": ["pricing/plans", "backup/restore"], "answer": "回答"}

async def answer_async(question):
    await asyncio.sleep(0)
    return {"retrieved": ["pricing/plans"], "answer": "非同期の回答"}

def bad_shape(question):
    return {"chunks": [], "answer": "x"}
"""


@pytest.fixture
def adapter_module(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "my_rag.py").write_text(ADAPTER, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    yield "my_rag"
    sys.path.remove(str(tmp_path))
    sys.modules.pop("my_rag", None)


# --- a reviewer's confirmations file ----------------------------------------------------------

COLUMNS = [
    "question_id",
    "type",
    "chunk_id",
    "rank",
    "grade",
    "reason",
    "question",
    "chunk_text",
    "confirmed",
]


def missing_labels_csv(path: Path, rows: list[tuple[str, str, str]], *, bom: bool = True) -> Path:
    """A missing-labels.csv as the report writes it (``bom_csv``), filled in: (qid, chunk,
    confirmed) per row, the other columns as a reviewer sees them."""
    cells = [[q, "factual", c, 2, 2, "理由", "質問", "チャンクの本文", mark] for q, c, mark in rows]
    text = bom_csv(COLUMNS, cells)
    path.write_text(text if bom else text.removeprefix("\ufeff"), encoding="utf-8")
    return path
