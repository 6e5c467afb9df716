"""Two runs share one verdict cache at the same time.

Class of the hardening matrix (issue 34, "two runs sharing one verdict cache both ask the judge
for every item"): each item is asked once in total, the second run taking the first's replies
as they land (``judge.judging.sharing``); a run killed with kill -9 loses only what it had
open, and its claims do not hold up the next run.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from judge.judging.backends.base import BackendIdentity, JudgeRequest
from judge.judging.cache import VerdictCache
from judge.judging.grading import Ask, Fingerprint, ask_all
from judge.judging.verdict import Reply
from tests.conftest import REPO


class SlowBackend:
    """A judge that takes ``delay_s`` per item and notes each item it is asked in ``log``
    (one line per request, appended atomically: several processes share the file)."""

    identity = BackendIdentity(kind="fake", model="slow", digest=None, options={})

    def __init__(self, log: Path, delay_s: float) -> None:
        self.log = log
        self.delay_s = delay_s

    def complete(self, request: JudgeRequest) -> Reply:
        time.sleep(self.delay_s)
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{request.question}\n".encode())
        finally:
            os.close(fd)
        return Reply(text=f"reply to {request.question}")

    def close(self) -> None:
        pass


def _request(question: str) -> JudgeRequest:
    return JudgeRequest(prompt=question, schema={}, question=question, context=[], answer="")


def work(cache_path: str, log: str, items: int, delay_s: float) -> dict[str, str]:
    """One run: every item asked through ``ask_all`` on the shared cache; its replies by key."""
    cache = VerdictCache(Path(cache_path))
    got: dict[str, str] = {}
    asks = [Ask(f"k{i}", f"q{i}", functools.partial(_request, f"q{i}")) for i in range(items)]
    try:
        ask_all(
            asks,
            SlowBackend(Path(log), delay_s),
            cache,
            Fingerprint("shared-fp", {}),
            "slow",
            reuse=lambda _ask, _reply: True,
            on_reply=lambda ask, reply, _cached: got.__setitem__(ask.key, reply.text),
        )
    finally:
        cache.close()
    return got


def _start(tmp_path: Path, items: int, delay_s: float) -> subprocess.Popen[str]:
    code = (
        "import json, sys\nfrom tests.hostile.test_shared_cache import work\n"
        f"print(json.dumps(work({str(tmp_path / 'cache.sqlite')!r}, "
        f"{str(tmp_path / 'asked.log')!r}, {items}, {delay_s})))\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_runs_on_one_cache_ask_each_item_once_in_total(tmp_path: Path) -> None:
    VerdictCache(tmp_path / "cache.sqlite").close()  # the file exists before either starts
    runs = [_start(tmp_path, 12, 0.15) for _ in range(2)]
    outputs = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        outputs.append(json.loads(out))
    asked = (tmp_path / "asked.log").read_text(encoding="utf-8").split()
    assert sorted(asked) == sorted(f"q{i}" for i in range(12))  # each once, by one run or other
    expected = {f"k{i}": f"reply to q{i}" for i in range(12)}
    assert outputs == [expected, expected]  # each run has every reply
    with closing(sqlite3.connect(tmp_path / "cache.sqlite")) as db:
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)


def test_a_run_killed_with_kill_9_does_not_hold_up_the_next(tmp_path: Path) -> None:
    VerdictCache(tmp_path / "cache.sqlite").close()
    stuck = _start(tmp_path, 4, 60.0)
    deadline = time.monotonic() + 60
    claimed = 0
    while claimed == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        with closing(sqlite3.connect(tmp_path / "cache.sqlite")) as db:
            claimed = db.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
    assert claimed > 0
    os.kill(stuck.pid, signal.SIGKILL)
    stuck.communicate(timeout=10)
    started = time.monotonic()
    got = work(str(tmp_path / "cache.sqlite"), str(tmp_path / "asked.log"), 4, 0.0)
    assert time.monotonic() - started < 10  # its claims taken at once: its process is gone
    assert got == {f"k{i}": f"reply to q{i}" for i in range(4)}
    assert sorted((tmp_path / "asked.log").read_text(encoding="utf-8").split()) == [
        "q0",
        "q1",
        "q2",
        "q3",
    ]
