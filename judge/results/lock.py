"""One judge run at a time per reports folder.

An advisory ``flock`` on ``reports/.lock``: the operating system releases it when the process
ends, however it ends, so a crashed run can never leave it stuck. A second run is refused at
once (it would ask the adapter and the judge for the same work). The files that several
commands update (the labels, the baseline, ``history.jsonl``) have a lock of their own, which a
second command waits for: ``judge.jsonl.locked``.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from judge.jsonl import Busy

__all__ = ["Busy", "run_lock"]


@contextmanager
def run_lock(reports_dir: Path) -> Iterator[None]:
    reports_dir.mkdir(parents=True, exist_ok=True)
    path = reports_dir / ".lock"
    handle = path.open("a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "?"
            raise Busy(
                f"another judge run (pid {holder}) is writing to {reports_dir}; "
                "wait for it to finish (the lock is released when it exits)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()
