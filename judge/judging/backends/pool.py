"""Several servers serving the same judge, used as one backend (``judge.*.endpoints``).

Each member is an ordinary backend on one server (an ``OllamaBackend`` or ``OpenAIBackend``
built from a copy of the configuration with that server's address), with its own concurrency:
the like of ``OLLAMA_NUM_PARALLEL`` on that box. The pool is not a scheduler: it hands each
request to the least-loaded member that has a free slot, so that the grading loop, keeping
``capacity`` (the sum of the concurrencies) requests in flight, fills every server.

Failures: a member that loses its connection (``ConnectionLost``: refused, dropped, no reply
within the timeout) is marked down, said once, and the request goes to another member at once;
its later items go to the others. Other errors are the member's answer for that request and
pass through to the grading loop's retry rules (a retry may land on another member). When every
member is down the request fails with ``ConnectionLost`` naming each one's error; the retry
then tries a down member again (so a pool of one behaves like its backend alone), and once the
retries fail too, the run stops as it does for one server.

Identity: every member must be the same judge (kind, model, options and, where the server
reports one, the model digest), else the pool is refused naming the odd endpoint. The pool's
identity is theirs, so the fingerprint does not depend on which member answered, nor on how
many there are: a pool's verdicts are cached under the same key as one server's.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from judge.errors import BackendUnavailable, ConnectionLost
from judge.judging.backends.base import BackendIdentity, JudgeBackend, JudgeRequest, PlainBackend
from judge.judging.verdict import Reply

logger = logging.getLogger(__name__)


class PoolRefused(BackendUnavailable):
    """Some endpoints answered but the pool cannot be used as configured (an endpoint does not
    answer, or serves other weights). ``auto`` does not fall back to the embedded judge for
    this: the configuration names servers that are meant to be used."""


@dataclass
class _Member:
    backend: JudgeBackend
    concurrency: int
    name: str
    in_flight: int = 0
    answered: int = 0
    down: str | None = None
    """Why it is down (the error that took it out), or None while it is used."""


def _same_judge(identity: BackendIdentity) -> tuple[object, ...]:
    """What must agree between members: what goes into the fingerprint."""
    return (identity.kind, identity.model, identity.options, identity.reads_prompt)


class PooledBackend(PlainBackend):
    """One judge served by several members; see the module's docstring."""

    def __init__(
        self, members: Sequence[tuple[JudgeBackend, int]], setting: str = "the pool"
    ) -> None:
        """``members``: opened (so preflighted) backends, each with its concurrency (at least
        1). ``setting`` names the configuration key in messages. On refusal every member is
        closed."""
        if not members:
            raise ValueError("a pool needs at least one member")
        self.setting = setting
        self._members = [
            _Member(backend, concurrency, backend.identity.endpoint or f"member {i + 1}")
            for i, (backend, concurrency) in enumerate(members)
        ]
        if any(m.concurrency < 1 for m in self._members):
            raise ValueError("each member's concurrency must be at least 1")
        try:
            self.identity = self._common_identity()
        except BaseException:
            self.close()
            raise
        self._changed = threading.Condition()
        self._closed = False

    def _common_identity(self) -> BackendIdentity:
        first = self._members[0].backend.identity
        for member in self._members[1:]:
            identity = member.backend.identity
            if _same_judge(identity) != _same_judge(first):
                raise PoolRefused(
                    f"{self.setting}: {member.name} serves {identity.kind} {identity.model} "
                    f"with options {identity.options}, not {first.kind} {first.model} with "
                    f"{first.options} like {self._members[0].name}; every endpoint must be the "
                    "same judge"
                )
        # The odd one out is the one whose digest differs from most others' (from the first
        # member's when there is no majority).
        digests = Counter(m.backend.identity.digest for m in self._members)
        majority, count = digests.most_common(1)[0]
        if count * 2 <= len(self._members):
            majority = first.digest
        reference = next(m for m in self._members if m.backend.identity.digest == majority)
        for member in self._members:
            digest = member.backend.identity.digest
            if digest != majority:
                raise PoolRefused(
                    f"{self.setting}: {member.name} serves {first.model} with digest {digest}, "
                    f"not {majority} like {reference.name}; install the same weights on every "
                    f"endpoint (e.g. 'ollama pull {first.model}' on each) or remove it"
                )
        versions = sorted({v for m in self._members if (v := m.backend.identity.server_version)})
        abouts = {m.backend.identity.about for m in self._members}
        return first.model_copy(
            update={
                "endpoint": ", ".join(f"{m.name} ({m.concurrency} at once)" for m in self._members),
                "server_version": ", ".join(versions) or None,
                "about": abouts.pop() if len(abouts) == 1 else None,
            }
        )

    @property
    def capacity(self) -> int:
        """How many requests the pool serves at once: the sum of its members' concurrencies.
        The grading loop should keep this many in flight."""
        return sum(m.concurrency for m in self._members)

    def max_connections(self, configured: int) -> int:
        """The pool's ``capacity``, whatever ``judge.concurrency`` says."""
        return self.capacity

    def capacity_note(self, setting_reason: str) -> str:
        return f"{setting_reason} ({self.setting}: {self.capacity} requests at once)"

    @property
    def answered(self) -> dict[str, int]:
        """Replies per member so far, by endpoint."""
        with self._changed:
            return {m.name: m.answered for m in self._members}

    @property
    def down(self) -> dict[str, str]:
        """The members that are down, by endpoint, with the error that took each out."""
        with self._changed:
            return {m.name: m.down for m in self._members if m.down is not None}

    def summary(self) -> str:
        """One line: replies per member, and which are down."""
        with self._changed:
            parts = [
                f"{m.name} {m.answered}" + (f" (down: {m.down})" if m.down else "")
                for m in self._members
            ]
        return f"{self.setting}: replies per endpoint: {', '.join(parts)}"

    def _take_slot(self) -> tuple[_Member, bool]:
        """A member with a free slot, least loaded first; waits while all are busy. The flag
        is True when every member is down and this one is tried again as a last resort."""
        with self._changed:
            while True:
                if self._closed:
                    raise BackendUnavailable(f"{self.setting}: the pool is closed")
                up = [m for m in self._members if m.down is None]
                free = [m for m in (up or self._members) if m.in_flight < m.concurrency]
                if free:
                    member = min(free, key=lambda m: m.in_flight / m.concurrency)
                    member.in_flight += 1
                    return member, not up
                self._changed.wait()

    def complete(self, request: JudgeRequest) -> Reply:
        while True:
            member, last_resort = self._take_slot()
            try:
                reply = member.backend.complete(request)
            except ConnectionLost as exc:
                with self._changed:
                    member.in_flight -= 1
                    self._changed.notify_all()
                    was_up, member.down = member.down is None, str(exc)
                    if was_up:
                        others = sum(m.down is None for m in self._members)
                        logger.warning(
                            "%s: %s is down (%s); %s",
                            self.setting,
                            member.name,
                            exc,
                            f"its items go to the other {others} endpoint(s)"
                            if others
                            else "no endpoint is left",
                        )
                    if last_resort or all(m.down is not None for m in self._members):
                        errors = "; ".join(f"{m.name}: {m.down}" for m in self._members)
                        raise ConnectionLost(
                            f"every endpoint of {self.setting} is down: {errors}"
                        ) from exc
                continue  # at once, on another member
            except BaseException:
                with self._changed:
                    member.in_flight -= 1
                    self._changed.notify_all()
                raise
            with self._changed:
                member.in_flight -= 1
                member.answered += 1
                # Back in use only when it answered a request sent while it was down: one sent
                # before it failed says nothing about the server now.
                if last_resort and member.down is not None:
                    logger.warning("%s: %s answers again", self.setting, member.name)
                    member.down = None
                self._changed.notify_all()
            return reply

    def close(self) -> None:
        """Close every member (each even if another fails to close)."""
        changed = getattr(self, "_changed", None)
        if changed is not None:
            with changed:
                self._closed = True
                changed.notify_all()
                lost = any(m.down is not None for m in self._members)
            # Worth a line on the console when an endpoint was lost (how the work was shared).
            logger.log(logging.WARNING if lost else logging.INFO, "%s", self.summary())
        with contextlib.ExitStack() as closing:
            for member in self._members:
                closing.callback(member.backend.close)


