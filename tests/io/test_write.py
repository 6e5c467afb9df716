"""Appends, atomic writes and unique names (``judge.io.write``). Two commands at once and a
crash half-way are in ``tests/hostile/test_shared_files.py`` and ``tests/hostile/test_faults.py``.

An atomic write goes in place of the file, not over it: a symlink stays a link, the mode is
kept, a read-only file is refused (by its mode bits: these tests run as root, who may write a
0444 file), and the copies of a killed process are removed, never a live one's."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.io.write import (
    NotWritable,
    append_line,
    claim_unique,
    clear_stale_copies,
    end_with_newline,
    write_atomic,
)
from tests.conftest import dead_pid


def test_an_atomic_write_replaces_the_whole_file_and_leaves_no_temporary_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "out.txt"
    write_atomic(path, "年額\n")
    assert path.read_text(encoding="utf-8") == "年額\n"
    write_atomic(path, b"bytes as they are\n")
    assert path.read_bytes() == b"bytes as they are\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_an_appended_line_is_never_glued_onto_the_last_one(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    append_line(path, "one\n")  # a missing file is made
    path.write_bytes(path.read_bytes() + b"two")  # a last line without its newline
    append_line(path, "three\n")
    assert path.read_text(encoding="utf-8") == "one\ntwo\nthree\n"


def test_end_with_newline_changes_only_a_file_that_needs_it(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    assert end_with_newline(path) is False  # missing
    path.write_bytes(b"")
    assert end_with_newline(path) is False  # empty
    path.write_bytes(b"a")
    assert end_with_newline(path) is True
    assert path.read_bytes() == b"a\n"
    assert end_with_newline(path) is False


def test_a_claimed_name_is_one_no_other_command_has(tmp_path: Path) -> None:
    first = claim_unique(tmp_path / "out", "20261129T000000Z", ".csv")
    second = claim_unique(tmp_path / "out", "20261129T000000Z", ".csv")
    folder = claim_unique(tmp_path / "out", "20261129T000000Z", folder=True)
    assert [first.name, second.name, folder.name] == [
        "20261129T000000Z.csv",
        "20261129T000000Z-2.csv",
        "20261129T000000Z",
    ]
    assert first.is_file() and first.stat().st_size == 0 and folder.is_dir()


def test_an_atomic_write_through_a_symlink_keeps_the_link_and_writes_its_target(
    tmp_path: Path,
) -> None:
    shared, mine = tmp_path / "shared", tmp_path / "mine"
    shared.mkdir()
    mine.mkdir()
    target = shared / "judge.toml"
    target.write_text("old\n", encoding="utf-8")
    link = mine / "judge.toml"
    link.symlink_to(target)
    write_atomic(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in shared.iterdir()) == ["judge.toml"]  # no copy left
    assert sorted(p.name for p in mine.iterdir()) == ["judge.toml"]
    dangling = mine / "later.toml"  # a link to a file not made yet: the file is made there
    dangling.symlink_to(shared / "later.toml")
    write_atomic(dangling, "made\n")
    assert dangling.is_symlink() and (shared / "later.toml").read_text(encoding="utf-8") == "made\n"


def test_an_atomic_write_keeps_the_mode_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "judge.toml"
    path.write_text("secret\n", encoding="utf-8")
    path.chmod(0o600)
    write_atomic(path, "still secret\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o640)
    write_atomic(path, b"again\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_bytes() == b"again\n"
    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.txt", "a new file\n")  # none to keep: 0666 less the umask
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_a_read_only_file_is_refused_in_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text("kept\n", encoding="utf-8")
    path.chmod(0o444)
    with pytest.raises(NotWritable) as caught:
        write_atomic(path, "lost\n")
    assert isinstance(caught.value, InputError) and caught.value.exit_code == 2
    assert str(caught.value) == (
        f"{path}: read-only (mode 0444), so nothing was written; allow writing to it "
        f"(chmod u+w {path}) and run this again"
    )
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    with pytest.raises(NotWritable) as caught:
        write_atomic(link, "lost\n")
    assert str(caught.value).startswith(f"{link} (a link to {path}): read-only (mode 0444)")
    assert path.read_text(encoding="utf-8") == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "questions.jsonl"]


def test_a_symlink_that_leads_to_itself_is_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop.toml"
    loop.symlink_to(loop)
    with pytest.raises(NotWritable, match="a symlink that leads to itself"):
        write_atomic(loop, "x")


def test_a_failed_check_leaves_the_file_as_it_was_and_no_copy(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text("old\n", encoding="utf-8")
    seen: list[bytes] = []

    def check(copy: Path) -> None:
        seen.append(copy.read_bytes())
        assert copy.parent == tmp_path and copy.name.startswith(".questions.jsonl.")
        raise InputError(["no"])

    with pytest.raises(InputError):
        write_atomic(path, "new\n", check=check)
    assert seen == [b"new\n"]  # the check read the synced copy
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["questions.jsonl"]


def test_only_the_copies_of_ended_processes_are_cleared(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text("x\n", encoding="utf-8")
    dead = dead_pid()
    stale = [tmp_path / f".labels.jsonl.{dead}.tmp", tmp_path / f".labels.jsonl.{dead}.accept"]
    live = tmp_path / f".labels.jsonl.{os.getppid()}.tmp"  # a running command's
    other = [
        tmp_path / f".other.jsonl.{dead}.tmp",  # another file's
        tmp_path / ".labels.jsonl.lock",
        tmp_path / f".labels.jsonl.{os.getpid()}.tmp",  # this process's own
        tmp_path / f".labels.jsonl.{'9' * 30}.tmp",  # no pid: not a copy of ours
        tmp_path / ".labels.jsonl.\u0663.tmp",  # ARABIC-INDIC DIGIT THREE: no pid either
        tmp_path / ".labels.jsonl.0.tmp",
    ]
    for copy in [*stale, live, *other]:
        copy.write_text("half", encoding="utf-8")
    assert sorted(clear_stale_copies(path)) == sorted(stale)
    assert not any(copy.exists() for copy in stale)
    assert live.exists() and all(copy.exists() for copy in other)
    stale[0].write_text("half", encoding="utf-8")
    write_atomic(path, "y\n")  # the next write clears them too
    assert not stale[0].exists() and live.exists()
    assert not (tmp_path / f".labels.jsonl.{os.getpid()}.tmp").exists()  # its own name, reused
    assert path.read_text(encoding="utf-8") == "y\n"


def test_a_stale_staging_folder_is_removed_with_what_it_holds(tmp_path: Path) -> None:
    from judge.io.write import clear_stale_copies

    dead = dead_pid()
    stale = tmp_path / f".sweep.{dead}.tmp"
    (stale / "inner").mkdir(parents=True)
    (stale / "inner" / "a.txt").write_text("x", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = tmp_path / f".sweep.{dead}.partial"
    linked.symlink_to(outside)  # a link is unlinked, never followed
    assert sorted(clear_stale_copies(tmp_path / "sweep")) == sorted([stale, linked])
    assert not stale.exists() and not linked.is_symlink() and outside.is_dir()


def test_check_writable_refuses_a_read_only_file_in_one_line(tmp_path: Path) -> None:
    from judge.io.write import NotWritable, check_writable

    path = tmp_path / "f.txt"
    check_writable(path)  # a missing file may be written
    path.write_text("x", encoding="utf-8")
    check_writable(path)
    path.chmod(0o444)
    with pytest.raises(NotWritable) as caught:
        check_writable(path)
    assert caught.value.problems[0].startswith(f"{path}: read-only (mode 0444)")


def test_stale_staging_folders_of_any_name_are_removed(tmp_path: Path) -> None:
    """A killed sweep staged ``.<its time>.<pid>.tmp``; the next one stages another name."""
    from judge.io.write import clear_stale_folders

    dead = dead_pid()
    stale = tmp_path / f".20261203T010203Z.{dead}.tmp"
    stale.mkdir()
    (stale / "report.md").write_text("half", encoding="utf-8")
    live = tmp_path / f".20261203T010204Z.{os.getpid()}.tmp"
    live.mkdir()
    a_file = tmp_path / f".x.{dead}.tmp"
    a_file.write_text("a file, not a staging folder", encoding="utf-8")
    kept = tmp_path / "20261203T010203Z"
    kept.mkdir()
    assert clear_stale_folders(tmp_path) == [stale]
    assert live.is_dir() and a_file.is_file() and kept.is_dir()


def test_a_file_already_holding_the_bytes_is_not_written_again(tmp_path: Path) -> None:
    """``write_changed``: the same bytes leave the file as it is (its time too); other bytes
    of the same size, or another size, are written (atomically)."""
    from judge.io.write import write_changed

    path = tmp_path / "review.html"
    assert write_changed(path, "年額プラン\n") is True
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10**9, stamp - 10**9))
    assert write_changed(path, "年額プラン\n".encode()) is False
    assert path.stat().st_mtime_ns == stamp - 10**9
    assert write_changed(path, "月額プラン\n") is True  # same size, other bytes
    assert path.read_text("utf-8") == "月額プラン\n"
    assert write_changed(path, b"x" * (3 << 20)) is True  # compared a megabyte at a time
    assert write_changed(path, b"x" * (3 << 20)) is False
    assert write_changed(path, b"x" * ((3 << 20) - 1) + b"y") is True
