"""Claims on items in the verdict cache (``VerdictCache.claim``) and ``Shared``, which sorts a
run's asks into its own, another run's and those whose replies landed."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import NamedTuple

from judge.judging.cache import VerdictCache
from judge.judging.sharing import POLL_S, Shared
from judge.judging.verdict import Reply

FP = "fp"


class Item(NamedTuple):
    key: str


def _claim_as(cache: VerdictCache, key: str, host: str, pid: int, expires_at: float) -> None:
    """A claim row as another process would have written it."""
    with cache.db:
        cache.db.execute(
            "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
            (FP, key, host, pid, expires_at),
        )


def _dead_pid() -> int:
    """A pid no process of this machine has (a child that has exited and been reaped)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_a_claim_is_this_runs_then_busy_for_another_live_one(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    assert cache.claim(FP, [("a", None)], 60) == {"a": ("mine", None)}
    assert cache.claim(FP, [("a", None)], 60) == {"a": ("mine", None)}  # ours already
    _claim_as(cache, "b", "elsewhere", 1, time.time() + 60)
    _claim_as(cache, "c", socket.gethostname(), os.getppid(), time.time() + 60)  # alive
    found = cache.claim(FP, [("b", None), ("c", None)], 60)
    assert found == {"b": ("busy", None), "c": ("busy", None)}


def test_an_expired_claim_or_one_of_a_dead_process_here_is_taken(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    _claim_as(cache, "old", "elsewhere", 1, time.time() - 1)  # expired
    _claim_as(cache, "dead", socket.gethostname(), _dead_pid(), time.time() + 600)
    found = cache.claim(FP, [("old", None), ("dead", None)], 60)
    assert found == {"old": ("mine", None), "dead": ("mine", None)}


def test_a_reply_stored_since_the_run_looked_has_landed(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    old, new = Reply(text="old"), Reply(text="new")
    cache.put(FP, "k", "q", old)
    assert cache.claim(FP, [("k", None)], 60) == {"k": ("landed", old)}
    assert cache.claim(FP, [("k", old)], 60) == {"k": ("mine", None)}  # the one it rejected
    cache.put(FP, "k", "q", new)  # stored: the claim ends with it
    assert cache.db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)
    assert cache.claim(FP, [("k", old)], 60) == {"k": ("landed", new)}


def test_a_failed_reply_is_not_stored_but_ends_the_claim(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    cache.claim(FP, [("k", None)], 60)
    cache.put(FP, "k", "q", Reply(kind="error", detail="HTTP 500"))
    assert cache.db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)
    assert cache.get_many(FP, ["k"]) == {}


def test_shared_waits_for_another_runs_item_and_takes_its_reply(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    _claim_as(cache, "theirs", "elsewhere", 1, time.time() + 60)
    now = [0.0]
    shared = Shared([Item("mine"), Item("theirs")], cache, FP, {}, block=4, clock=lambda: now[0])
    assert shared.next_mine() == Item("mine")
    assert shared.next_mine() is None and shared.waiting
    assert shared.landed() == []
    cache.put(FP, "theirs", "q", Reply(text="theirs"))  # the other run's reply lands
    assert shared.landed() == []  # not looked at again before POLL_S
    now[0] += POLL_S
    assert shared.landed() == [(Item("theirs"), Reply(text="theirs"))]
    assert not shared.waiting


def test_shared_asks_an_item_another_run_gave_up(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    _claim_as(cache, "theirs", "elsewhere", 1, time.time() + 60)
    now = [0.0]
    shared = Shared([Item("theirs")], cache, FP, {}, block=4, clock=lambda: now[0])
    assert shared.next_mine() is None and shared.waiting
    cache.db.execute("DELETE FROM claims")  # released (Ctrl-C)
    now[0] += POLL_S
    assert shared.landed() == []
    assert shared.next_mine() == Item("theirs")


def test_release_gives_up_what_was_claimed_and_not_answered(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    shared = Shared([Item("a"), Item("b"), Item("c")], cache, FP, {}, block=2)
    assert shared.next_mine() == Item("a")  # a and b claimed, a sent
    cache.put(FP, "a", "q", Reply(text="a"))
    shared.done(Item("a"))
    assert shared.next_mine() == Item("b")  # sent, never answered
    shared.release()
    assert cache.db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)
    other = Shared([Item("b"), Item("c")], cache, FP, {}, block=2)
    assert other.next_mine() == Item("b")


def test_a_reply_that_landed_in_a_claimed_block_is_waited_for_until_reported(
    tmp_path: Path,
) -> None:
    """Another run stored the last item's reply before this run claimed its block: nothing is
    this run's to ask, nothing is held, yet the reply is still to report, so ``waiting`` stays
    true until ``landed()`` gives it (the loop ended early and lost it: a KeyError later)."""
    cache = VerdictCache(tmp_path / "c.sqlite")
    reply = Reply(text="theirs")
    cache.put(FP, "last", "q", reply)
    shared = Shared([Item("last")], cache, FP, {}, block=4)
    assert shared.next_mine() is None  # the block held only what had landed
    assert shared.waiting
    assert shared.landed() == [(Item("last"), reply)]
    assert not shared.waiting
