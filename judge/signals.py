"""How the harness stops: SIGINT and SIGTERM end a command cleanly, and no worker thread ever
holds up the exit.

``handled()`` (entered by the CLI around every command) turns SIGINT (Ctrl-C) and SIGTERM (what
``kill``, ``timeout`` and systemd send) into ``KeyboardInterrupt`` in the main thread, so both
stop a run the same way: what was judged stays in the cache, the answers an adapter gave are
saved, the judge backend is closed (an in-process model only once nothing uses it). The exit
code says which signal it was: ``exit_code()`` is 128 + the signal number, 130 for SIGINT and 143
for SIGTERM, as a shell reports a process killed by it. A second signal while the first one is
being handled quits at once (``os._exit``, same code): a forced stop, which keeps every verdict
already committed to the cache but runs no clean-up.

``Workers`` is the thread pool of the judge requests and of the adapter's calls. Its threads are
daemon threads that the interpreter never joins at exit (``concurrent.futures`` joins its
workers at exit, so one request stuck in a server, or one adapter call that never returns,
kept the process alive after Ctrl-C). A call that overran its deadline can be ``abandon``-ed: it
keeps its thread, which is replaced, and its result is ignored.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # imported when used: the CLI imports this module before answering --help
    import queue
    from concurrent.futures import Future

T = TypeVar("T")

HANDLED = (signal.SIGINT, signal.SIGTERM)

_received: int | None = None


def exit_code() -> int:
    """The exit code of an interrupted command: 128 + the signal that stopped it (130 when it
    was a KeyboardInterrupt that no handled signal caused)."""
    return 128 + (_received or signal.SIGINT)


def _handler(signum: int, frame: FrameType | None) -> None:
    global _received
    if _received is not None:  # the first one is being handled: the user insists
        os.write(2, b"interrupted again: quitting without cleaning up\n")
        os._exit(128 + signum)
    _received = signum
    raise KeyboardInterrupt


def install() -> dict[int, Any]:
    """Handle SIGINT and SIGTERM as described above (main thread only); the previous handlers."""
    global _received
    _received = None
    previous: dict[int, Any] = {}
    for signum in HANDLED:
        previous[signum] = signal.signal(signum, _handler)
    return previous


@contextmanager
def handled() -> Iterator[None]:
    """``install()`` for the duration of the block, then restore the previous handlers.

    Outside the main thread (a command run from a worker thread) signals cannot be handled
    there, and nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = install()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


# --- worker threads that never hold up the exit ---------------------------------------------------


class _Task:
    __slots__ = ("call", "future")

    def __init__(self, future: Future[Any], call: Callable[[], Any]) -> None:
        self.future = future
        self.call = call


class Workers:
    """At most ``size`` threads running submitted calls; daemon threads, never joined.

    Unlike ``ThreadPoolExecutor`` (whose workers the interpreter joins at exit), a call that
    never returns cannot keep the process alive. ``shutdown`` never waits.
    """

    def __init__(self, size: int, name: str) -> None:
        import queue

        self._size = size
        self._name = name
        self._queue: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Semaphore(0)
        self._threads = 0  # started and not abandoned
        self._abandoned: set[Future[Any]] = set()
        self._closed = False

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        from concurrent.futures import Future

        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("submit after shutdown")
            self._queue.put(_Task(future, lambda: fn(*args)))
            if not self._idle.acquire(blocking=False) and self._threads < self._size:
                self._threads += 1
                threading.Thread(
                    target=self._work, name=f"{self._name}-{self._threads}", daemon=True
                ).start()
        return future

    def abandon(self, future: Future[Any]) -> None:
        """Stop counting a running call that overran: its thread finishes it alone (its result
        is dropped) and then ends; a new thread takes its place for the next calls."""
        with self._lock:
            if future.done() or future in self._abandoned:
                return
            self._abandoned.add(future)
            self._threads -= 1

    def shutdown(self) -> None:
        """Cancel the calls not started; running ones are left to finish (or not) on their own."""
        with self._lock:
            self._closed = True
        from queue import Empty

        while True:
            try:
                task = self._queue.get_nowait()
            except Empty:
                break
            if task is not None:
                task.future.cancel()
        for _ in range(self._size):
            self._queue.put(None)

    def _work(self) -> None:
        while True:
            task = self._queue.get()
            if task is None:
                return
            if task.future.set_running_or_notify_cancel():
                try:
                    result = task.call()
                except BaseException as exc:  # handed to whoever waits for it
                    task.future.set_exception(exc)
                else:
                    task.future.set_result(result)
            with self._lock:
                if task.future in self._abandoned:  # replaced meanwhile: this thread retires
                    self._abandoned.discard(task.future)
                    return
            del task
            self._idle.release()
