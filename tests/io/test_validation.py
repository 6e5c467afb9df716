"""Pydantic's errors said as what a field takes, and records validated by line
(``judge.io.validation``).

``parse_records`` validates all records in one call, and again one by one when any is wrong:
the fast path must give exactly what the careful path (each line on its own) gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.errors import InputError
from judge.inputs.golden import Chunk, GoldenQuestion
from judge.inputs.runs import RunRecord
from judge.io.jsonl import Line
from judge.io.text import IsoDatetime, StrictBool, StrictFloat, StrictInt, StrictRecord
from judge.io.validation import describe_validation_error, parse_records


class _Sample(StrictRecord):
    count: StrictInt = 0
    share: StrictFloat = 0.0
    flag: StrictBool = False
    items: tuple[StrictInt, ...] = ()
    at: IsoDatetime | None = None


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({"count": "2"}, 'count: must be an integer such as 2, not "2" (remove the quotes)'),
        ({"count": 2.0}, "count: must be an integer such as 2, not 2.0"),
        ({"count": True}, "count: must be an integer such as 2, not true"),
        ({"share": "0.9"}, 'share: must be a number such as 0.5, not "0.9" (remove the quotes)'),
        ({"share": False}, "share: must be a number such as 0.5, not false"),
        ({"share": float("nan")}, "share: Input should be a finite number"),
        ({"flag": "yes"}, 'flag: must be true or false, not "yes"'),
        ({"flag": "true"}, 'flag: must be true or false, not "true" (remove the quotes)'),
        ({"flag": 1}, "flag: must be true or false, not 1"),
        ({"items": [1, "2"]}, 'items.1: must be an integer such as 2, not "2" (remove the quotes)'),
        ({"at": 1700000000}, 'at: must be an ISO 8601 date-time string such as "2026-11-21'),
    ],
)
def test_strict_scalars_are_refused_with_what_to_write(value: dict[str, Any], said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Sample.model_validate(value)
    assert describe_validation_error(caught.value)[0].startswith(said)


def test_lists_iso_strings_and_integer_numbers_still_validate() -> None:
    sample = _Sample.model_validate(
        {"count": 2, "share": 1, "flag": True, "items": [1, 2], "at": "2026-11-21T09:00:00Z"}
    )
    assert sample.share == 1.0 and isinstance(sample.share, float)  # 1 is a JSON number too
    assert sample.items == (1, 2)
    assert sample.at is not None and sample.at.year == 2026


def test_union_alternatives_are_said_once() -> None:
    from judge.inputs.runs import RunMeta

    with pytest.raises(ValidationError) as caught:
        RunMeta.model_validate({"chunking": {"max_chars": [450], "overlap": 0}})
    assert describe_validation_error(caught.value) == [
        "chunking.max_chars: must be a string, an integer, a number or true or false, not [450]"
    ]


# --- records validated by line ----------------------------------------------------------


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
