"""The user's code, contained: importing the adapter (``module:function``), calling it, the
one event loop of async adapters, and where what it prints goes.

Any exception the user's code raises, ``BaseException`` subclasses of its own included, is one
failed question with its message (or, from a sweep factory, a refusal of the setting), never a
traceback of the harness. Only ``KeyboardInterrupt`` from a plain function stops the run, as
Ctrl-C does (the signals the harness handles arrive as one: ``judge.signals``). What the
adapter writes to ``sys.stdout`` and ``sys.stderr`` while it is asked goes to a log beside its
saved answers (``reports/runs/<answers>.log``, named in a warning line), never to the harness's
output: the nightly's first line stays its verdict, and no escape sequence or bell of the
adapter's reaches the terminal. What it writes past ``sys.stdout``, to file descriptors 1 and
2 (``os.write``, a C library, a subprocess), goes to the same log (``_FdCapture``).

An async adapter runs on one event loop that lives as long as the process (``adapter_loop``):
an adapter that keeps one module-level async client (``httpx.AsyncClient``, an OpenAI client)
therefore sees the same loop on every question and every later call.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import io
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from judge.errors import AdapterError

if TYPE_CHECKING:
    # asyncio is imported where an async adapter needs it: a run read from a file (the nightly,
    # a re-render) never starts an event loop, and the import is a tenth of the CLI's start-up.
    import asyncio

#: What the harness calls: the question text in, the adapter's output (or an awaitable) out.
Adapter = Callable[[str], Any]

# --- the user's code, contained ---------------------------------------------------------------

_user = threading.local()


@contextmanager
def user_code() -> Iterator[None]:
    """Mark this thread as running the user's code (what it prints goes to the adapter's log)."""
    depth = getattr(_user, "depth", 0)
    _user.depth = depth + 1
    try:
        yield
    finally:
        _user.depth = depth


def _in_user_code() -> bool:
    """Whether the current thread runs the user's code: inside ``user_code``, or the adapter
    event loop's thread (which runs nothing but adapters)."""
    return getattr(_user, "depth", 0) > 0 or threading.current_thread() is _loop_thread


def exited(exc: BaseException) -> RuntimeError:
    # Any BaseException that is not an Exception, raised by the adapter's own code: SystemExit
    # (escaping a worker it would end the harness: sys.exit(0) gives exit 0 and no message), a
    # KeyboardInterrupt in the event loop (it would stop the loop's thread and leave every
    # waiter hanging), GeneratorExit, or a class of its own (``class Abort(BaseException)``),
    # which would end the command with a traceback. Each is one failed question.
    return RuntimeError(f"the adapter raised {type(exc).__name__}({exc})")


