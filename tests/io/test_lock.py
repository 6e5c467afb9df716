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
from judge.errors import EXIT_BUSY
from judge.io import lock
from judge.io.lock import Busy, lock_file, locked, run_lock
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


def test_a_second_run_is_refused_while_the_lock_is_held(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    with run_lock(config.reports.dir):
        assert run_lexical(config) == EXIT_BUSY == 4  # not 2: nothing is wrong with the input
    assert "another judge run (pid " in capsys.readouterr().err
    assert run_lexical(config) == 0  # released with its holder


def test_a_run_lock_is_refused_at_once_naming_its_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = tmp_path / "reports"
    with run_lock(reports):
        assert (reports / ".lock").read_text(encoding="utf-8") == f"{os.getpid()}\n"

        def no_sleep(seconds: float) -> None:
            raise AssertionError(f"slept {seconds} s: a second run must be refused at once")

        monkeypatch.setattr(lock.time, "sleep", no_sleep)  # no wall clock: no wait at all
        with pytest.raises(Busy) as caught, run_lock(reports):
            pass
        monkeypatch.undo()
    assert caught.value.exit_code == EXIT_BUSY
    assert str(caught.value) == (
        f"another judge run (pid {os.getpid()}) is writing to {reports}; nothing was done: run "
        "this again when it has finished (its lock is released when it exits), or give "
        "--wait SECONDS"
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


def test_a_lock_file_left_by_a_killed_holder_is_taken_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "labels.jsonl"
    lock_file(path).write_text("999999999\n", encoding="utf-8")  # no process holds it

    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s for a lock no process holds")

    monkeypatch.setattr(lock.time, "sleep", no_sleep)  # not waited for (no wall clock)
    with locked(path, wait_s=5.0):
        assert lock_file(path).read_text(encoding="utf-8") == f"{os.getpid()}\n"
    monkeypatch.undo()
    assert not lock_file(path).exists()


class _Clock:
    """A fake monotonic clock that ``sleep`` advances: a wait measured without the wall clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_run_waits_up_to_its_wait_then_is_refused_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = tmp_path / "reports"
    clock = _Clock()
    said: list[str] = []
    with run_lock(reports):
        monkeypatch.setattr(lock.time, "monotonic", clock.monotonic)
        monkeypatch.setattr(lock.time, "sleep", clock.sleep)
        with pytest.raises(Busy) as caught, run_lock(reports, wait_s=30, on_wait=said.append):
            pass
        monkeypatch.undo()
    assert said == [str(os.getpid())]  # said once, when the wait started
    assert clock.now == 30 and len(clock.slept) == 30  # polled once a second, to the deadline
    assert caught.value.exit_code == EXIT_BUSY
    assert f"is writing to {reports} (waited 30 s); nothing was done" in str(caught.value)


def test_a_waiting_run_takes_the_lock_when_its_holder_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = tmp_path / "reports"
    clock = _Clock()
    holder = run_lock(reports)
    holder.__enter__()

    def sleep(seconds: float) -> None:  # the holder finishes during the third poll
        clock.sleep(seconds)
        if len(clock.slept) == 3:
            holder.__exit__(None, None, None)

    monkeypatch.setattr(lock.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(lock.time, "sleep", sleep)
    with run_lock(reports, wait_s=3600):
        assert (reports / ".lock").read_text(encoding="utf-8") == f"{os.getpid()}\n"
    assert clock.now == 3
    assert not (reports / ".lock").exists()
