"""The verdict cache commits new replies a batch at a time (``judge.judging.sharing.Batch``), with
the guarantees one transaction per reply gave: a run killed with kill -9 mid-run loses at most
its open batch and the next run asks the judge only for the items not committed; SIGTERM (and
Ctrl-C) commit the open batch before the run ends; the file is never damaged.

Each run is a real process asking a slow-ish fake judge (``tests.hostile.test_shared_cache``'s
``SlowBackend``, which notes every request in a log), so the backend calls are counted.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from judge.judging.sharing import BATCH_SIZE
from judge.judging.verdict import Reply
from tests.conftest import REPO
from tests.hostile.test_shared_cache import work

ITEMS = 400
DELAY_S = 0.01  # about 20 replies a batch (BATCH_WAIT_S 0.2 s)

RUN = """
import sys
from judge.signals import handled
from tests.hostile.test_shared_cache import work
with handled():  # as the CLI runs every command: SIGTERM stops it like Ctrl-C
    work(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
"""


def _start(tmp_path: Path) -> subprocess.Popen[bytes]:
    files = [str(tmp_path / "cache.sqlite"), str(tmp_path / "first.log")]
    return subprocess.Popen(
        [sys.executable, "-c", RUN, *files, str(ITEMS), str(DELAY_S)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
    )


def _committed(path: Path) -> dict[str, str]:
    """The replies committed to the cache file, by item key, once the file is checked whole."""
    if not path.exists():
        return {}
    with closing(sqlite3.connect(path, timeout=30)) as db:
        if db.execute("SELECT name FROM sqlite_master WHERE name = 'replies'").fetchone() is None:
            return {}
        return dict(db.execute("SELECT item_key, reply FROM replies").fetchall())


def _answered(tmp_path: Path) -> int:
    log = tmp_path / "first.log"
    return len(log.read_bytes().splitlines()) if log.exists() else 0


def _stopped_midway(tmp_path: Path, signum: int) -> tuple[set[str], dict[str, str]]:
    """Start a run, stop it with ``signum`` once 60 replies are committed and at least 5 more
    answered (an open batch); the items it asked the judge (by key) and the replies committed."""
    run = _start(tmp_path)
    deadline = time.monotonic() + 60
    while (n := len(_committed(tmp_path / "cache.sqlite"))) < 60 or _answered(tmp_path) < n + 5:
        assert run.poll() is None and time.monotonic() < deadline, "the run ended too soon"
        time.sleep(0.01)
    os.kill(run.pid, signum)
    _, err = run.communicate(timeout=60)
    assert run.returncode == (-signal.SIGKILL if signum == signal.SIGKILL else 0), err
    log = (tmp_path / "first.log").read_text(encoding="utf-8").split()
    asked = {"k" + question.removeprefix("q") for question in log}
    assert len(asked) == len(log)  # nothing asked twice
    with closing(sqlite3.connect(tmp_path / "cache.sqlite")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    committed = _committed(tmp_path / "cache.sqlite")
    assert all(
        Reply.model_validate_json(text).text.startswith("reply to q") for text in committed.values()
    )
    assert set(committed) <= asked and len(asked) < ITEMS  # stopped midway
    return asked, committed


def _resume(tmp_path: Path, committed: dict[str, str]) -> list[str]:
    """A second run over every item: it must ask only the items not committed, and end with
    every reply and no claim left."""
    got = work(str(tmp_path / "cache.sqlite"), str(tmp_path / "second.log"), ITEMS, 0.0)
    assert got == {f"k{i}": f"reply to q{i}" for i in range(ITEMS)}
    second = (tmp_path / "second.log").read_text(encoding="utf-8").split()
    assert sorted("k" + q.removeprefix("q") for q in second) == sorted(
        f"k{i}" for i in range(ITEMS) if f"k{i}" not in committed
    )
    with closing(sqlite3.connect(tmp_path / "cache.sqlite")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)
    return second


def test_kill_9_mid_run_loses_at_most_the_open_batch_and_the_next_run_asks_only_those(
    tmp_path: Path,
) -> None:
    asked, committed = _stopped_midway(tmp_path, signal.SIGKILL)
    lost = asked - set(committed)  # asked and answered, never committed: the open batch
    assert len(lost) <= BATCH_SIZE + 1  # the open batch, and the request in flight
    second = _resume(tmp_path, committed)
    assert len(second) == ITEMS - len(committed)  # the backend calls of the next run
    assert lost <= {"k" + q.removeprefix("q") for q in second}  # the lost ones asked again


def test_sigterm_mid_run_commits_the_open_batch_first(tmp_path: Path) -> None:
    asked, committed = _stopped_midway(tmp_path, signal.SIGTERM)
    # Everything answered is committed; only the one request in flight (or its reply being
    # handled at that instant) can be missing. The open batch alone is some 20 replies.
    assert len(asked - set(committed)) <= 1
    _resume(tmp_path, committed)
