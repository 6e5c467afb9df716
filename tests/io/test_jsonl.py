"""Reading JSONL (``judge.io.jsonl``): every bad line reported at once with its line, the
fast path against the careful one, and the writer that refuses what the reader would refuse.

``read_jsonl`` reads a file whose every line is plain (small, valid JSON, an object, no escape
of half a character anywhere) with one parse per line (pydantic-core's ``from_json``, which must
give exactly ``json.loads``'s values), and any other file line by line with every check: the
fast path must give exactly what the careful path gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.errors import InputError
from judge.io.jsonl import (
    _careful_lines,
    _plain_lines,
    checked_line,
    read_jsonl,
    record_problem,
    write_jsonl,
)
from judge.io.text import split_lines


def test_every_bad_line_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": 1}\nnot json\n[1, 2]\n\n{"b": 2}\n{"c": \n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    problems = caught.value.problems
    assert len(problems) == 3
    assert problems[0].startswith(f"{path}:2: not valid JSON")
    assert problems[1] == f"{path}:3: expected a JSON object, got list"
    assert problems[2].startswith(f"{path}:6: not valid JSON")


def test_blank_lines_are_skipped_and_line_numbers_kept(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('\n{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert [line.number for line in read_jsonl(path)] == [2, 4]


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"a": "ok"}\n' + '{"q": "年額"}\n'.encode("shift_jis"))
    with pytest.raises(InputError, match=r"q.jsonl:2: not UTF-8 .*save the file as UTF-8"):
        read_jsonl(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + '{"q": "年額"}\n'.encode())
    assert read_jsonl(path)[0].value == {"q": "年額"}


def test_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": "' + "x" * 2_000_000 + '"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"larger than the 1 MB limit; .*max_file_mb"):
        read_jsonl(path, max_mb=1)


def test_symlink_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text('{"a": 1}\n', encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with pytest.raises(InputError, match="symlink"):
        read_jsonl(link)


def test_file_under_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "q.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    with pytest.raises(InputError, match="symlink"):
        read_jsonl(tmp_path / "linked" / "q.jsonl")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_jsonl(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no records"):
        read_jsonl(tmp_path / "empty.jsonl")


def test_write_jsonl_is_atomic_and_readable(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    write_jsonl(path, [{"質問": "年額"}, {"b": 2}])
    assert [line.value for line in read_jsonl(path)] == [{"質問": "年額"}, {"b": 2}]
    assert not list(tmp_path.glob("*.tmp"))


# --- lines that json cannot read, or should not ----------------------------------------------


def test_nesting_too_deep_for_json_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": 1}\n{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    assert caught.value.problems == [
        f"{path}:2: nested too deeply (arrays or objects inside each other); no record has "
        "more than a few levels: fix the line"
    ]


def test_an_integer_too_long_for_python_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": ' + "7" * 5000 + "}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"q.jsonl:1: an integer has more than 4300 digits"):
        read_jsonl(path)


def test_a_record_over_the_line_limit_is_refused_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import judge.io.jsonl

    monkeypatch.setattr(judge.io.jsonl, "MAX_RECORD_MB", 1)
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"a": "small"}\n{"answer": "' + "年" * 400_000 + '"}\n', encoding="utf-8"
    )  # 400,000 characters, 1.2 MB in UTF-8: bytes count, not characters
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    assert caught.value.problems == [
        f"{path}:2: the line is 1.2 MB, over the 1 MB limit for one record; shorten the long "
        "field (an answer or a chunk text this long is a mistake: see golden/README.md)"
    ]


# --- the fast path and the careful one ----------------------------------------------------

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


def test_record_lines_over_a_limit_are_found_before_they_are_written() -> None:
    assert record_problem({"answer": "回答"}) is None
    assert record_problem({"answer": "年" * 1_500_000}) == (
        "the line is 4.3 MB, over the 4 MB limit for one record"
    )
    assert record_problem({"answer": "\ud800"}) == (
        "a text holds half a character (a lone UTF-16 surrogate)"
    )
    assert checked_line({"a": 1}, "x.jsonl") == '{"a": 1}\n'
    with pytest.raises(
        InputError, match=r"^x.jsonl: the record is not written: it cannot be written as JSON"
    ):
        checked_line({"a": json.loads("9" * 4300) * 10}, "x.jsonl")
