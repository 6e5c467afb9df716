"""The one file lock: an OS ``flock`` on a lock file, for a shared file and for a reports folder.

The labels file (``judge audit import``, ``judge audit label``), the pinned baseline (``pin``,
``ratchet``) and ``history.jsonl`` are read, changed and written back by commands that may run
at the same time. Each such update holds the file's lock (``locked``) from its read to its
write, so the second command reads what the first wrote and merges into it, instead of both
writing what they read before and one losing the other's work; it waits for the holder.

One judge run at a time writes to a reports folder (``run_lock``, on ``reports/.lock``): a
second run waits for it up to its ``wait_s`` (0 by default, ``judge run --wait``; the
nightly waits ``judge.errors.NIGHTLY_WAIT_S``), then is refused (it would ask the adapter and
the judge for the same work). Refused, a command exits ``EXIT_BUSY`` (4), not 2: nothing is
wrong with its input, and a scheduler can tell "try again later" from "fix the configuration".

Both are ``_hold``: the operating system releases the lock when its process ends, however it
ends, so a crash never leaves it stuck; the holder's pid is written into the lock file for the
message of whoever finds it busy, and the file is removed on release. A lock file a killed
process left (there, but held by none) is taken by the next command and removed when it is
done; the temporary copies of the file that process left (``judge.io.write.write_atomic``'s)
are removed as soon as the lock is held (``clear_stale_copies``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from judge.errors import EXIT_BUSY, HarnessError
from judge.io.write import clear_stale_copies

#: How long a command waits for another one to finish updating a shared file before it gives up
#: with one line. An update (an import, a pin, a history line) takes well under a second; only
#: an interactive ``judge audit label`` holds a lock for longer.
LOCK_WAIT_S = 30.0
_LOCK_POLL_S = 0.05
#: How often a waiting run checks the reports folder's lock (a run lasts minutes, not seconds).
_RUN_POLL_S = 1.0

logger = logging.getLogger(__name__)


class Busy(HarnessError):
    """Another command holds the lock of a file this one must write, past the wait (exit 4,
    ``EXIT_BUSY``: nothing was done; run it again)."""

    exit_code = EXIT_BUSY


def lock_file(path: Path) -> Path:
    """The lock file of ``path``: ``.<name>.lock`` beside it, there only while it is held. For a
    symlink, beside its target: the file that is written (``write_atomic``), so that two paths
    to one file share one lock."""
    real = os.path.realpath(path)
    target = Path(real) if real != os.path.abspath(path) else path
    return target.with_name(f".{target.name}.lock")


def _lock_holder(fd: int) -> str:
    with suppress(OSError):
        text = os.pread(fd, 64, 0).decode("utf-8", "replace").strip()
        if text.isdigit():
            return text
    return "?"


def _try_lock(lock: Path) -> tuple[int | None, str]:
    """Lock ``lock`` without waiting: its descriptor (and ``""``), or None and the holder's pid
    (``"?"`` when unknown). A file removed and made again while this one opened it counts as
    busy with no holder, so the caller tries again and locks the file in place."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(fd)
        os.close(fd)
        return None, holder
    except BaseException:
        os.close(fd)
        raise
    try:
        here = os.stat(lock)
        held = os.fstat(fd)
        same = (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)
    except FileNotFoundError:
        same = False
    if same:
        return fd, ""
    os.close(fd)  # released and removed while this one waited: lock the file in place
    return None, ""


@contextmanager
def _hold(
    lock: Path,
    wait_s: float,
    busy: Callable[[str], str],
    *,
    poll_s: float = _LOCK_POLL_S,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold ``lock`` (waiting up to ``wait_s`` seconds for its holder, trying every ``poll_s``),
    or raise ``Busy`` with ``busy(holder's pid)``; ``on_wait(holder's pid)`` is called once,
    when the wait starts. The pid of this process is written into it, and it is removed on
    release (a waiter that locked a removed file locks again, the one in place)."""
    deadline = time.monotonic() + wait_s
    waiting = False
    while True:
        fd, holder = _try_lock(lock)
        if fd is not None:
            break
        if holder and time.monotonic() >= deadline:
            raise Busy(busy(holder))
        if holder:
            if on_wait is not None and not waiting:
                on_wait(holder)
            waiting = True
            time.sleep(min(poll_s, max(deadline - time.monotonic(), 0.0)))
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        with suppress(OSError):
            os.unlink(lock)
        os.close(fd)


@contextmanager
def locked(path: Path, *, wait_s: float = LOCK_WAIT_S, doing: str = "writing") -> Iterator[None]:
    """Hold ``path``'s lock (an OS ``flock`` on ``lock_file(path)``) for a read-modify-write.

    Waits up to ``wait_s`` seconds for another command that holds it, then raises ``Busy``
    with one line naming the file and the holder's pid. Not re-entrant: a process holds each
    file's lock once. Once held, the copies of ``path`` a killed process left are removed.
    """

    def busy(holder: str) -> str:
        return (
            f"{path}: another judge command (pid {holder}) is {doing} this file; wait "
            "for it to finish, then run this again (its lock is released when it exits)"
        )

    with _hold(lock_file(path), wait_s, busy):
        clear_stale_copies(path)  # a killed holder's half-made copy: removed while none can write
        yield


@contextmanager
def run_lock(
    reports_dir: Path, wait_s: float = 0.0, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Held while a run writes to ``reports_dir`` (``.lock`` in it): a second run waits up to
    ``wait_s`` seconds for it (``on_wait(holder's pid)`` once when it starts waiting; by
    default a warning, which the command line prints on stderr),
    then is refused with ``Busy`` (exit 4), one line naming the holder's pid and the wait."""
    reports_dir.mkdir(parents=True, exist_ok=True)

    def waiting(holder: str) -> None:
        logger.warning(
            "another judge run (pid %s) is writing to %s; waiting for it, up to %g s",
            holder,
            reports_dir,
            wait_s,
        )

    def busy(holder: str) -> str:
        waited = f" (waited {wait_s:g} s)" if wait_s > 0 else ""
        return (
            f"another judge run (pid {holder}) is writing to {reports_dir}{waited}; nothing "
            "was done: run this again when it has finished (its lock is released when it "
            "exits), or give --wait SECONDS"
        )

    said = on_wait or waiting
    with _hold(reports_dir / ".lock", wait_s, busy, poll_s=_RUN_POLL_S, on_wait=said):
        yield
