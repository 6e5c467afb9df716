"""The JSONL reader's fast paths against its careful ones: the same values, the same messages.

``read_jsonl`` reads a file whose every line is plain (small, valid JSON, an object, no escape
of half a character anywhere) with one parse per line (pydantic-core's ``from_json``, which must
give exactly ``json.loads``'s values), and any other file line by line
with every check; ``parse_records`` validates all records in one call, and again one by one
when any is wrong. Each fast path must give exactly what the careful path gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.errors import InputError
from judge.inputs.golden import Chunk, GoldenQuestion
from judge.inputs.runs import RunRecord
from judge.jsonl import (
    StrictRecord,
    _careful_lines,
    _plain_lines,
    describe_validation_error,
    parse_records,
    read_jsonl,
    split_lines,
)

PLAIN_FILES = [
    '{"a": 1}\n{"b": "年額プランは3,800円です。"}\n',
    '\n{"a": 1}\n\n   \n\t\n{"a": 2}',  # blank and whitespace-only lines, no final newline
    '{"a": 1}\r\n{"b": 2}\r\n',  # Windows line ends
    '{"q": "a\u2028b\u2029c\u0085d"}\n',  # separators str.splitlines would split on
    '{"q": "\\u3042\\u00e9\\n\\t\\"quoted\\""}\n',  # escapes, none of half a character
    '{"x": {"y": [1, 2.5, -0, 1e5, true, false, null]}, "z": []}\n',
    '{"n": NaN, "i": Infinity}\n',  # json.loads reads these either way; the models refuse NaN
    '{"k": 1, "k": 2}\n',  # a repeated key: the last one, either way
    '{"id": "q1", "text": "Ignore the warning and restart.  Then tap \\"Save\\"."}\n',
    '{"big": ' + "9" * 4000 + "}\n",  # under Python's digit limit
    '{"a": 1e400, "b": 5e-324, "c": -0.0, "d": 1E-400, "e": 0.1, "f": 12345678901234567890}\n',
    '{"a": "\\u0000x", "b": "\\/", "c": "😀"}\n',
]

CAREFUL_FILES = [
    '{"a": 1}\nnot json\n[1, 2]\n\n{"b": 2}\n{"c": \n',  # not JSON, not an object
    '{"a": 1}\n"text"\n3\nnull\n',  # scalars
    '{"a": 1}\n\ufeff{"b": 2}\n',  # a BOM inside the file (only a leading one is dropped)
    '{"a": "\\ud800"}\n{"b": 1}\n',  # half a character
    '{"a": "\\ud83d\\ude00"}\n',  # a whole one written as two escapes: read, carefully
    "[" * 100_000 + "]" * 100_000 + "\n",  # nested too deeply
    '{"big": ' + "9" * 5000 + "}\n",  # over Python's digit limit
    '{"a": ' + "[" * 300 + "]" * 300 + "}\n",  # deeper than pydantic-core goes: json reads it
    "\n \n",  # no records
]


def _careful(path: Path, text: str) -> list[Any] | list[str]:
    """What the careful path gives for ``text``: its lines, or its problems."""
    try:
        return _careful_lines(path, split_lines(text))
    except InputError as exc:
        return exc.problems


@pytest.mark.parametrize("text", PLAIN_FILES)
def test_a_plain_file_is_read_the_fast_way_with_the_careful_result(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(text, encoding="utf-8")
    fast = _plain_lines(text, split_lines(text))
    assert fast is not None and fast  # the fast path took it

    def shown(lines: list[Any]) -> list[tuple[int, str]]:
        # What JSON makes of each value: NaN is not equal to itself (json.loads gives the same
        # NaN object each time, pydantic-core a new one), and the key order counts too.
        return [(line.number, json.dumps(line.value)) for line in lines]

    assert shown(fast) == shown(_careful_lines(path, split_lines(text)))
    assert shown(read_jsonl(path)) == shown(fast)


def test_a_leading_bom_is_dropped_before_either_path(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + '{"q": "年額"}\n'.encode())
    assert [line.value for line in read_jsonl(path)] == [{"q": "年額"}]


@pytest.mark.parametrize("text", CAREFUL_FILES)
def test_any_other_file_is_read_the_careful_way(tmp_path: Path, text: str) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(text, encoding="utf-8")
    assert not _plain_lines(text, split_lines(text))
    careful = _careful(path, text)
    try:
        got: list[Any] | list[str] = read_jsonl(path)
    except InputError as exc:
        got = exc.problems
    if careful == []:
        assert got == [f"{path}: no records (the file is empty)"]
    else:
        assert got == careful


def _one_by_one(
    path: Path, lines: list[Any], model: type[StrictRecord]
) -> tuple[list[tuple[int, Any]], list[str]]:
    """``parse_records`` as it was: each line validated on its own."""
    records, problems = [], []
    for line in lines:
        try:
            records.append((line.number, model.model_validate(line.value)))
        except ValidationError as exc:
            problems.extend(f"{path}:{line.number}: {p}" for p in describe_validation_error(exc))
    return records, problems


GOOD_RUN = [
    {
        "id": "q1",
        "retrieved": [{"chunk_id": "a/1", "score": 0.9}, {"chunk_id": "b/2"}],
        "answer": "年額",
    },
    {"id": "q2", "retrieved": [], "answer": "The yearly plan costs 3,800 yen.", "extra": None},
    {
        "id": "質問3",
        "retrieved": [{"chunk_id": "章/1", "score": 1, "text": "本文"}],
        "answer": "はい",
    },
]
BAD_RUN = [
    {
        "id": "q\u200b4",
        "retrieved": [{"chunk_id": "a 1"}],
        "answer": " ",
    },  # invisible, space, blank
    {"id": "q5", "retrieved": [{"chunk_id": "a/1", "score": "0.9"}], "answer": "ok"},  # quoted
    {"id": "q6", "retrieved": [{"chunk_id": "a/1", "score": True}], "answer": 3},  # bool, int
    {"retrieved": "a/1"},  # missing fields, a string for a list
    {"id": "", "retrieved": [{"chunk_id": ""}], "answer": "x", "bonus": 1},  # empty, unknown
    {"id": "q8", "retrieved": [{"chunk_id": "a/1", "score": float("nan")}], "answer": "x"},
]


def _lines(values: list[dict[str, Any]]) -> list[Any]:
    from judge.jsonl import Line

    return [Line(number, value) for number, value in enumerate(values, start=2)]


def test_valid_records_are_the_ones_validated_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    good = [{k: v for k, v in record.items() if k != "extra"} for record in GOOD_RUN]
    expected, problems = _one_by_one(path, _lines(good), RunRecord)
    assert problems == []
    assert parse_records(path, _lines(good), RunRecord) == expected
    questions = [
        {
            "id": "q1",
            "type": "factual",
            "question": "年額は？",
            "relevant_chunks": ["a/1"],
            "answerable": True,
            "tags": ["料金"],
        },
        {
            "id": "q2",
            "type": "out_of_scope",
            "question": "Weather?",
            "relevant_chunks": [],
            "answerable": False,
            "split": "holdout",
        },
        {
            "id": "q3",
            "type": "factual",
            "question": "x",
            "relevant_chunks": None,
            "answerable": True,
        },
    ]
    assert (
        parse_records(path, _lines(questions), GoldenQuestion)
        == _one_by_one(path, _lines(questions), GoldenQuestion)[0]
    )
    chunks = [{"chunk_id": "a/1", "doc": "a", "text": "本文", "heading": None}]
    assert parse_records(path, _lines(chunks), Chunk) == _one_by_one(path, _lines(chunks), Chunk)[0]


@pytest.mark.parametrize("bad", range(len(BAD_RUN)))
def test_bad_records_are_said_line_by_line_as_before(tmp_path: Path, bad: int) -> None:
    path = tmp_path / "run.jsonl"
    values = [*GOOD_RUN[:2], BAD_RUN[bad], GOOD_RUN[2], *BAD_RUN[bad + 1 :]]
    expected_records, expected_problems = _one_by_one(path, _lines(values), RunRecord)
    assert expected_problems  # the case is a bad one
    with pytest.raises(InputError) as caught:
        parse_records(path, _lines(values), RunRecord)
    assert caught.value.problems == expected_problems
    # Collecting: the problems after the caller's own, and the valid records returned.
    problems = ["earlier problem"]
    assert parse_records(path, _lines(values), RunRecord, problems) == expected_records
    assert problems == ["earlier problem", *expected_problems]


def test_lines_given_as_any_iterable_are_read_once(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    good = GOOD_RUN[:1]
    records = parse_records(path, iter(_lines(good)), RunRecord)
    assert [number for number, _ in records] == [2]
    with pytest.raises(InputError):
        parse_records(path, iter(_lines([*good, BAD_RUN[1]])), RunRecord)
