"""Runs sharing one verdict cache share the work: each item is asked by one of them.

Two nightlies of two branches, or a nightly and a developer's ``judge run``, often judge the
same items under the same fingerprint at the same time. Without a word between them both ask
the judge for every item. Here each run claims the items it is about to ask, a block at a time
(``VerdictCache.claim``: a row with the process, its machine and an expiry, in the cache's own
SQLite file); an item another live run has claimed is set aside, and taken from the cache when
its reply lands, or asked after all when that run gives it up, dies or lets its claim expire.

A run killed with kill -9 leaves its claims behind: on the same machine they are taken at once
(its process is gone), from another after ``CLAIM_TTL_S``. What it lost is what it had open:
the items it had claimed and not yet stored.
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
    what was not asked (Ctrl-C)."""

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
        self._block = max(1, block)
        self._ttl_s = ttl_s
        self._clock = clock
        self._polled = clock()

    @property
    def waiting(self) -> bool:
        """Whether some asks are held by another run (their replies not landed yet), or landed
        and not yet taken by ``landed()``: a block claimed by ``next_mine`` may hold replies
        another run stored meanwhile, and the loop must not end before it reports them."""
        return bool(self._waiting or self._landed)

    def next_mine(self) -> A | None:
        """The next ask to send: claimed by this run (a new block claimed when needed)."""
        if not self._mine and self._queue:
            block = [self._queue.popleft() for _ in range(min(self._block, len(self._queue)))]
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
        """``ask``'s reply was stored (``VerdictCache.put`` ended its claim)."""
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
