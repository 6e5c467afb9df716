"""The one JSON parse path (``judge.io.json``): the JSONL line reader and the state-file reader
call the same function, so the same bad JSON is the same problem, in the same words, through
both; each puts only its own place (``path:line``) and remedy around it."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.errors import InputError
from judge.io.json import (
    LONE_SURROGATE,
    NESTED,
    decode_utf8,
    encoding_problem,
    over_limit,
    parse_json,
)
from judge.io.jsonl import read_jsonl
from judge.io.state import StateFile, read_json_document

THING = StateFile(what="thing", remedy="delete it")

#: Bad JSON, one line each, and the problem it is: pinned here, so that both readers are held to
#: these words and not only to each other's.
BAD = {
    "not-json": ('{"a": }', "not valid JSON (Expecting value at column 7)"),
    "lone-surrogate": (
        '{"a": "\\ud800"}',
        "a \\u escape encodes half a character (a lone UTF-16 surrogate)",
    ),
    "too-deep": ("[" * 100_000 + "]" * 100_000, NESTED),
    "too-long-an-integer": ('{"a": ' + "7" * 5000 + "}", "an integer has more than 4300 digits"),
}


@pytest.mark.parametrize(("text", "said"), list(BAD.values()), ids=list(BAD))
def test_the_same_bad_json_is_the_same_problem_through_both_readers(
    tmp_path: Path, text: str, said: str
) -> None:
    problem = parse_json(text)[1]
    assert problem is not None and problem.text == said
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"ok": 1}\n' + text + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_jsonl(lines)
    assert caught.value.problems == [problem.message(f"{lines}:2")]
    document = tmp_path / "thing.json"
    document.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_json_document(document, kind=THING)
    where = f"{document}:1" if problem.line else str(document)
    assert caught.value.problems == [f"{where}: {said}; delete it"]


def test_bytes_that_are_not_utf8_are_the_same_problem_through_both_readers(
    tmp_path: Path,
) -> None:
    raw = b'{"a": 1}\n{"b": "\xff"}\n'
    text, problem = decode_utf8(raw)
    assert text == "" and problem is not None
    assert (problem.text, problem.line) == ("not UTF-8 (byte 0xff)", 2)
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(raw)
    with pytest.raises(InputError) as caught:
        read_jsonl(lines)
    assert caught.value.problems == [f"{lines}:2: not UTF-8 (byte 0xff); save the file as UTF-8"]
    document = tmp_path / "thing.json"
    document.write_bytes(raw)
    with pytest.raises(InputError) as caught:
        read_json_document(document, kind=THING)
    assert caught.value.problems == [f"{document}:2: not UTF-8 (byte 0xff); delete it"]


def test_good_json_is_its_value_and_a_leading_bom_is_dropped() -> None:
    assert parse_json('{"q": "年額", "n": [1, 2.5, null]}') == (
        {"q": "年額", "n": [1, 2.5, None]},
        None,
    )
    assert parse_json('"\\ud83d\\ude00"') == ("😀", None)  # a whole character in two escapes
    assert decode_utf8(b"\xef\xbb\xbf{}") == ("{}", None)
    assert decode_utf8(b"\xef\xbb\xbf{}", "utf-8") == ("\ufeff{}", None)


def test_a_size_over_its_limit_is_rounded_up_to_a_tenth() -> None:
    mb = 1024 * 1024
    assert over_limit("the line", 4 * mb + 10_000, 4, "one record") == (
        "the line is 4.1 MB, over the 4 MB limit for one record"
    )
    assert over_limit("it", 300_000, 0.25, "a thing") == (
        "it is 0.3 MB, over the 0.25 MB limit for a thing"
    )


def test_what_cannot_be_written_is_said_in_the_readers_words() -> None:
    with pytest.raises(UnicodeEncodeError) as lone:
        "\ud800".encode()
    assert encoding_problem(lone.value) == LONE_SURROGATE
    assert encoding_problem(RecursionError()) == NESTED
    assert encoding_problem(ValueError("Circular reference: depth exceeded")) == NESTED
    assert encoding_problem(ValueError("Exceeds the limit (4300 digits); use set")) == (
        "it cannot be written as JSON (Exceeds the limit (4300 digits))"
    )