def open_pool(
    endpoints: Sequence[tuple[str, Callable[[], JudgeBackend], int]], setting: str
) -> PooledBackend:
    """Open (preflight) one member per ``(endpoint, open_member, concurrency)``, all at once,
    and pool them.

    No endpoint answers: ``BackendUnavailable`` with each one's error. Some do not:
    ``PoolRefused`` naming them. A configured server that does not answer is most often a
    typo or a box left off; judging on without it would silently change how long the run
    takes, so it is refused before any work, like a single dead server. (One that fails
    mid-run leaves its items to the others.)
    """
    opened: list[tuple[JudgeBackend, int]] = []
    dead: list[str] = []
    failure: BaseException | None = None  # not a dead server: a bug, raised as it is
    with ThreadPoolExecutor(len(endpoints), thread_name_prefix="judge-preflight") as preflight:
        futures = [(name, preflight.submit(open_member), n) for name, open_member, n in endpoints]
    for name, future, concurrency in futures:
        try:
            opened.append((future.result(), concurrency))
        except BackendUnavailable as exc:
            dead.append(f"{name}: {exc}")
        except Exception as exc:
            failure = failure or exc
    if failure is not None or dead:
        with contextlib.ExitStack() as closing:
            for backend, _ in opened:
                closing.callback(backend.close)
        if failure is not None:
            raise failure
        if not opened:
            raise BackendUnavailable(f"no endpoint of {setting} answers: {'; '.join(dead)}")
        raise PoolRefused(
            f"{setting}: {len(dead)} of {len(endpoints)} endpoints do not answer "
            f"({'; '.join(dead)}); start them or remove them from {setting}"
        )
    return PooledBackend(opened, setting)
