"""Runs sharing one verdict cache share the work: each item is asked by one of them.

Two nightlies of two branches, or a nightly and a developer's ``judge run``, often judge the
same items under the same fingerprint at the same time. Without a word between them both ask
the judge for every item. Here each run claims the items it is about to ask, a block at a time
(``VerdictCache.claim``: a row with the process, its machine and an expiry, in the cache's own
SQLite file); an item another live run has claimed is set aside, and taken from the cache when
its reply lands, or asked after all when that run gives it up, dies or lets its claim expire.

New replies are committed a batch at a time (``Batch``: ``BATCH_SIZE`` replies or
``BATCH_WAIT_S`` seconds), with the end of their claims in the same transaction. A run killed
with kill -9 leaves its claims behind: on the same machine they are taken at once (its process
is gone), from another after ``CLAIM_TTL_S``. What it lost is what it had open: the items it
had claimed and not yet committed (its open batch among them).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Generic, Protocol, TypeVar

from judge.errors import ConfigError
from judge.judging.cache import CLAIM_TTL_S, VerdictCache
from judge.judging.verdict import Reply

#: How often the items another run holds are looked at again.
POLL_S = 0.2
#: The most asks claimed in one block: a fast judge's blocks grow up to this (``Shared``).
MOST_BLOCK = 256
#: A batch of new replies (``Batch``) is committed when it holds this many, or when its oldest
#: has waited this long (``POLL_S``: how often a run waiting for one of them looks).
BATCH_SIZE = 256
BATCH_WAIT_S = POLL_S


class HasKey(Protocol):
    """An ask: the key its reply is cached under."""

    @property
    def key(self) -> str: ...


A = TypeVar("A", bound=HasKey)


class Shared(Generic[A]):
    """The asks of one run still to send, claimed in blocks; the ones another run holds, and
    the replies that landed for them.

    ``next_mine()`` gives the next ask this run holds the claim of (None: none free now);
    ``landed()`` the asks whose reply another run stored; ``release()`` gives up the claims of
    what was not asked (Ctrl-C).

    A block is ``block`` asks, or twice the last one (up to ``MOST_BLOCK``) when the last was
    used up within ``POLL_S`` seconds: a judge that answers in microseconds would otherwise
    spend more on claiming than on anything else, and a block it finishes that fast holds
    another run up no longer than its poll."""

    def __init__(
        self,
        todo: Sequence[A],
        cache: VerdictCache,
        fingerprint: str,
        seen: Mapping[str, Reply],
        block: int,
        ttl_s: float = CLAIM_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._queue: deque[A] = deque(todo)
        self._mine: deque[A] = deque()
        self._waiting: list[A] = []
        self._landed: list[tuple[A, Reply]] = []
        self._asked: set[str] = set()
        self._cache = cache
        self._fingerprint = fingerprint
        self._seen = seen
        self._block = self._size = max(1, block)
        self._ttl_s = ttl_s
        self._clock = clock
        self._polled = clock()
        self._claimed_at = -float("inf")  # when the last block was claimed

    @property
    def waiting(self) -> bool:
        """Whether some asks are held by another run (their replies not landed yet), or landed
        and not yet taken by ``landed()``: a block claimed by ``next_mine`` may hold replies
        another run stored meanwhile, and the loop must not end before it reports them."""
        return bool(self._waiting or self._landed)

    def next_mine(self) -> A | None:
        """The next ask to send: claimed by this run (a new block claimed when needed)."""
        if not self._mine and self._queue:
            now = self._clock()
            fast = now - self._claimed_at < POLL_S
            self._size = max(self._block, min(2 * self._size, MOST_BLOCK)) if fast else self._block
            self._claimed_at = now
            block = [self._queue.popleft() for _ in range(min(self._size, len(self._queue)))]
            self._sort(block)
        if not self._mine:
            return None
        ask = self._mine.popleft()
        self._asked.add(ask.key)
        return ask

    def landed(self) -> list[tuple[A, Reply]]:
        """The asks whose replies landed (another run's), once each; the held ones are looked
        at again every ``POLL_S`` seconds (a freed one becomes this run's to ask)."""
        if self._waiting and self._clock() - self._polled >= POLL_S:
            self._polled = self._clock()
            waiting, self._waiting = self._waiting, []
            self._sort(waiting)
        out, self._landed = self._landed, []
        return out

    def _sort(self, asks: list[A]) -> None:
        found = self._cache.claim(
            self._fingerprint, [(a.key, self._seen.get(a.key)) for a in asks], self._ttl_s
        )
        for ask in asks:
            state, reply = found[ask.key]
            if state == "mine":
                self._mine.append(ask)
            elif state == "landed" and reply is not None:
                self._landed.append((ask, reply))
            else:
                self._waiting.append(ask)

    def done(self, ask: A) -> None:
        """``ask``'s reply is in the open batch: its claim ends when that is committed
        (``VerdictCache.put_batch``), before ``release`` at the latest."""
        self._asked.discard(ask.key)

    def release(self) -> None:
        """Give up the claims still open: the asks claimed and not sent, and those sent and not
        answered (Ctrl-C: their replies will never be stored by this run)."""
        open_keys = [a.key for a in self._mine] + list(self._asked)
        if open_keys:
            # a cache that fails here already failed the run: its own error is the one to show
            with suppress(ConfigError):
                self._cache.release(self._fingerprint, open_keys)
        self._mine.clear()
        self._asked.clear()


class Batch:
    """New replies on their way into the cache, committed together
    (``VerdictCache.put_batch``): when ``size`` are open or the oldest has waited ``wait_s``
    seconds (``due``), and by the asking loop on every way out (``flush``). With a fast backend
    one transaction per reply cost more than everything else the harness does per item; a
    crash (kill -9) loses at most the open batch, whose items the next run asks again.

    The wait is short because each item of the batch is still claimed (``VerdictCache.claim``):
    another run sharing the cache waits for its reply, and looks again every ``POLL_S`` seconds
    anyway, so a batch delays that run by at most one more look."""

    def __init__(
        self,
        cache: VerdictCache,
        fingerprint: str,
        size: int = BATCH_SIZE,
        wait_s: float = BATCH_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cache, self.fingerprint = cache, fingerprint
        self.size, self.wait_s, self.clock = size, wait_s, clock
        self.rows: list[tuple[str, str, Reply]] = []
        self.opened = 0.0

    def add(self, item_key: str, question_id: str, reply: Reply) -> None:
        """One more reply for the open batch (committed by ``flush``)."""
        if not self.rows:
            self.opened = self.clock()
        self.rows.append((item_key, question_id, reply))

    def due(self) -> bool:
        """Whether the open batch is full or has waited long enough."""
        return bool(self.rows) and (
            len(self.rows) >= self.size or self.clock() - self.opened >= self.wait_s
        )

    def left(self, most: float) -> float:
        """Seconds until the open batch is due by its age, at most ``most`` (all of it when
        none is open): how long the asking loop may wait for a reply before committing."""
        if not self.rows:
            return most
        return max(0.0, min(most, self.opened + self.wait_s - self.clock()))

    def flush(self) -> None:
        """Commit the open batch; on failure (or Ctrl-C mid-way) it stays open, whole."""
        self.cache.put_batch(self.fingerprint, self.rows)
        self.rows = []

    def close(self, failing: bool) -> None:
        """``flush`` on the asking loop's way out. A cache error while the run already fails is
        not raised: the run's own error is the one to see (the batch's items are asked again
        next time)."""
        try:
            self.flush()
        except ConfigError:
            if not failing:
                raise