def _contained(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (the adapter, ``sweep.answer`` or ``sweep.factory``) as the harness calls
    it: an exception that is not an ``Exception`` comes back as one (``exited``), so every
    ``except Exception`` around user code catches it. A plain function's ``KeyboardInterrupt``
    passes (Ctrl-C, or the function's own: it stops the run as Ctrl-C does), and so does an
    async function's cancellation (the harness cancels it at its deadline); an async
    function's ``KeyboardInterrupt`` would stop the event loop, so it is one failed question.
    What it prints goes to the adapter's log."""
    if is_async(function):
        import asyncio

        @functools.wraps(function)
        async def call_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await function(*args, **kwargs)
            except (Exception, asyncio.CancelledError):
                raise
            except BaseException as exc:
                raise exited(exc) from None

        return call_async

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        with user_code():
            try:
                return function(*args, **kwargs)
            except (Exception, KeyboardInterrupt):
                # Ctrl-C and SIGTERM (judge.signals), or the function's own, which stops the
                # run as they do (``_answer_sync``)
                raise
            except BaseException as exc:
                raise exited(exc) from None

    return call


def load_adapter(spec: str, search_dir: Path | None = None) -> Adapter:
    """Import ``module:function`` from ``search_dir`` (the config's folder) or the Python path.

    The function comes back contained (``_contained``); what the module prints on import goes
    to the adapter's log too, when one is open."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AdapterError(f"adapter '{spec}': expected 'module:function', e.g. 'my_rag:answer'")
    if search_dir is not None and str(search_dir) not in sys.path:
        sys.path.insert(0, str(search_dir))
    try:
        with user_code():
            module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() or a BaseException of its own on import
        raise AdapterError(
            f"adapter '{spec}': cannot import '{module_name}': {_user_error(exc)}"
        ) from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise AdapterError(f"adapter '{spec}': '{module_name}' has no callable '{attribute}'")
    return _contained(function)


def _user_error(exc: BaseException) -> str:
    """An exception of the user's code in a message: an ``Exception``'s or ``SystemExit``'s
    text; for a class of its own, its name and text (``failure_text``)."""
    return str(exc) if isinstance(exc, Exception | SystemExit) else failure_text(exc)


# --- what the adapter prints ------------------------------------------------------------------


class AdapterLog:
    """The file that receives what the user's code writes to ``sys.stdout`` and ``sys.stderr``
    while a command asks it: created on the first write (an adapter that prints nothing leaves
    no file), appended to by a thread that writes after the command stopped listening.

    Whole lines: ``print`` writes its text and its newline in two calls, so with several
    questions asked at once (``adapter_concurrency``) two threads' prints would interleave
    mid-line. Each thread's text is held until its line ends (what is left of a line is
    written when the log closes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.chars = 0
        self._lock = threading.Lock()
        self._handle: IO[str] | None = None
        self._closed = False
        self._pending: dict[int, str] = {}
        """Per thread, the start of a line not ended yet."""

    @property
    def written(self) -> bool:
        return self.chars > 0

    def write(self, text: str) -> None:
        with self._lock:
            self.chars += len(text)
            if not self._closed:
                thread = threading.get_ident()
                held = self._pending.pop(thread, "") + text
                end = held.rfind("\n") + 1
                if end < len(held):
                    self._pending[thread] = held[end:]
                text = held[:end]
            if text:
                self._emit(text)

    def _emit(self, text: str) -> None:
        """Append ``text`` (the lock held)."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8", errors="replace")
        self._handle.write(text)
        self._handle.flush()
        if self._closed:  # a late write (an abandoned thread): the file is not kept open
            self._handle.close()
            self._handle = None

    def close(self) -> None:
        with self._lock:
            for held in self._pending.values():  # lines a thread began and never ended
                self._emit(held + "\n")
            self._pending.clear()
            self._closed = True
            if self._handle is not None:
                self._handle.close()
                self._handle = None


class _Split(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` while the adapter is asked: the user's code's writes go
    to the log, the harness's to the stream it replaced (everything else is that stream's), or,
    when that stream writes to a file descriptor the capture took over (``_FdCapture``), to a
    copy of the descriptor as it was."""

    def __init__(self, stream: Any, log: AdapterLog, harness: IO[str] | None = None) -> None:
        super().__init__()
        self._stream = stream
        self._log = log
        self._harness = stream if harness is None else harness

    def write(self, text: str) -> int:
        if _in_user_code():
            self._log.write(text)
            return len(text)
        if self._harness.closed:  # the block ended; a progress display kept this stream
            self._harness = self._stream
        return int(self._harness.write(text))

    def flush(self) -> None:
        if not _in_user_code() and not self._harness.closed:
            self._harness.flush()

    def isatty(self) -> bool:
        return False if _in_user_code() else bool(self._stream.isatty())

    def fileno(self) -> int:
        return int(self._stream.fileno())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._stream, "encoding", "utf-8"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def adapter_output(path: Path) -> Iterator[AdapterLog]:
    """Send what the user's code prints to ``path`` for the duration of the block (the
    harness's own output is untouched). A stream that something else put in place meanwhile
    (a progress display) is left to whoever put it there.

    What reaches file descriptors 1 and 2 directly (``os.write``, a C library, a subprocess
    that inherits them) goes to the same log, its control characters shown as escapes
    (``_FdCapture``); the descriptors are restored when the block ends, by an exception or
    Ctrl-C too."""
    log = AdapterLog(path)
    stdout, stderr = sys.stdout, sys.stderr
    try:
        with _FdCapture(log) as fds:
            split_out = _Split(stdout, log, fds.harness_stream(stdout, 1))
            split_err = _Split(stderr, log, fds.harness_stream(stderr, 2))
            sys.stdout, sys.stderr = split_out, split_err
            try:
                yield log
            finally:
                if sys.stdout is split_out:
                    sys.stdout = stdout
                if sys.stderr is split_err:
                    sys.stderr = stderr
                _flush(split_out, split_err, sys.__stdout__, sys.__stderr__)
    finally:
        log.close()


def _flush(*streams: Any) -> None:
    """Flush each stream that can be (a closed or odd one is skipped)."""
    for stream in streams:
        with suppress(OSError, ValueError, AttributeError):
            stream.flush()


class _FdCapture:
    """File descriptors 1 and 2 pointed at a pipe while the adapter is asked, and a thread that
    reads the pipe into the adapter's log: bytes written past ``sys.stdout`` (``os.write(1,
    ...)``, a C extension's ``printf``, a subprocess) cannot reach the terminal or come before
    the nightly's first line. Each line is kept with its control characters shown as escapes
    (``terminal_text``), so an OSC-8 link or an ESC sequence in the log is inert too.

    The harness's own output goes to copies of the descriptors as they were
    (``harness_stream``). Nested blocks (``check --repeat`` inside a run) share the outer
    capture. A descriptor that is not open is left alone."""

    _active = 0
    _lock = threading.Lock()

    def __init__(self, log: AdapterLog) -> None:
        self._log = log
        self._saved: dict[int, int] = {}
        self._reader: threading.Thread | None = None
        self._streams: list[IO[str]] = []

    def __enter__(self) -> _FdCapture:
        with _FdCapture._lock:
            _FdCapture._active += 1
            if _FdCapture._active > 1:
                return self
            _flush(sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)
            try:
                read, write = os.pipe()
            except OSError:
                return self
            for fd in (1, 2):
                try:
                    self._saved[fd] = os.dup(fd)
                    os.dup2(write, fd)
                except OSError:
                    self._saved.pop(fd, None)
            os.close(write)
            self._reader = threading.Thread(
                target=self._read, args=(read,), name="judge-adapter-fds", daemon=True
            )
            self._reader.start()
            return self

    def harness_stream(self, stream: Any, fd: int) -> IO[str] | None:
        """A text stream on the copy of ``fd`` for the harness, when ``stream`` (its
        ``sys.stdout`` or ``sys.stderr``) writes to ``fd``; else None (it writes elsewhere: a
        test's capture, a file)."""
        try:
            if fd not in self._saved or stream.fileno() != fd:
                return None
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return None
        copy = open(  # noqa: SIM115 (closed in __exit__)
            self._saved[fd],
            "w",
            encoding=getattr(stream, "encoding", None) or "utf-8",
            errors=getattr(stream, "errors", None) or "strict",
            buffering=1,
            closefd=False,
        )
        self._streams.append(copy)
        return copy

    def _read(self, read: int) -> None:
        """Copy the pipe into the log, line by line, until every writer closed it."""
        from judge.formatting import terminal_text

        with os.fdopen(read, "rb") as pipe:
            for line in iter(lambda: pipe.readline(1 << 16), b""):
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                self._log.write(terminal_text(text) + "\n")

    def __exit__(self, *exc: object) -> None:
        with _FdCapture._lock:
            _FdCapture._active -= 1
            for stream in self._streams:
                stream.close()  # flushed; the descriptor is the copy's, closed next
            for fd, copy in self._saved.items():
                os.dup2(copy, fd)
                os.close(copy)
            if self._reader is not None:
                # a subprocess that inherited the pipe and outlives the block keeps it open
                self._reader.join(timeout=2.0)


# --- the one event loop for async adapters ----------------------------------------------------

_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: threading.Thread | None = None
_loop_lock = threading.Lock()


def adapter_loop() -> asyncio.AbstractEventLoop:
    """The process's event loop for adapters, running in a daemon thread (started on first use).

    One loop for the whole process, not one per question or per command: async clients bind
    their connection pools to the loop they first ran on. To close such a client from outside
    (in a test, at the end of a script):
    ``asyncio.run_coroutine_threadsafe(client.aclose(), adapter_loop()).result()``.
    """
    import asyncio

    global _loop, _loop_thread
    with _loop_lock:
        if _loop is None or _loop_thread is None or not _loop_thread.is_alive():
            _loop = asyncio.new_event_loop()
            _loop_thread = threading.Thread(
                target=_loop.run_forever, name="judge-adapter-loop", daemon=True
            )
            _loop_thread.start()
        return _loop


def is_async(adapter: Adapter) -> bool:
    call = getattr(adapter, "__call__", None)  # noqa: B004 (a callable object's method)
    return inspect.iscoroutinefunction(adapter) or inspect.iscoroutinefunction(call)


async def awaited(awaitable: Any) -> Any:
    """Await what a plain adapter handed back (a coroutine), its exits contained as the
    adapter's own are (``exited``); the harness's cancellation passes."""
    import asyncio

    try:
        return await awaitable
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as exc:
        raise exited(exc) from None


#: An adapter's error message is kept to this many characters: every failed question's message
#: goes into the header line of the saved run, which must stay readable (``MAX_RECORD_MB``).
MAX_ERROR_CHARS = 500


def failure_text(exc: BaseException) -> str:
    """What a failed question's error says: one exception's type and message, shortened, with
    any half character (a lone surrogate) replaced, so that the saved run can be read back."""
    text = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
