"""Claims on items in the verdict cache (``VerdictCache.claim``); ``Shared``, which sorts a
run's asks into its own, another run's and those whose replies landed; and ``Batch``, which
commits new replies a batch at a time."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from judge.errors import ConfigError
from judge.judging.cache import VerdictCache
from judge.judging.sharing import MOST_BLOCK, POLL_S, Batch, Shared
from judge.judging.verdict import Reply
from tests.conftest import dead_pid

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
    _claim_as(cache, "dead", socket.gethostname(), dead_pid(), time.time() + 600)
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


def test_a_fast_runs_blocks_grow_and_a_slow_runs_stay_small(tmp_path: Path) -> None:
    """A block used up within ``POLL_S`` of its claim is followed by one twice its size (up to
    ``MOST_BLOCK``); one that took longer by one of the size asked."""
    cache = VerdictCache(tmp_path / "c.sqlite")
    now = [0.0]
    items = [Item(f"k{i}") for i in range(1000)]
    shared = Shared(items, cache, FP, {}, block=4, clock=lambda: now[0])

    def claimed() -> int:
        return int(cache.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0])

    sizes, before = [], 0
    for _ in range(len(items)):
        if shared.next_mine() is None:
            break
        if claimed() != before:
            sizes.append(claimed() - before)
            before = claimed()
    assert sizes[:8] == [4, 8, 16, 32, 64, 128, MOST_BLOCK, MOST_BLOCK]
    slow = Shared([Item(f"s{i}") for i in range(20)], cache, FP, {}, block=4, clock=lambda: now[0])
    before = claimed()
    for _ in range(3):
        now[0] += POLL_S  # each block took a poll's time: the next is as small as the first
        for _ in range(4):
            assert slow.next_mine() is not None
    assert claimed() - before == 12


def test_claim_sorts_a_block_larger_than_one_query_takes(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    cache.put(FP, "k7", "q", Reply(text="there"))
    _claim_as(cache, "k901", "elsewhere", 1, time.time() + 60)
    found = cache.claim(FP, [(f"k{i}", None) for i in range(1000)], 60)
    assert found["k7"] == ("landed", Reply(text="there"))
    assert found["k901"] == ("busy", None)
    assert sum(state == "mine" for state, _ in found.values()) == 998
    assert cache.db.execute("SELECT COUNT(*) FROM claims").fetchone() == (999,)


class _Failing(list[tuple[str, str, Reply]]):
    """Rows whose second reading stops with Ctrl-C: inside ``put_batch``'s transaction."""

    reads = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.reads += 1
        if self.reads == 2:
            raise KeyboardInterrupt
        return super().__iter__()


def test_put_batch_stores_all_and_ends_their_claims_or_nothing(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    cache.claim(FP, [("a", None), ("b", None), ("c", None)], 60)
    rows = [("a", "qa", Reply(text="a")), ("b", "qb", Reply(kind="error", detail="HTTP 500"))]
    with pytest.raises(KeyboardInterrupt):
        cache.put_batch(FP, _Failing(rows))
    assert not cache.db.in_transaction
    assert cache.cached_keys(FP) == set()  # rolled back whole: no reply, every claim stands
    assert cache.db.execute("SELECT COUNT(*) FROM claims").fetchone() == (3,)
    cache.put_batch(FP, rows)
    assert cache.cached_keys(FP) == {"a"}  # a backend error is never stored, but its claim ends
    assert cache.db.execute("SELECT item_key FROM claims").fetchall() == [("c",)]


def test_a_batch_is_due_when_full_or_old_and_stays_open_when_its_commit_fails(
    tmp_path: Path,
) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    now = [0.0]
    batch = Batch(cache, FP, size=3, wait_s=0.5, clock=lambda: now[0])
    assert not batch.due() and batch.left(POLL_S) == POLL_S  # nothing open
    batch.add("a", "qa", Reply(text="a"))
    now[0] += 0.4
    batch.add("b", "qb", Reply(text="b"))
    assert not batch.due() and batch.left(POLL_S) == pytest.approx(0.1)  # the loop waits less
    now[0] += 0.1  # the oldest has waited 0.5 s
    assert batch.due() and batch.left(POLL_S) == 0.0
    batch.add("c", "qc", Reply(text="c"))
    now[0] = 0.0
    assert batch.due()  # full
    assert cache.cached_keys(FP) == set()  # nothing is committed before flush
    cache.close()
    with pytest.raises(sqlite3.ProgrammingError):  # a closed connection: the commit fails
        batch.flush()
    assert [key for key, _, _ in batch.rows] == ["a", "b", "c"]  # still open, whole
    batch.cache = VerdictCache(tmp_path / "c.sqlite")
    batch.flush()
    assert batch.rows == [] and batch.cache.cached_keys(FP) == {"a", "b", "c"}
    batch.flush()  # an empty batch commits nothing


class _BrokenCache:
    """A cache whose every commit fails as a full disk does."""

    def put_batch(self, fingerprint: str, rows: object) -> None:
        raise ConfigError("c.sqlite: the disk is full; free some space")


def test_closing_a_batch_of_a_run_that_already_fails_shows_the_runs_error() -> None:
    batch = Batch(_BrokenCache(), FP)  # type: ignore[arg-type]
    batch.add("a", "qa", Reply(text="a"))
    batch.close(failing=True)  # the run's own error is the one to see
    assert len(batch.rows) == 1  # not committed: asked again next time
    with pytest.raises(ConfigError, match="disk is full"):
        batch.close(failing=False)  # a run that ended well hears of it
