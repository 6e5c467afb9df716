"""The one file lock (``judge.io.lock``): a shared file's ``locked`` and a reports folder's
``run_lock``, both one ``flock`` that names its holder and is removed on release. How commands
wait for a shared file's lock is in ``tests/hostile/test_shared_files.py``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.io.lock import Busy, lock_file, locked, run_lock
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


def test_a_second_run_is_refused_while_the_lock_is_held(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    with run_lock(config.reports.dir):
        assert run_lexical(config) == 2
    assert "another judge run (pid " in capsys.readouterr().err
    assert run_lexical(config) == 0  # released with its holder


def test_a_run_lock_is_refused_at_once_naming_its_holder(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    with run_lock(reports):
        assert (reports / ".lock").read_text(encoding="utf-8") == f"{os.getpid()}\n"
        started = time.monotonic()
        with pytest.raises(Busy) as caught, run_lock(reports):
            pass
        assert time.monotonic() - started < 1.0  # no wait: a second run is refused at once
    assert str(caught.value) == (
        f"another judge run (pid {os.getpid()}) is writing to {reports}; wait for it to "
        "finish (the lock is released when it exits)"
    )
    assert not (reports / ".lock").exists()  # removed on release, as a shared file's lock is
    with run_lock(reports):  # and taken again
        pass


def test_a_shared_files_lock_waits_then_names_its_holder(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    with locked(path):
        assert lock_file(path).read_text(encoding="utf-8") == f"{os.getpid()}\n"
        started = time.monotonic()
        with pytest.raises(Busy) as caught, locked(path, wait_s=0.2, doing="importing into"):
            pass
        assert time.monotonic() - started >= 0.2
    assert str(caught.value) == (
        f"{path}: another judge command (pid {os.getpid()}) is importing into this file; wait "
        "for it to finish, then run this again (its lock is released when it exits)"
    )
    assert not lock_file(path).exists()


def test_the_lock_file_is_beside_the_file() -> None:
    assert lock_file(Path("reports/history.jsonl")) == Path("reports/.history.jsonl.lock")


def test_the_lock_of_a_symlink_is_beside_its_target(tmp_path: Path) -> None:
    """The file a write goes to (``write_atomic`` writes a link's target): two paths to one
    file share one lock."""
    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "baseline.json"
    target.write_text("{}", encoding="utf-8")
    link = tmp_path / "baseline.json"
    link.symlink_to(target)
    assert lock_file(link) == tmp_path / "shared" / ".baseline.json.lock"
    with locked(link), pytest.raises(Busy), locked(target, wait_s=0.1):
        pass


def test_a_lock_file_left_by_a_killed_holder_is_taken_and_removed(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    lock_file(path).write_text("999999999\n", encoding="utf-8")  # no process holds it
    started = time.monotonic()
    with locked(path, wait_s=5.0):
        assert lock_file(path).read_text(encoding="utf-8") == f"{os.getpid()}\n"
    assert time.monotonic() - started < 1.0  # not waited for
    assert not lock_file(path).exists()
