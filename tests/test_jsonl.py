from pathlib import Path

import pytest

from judge.errors import InputError
from judge.jsonl import read_jsonl, write_jsonl


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
