"""Producing a run by asking the user's ``module:function`` adapter every golden question.

An adapter takes the question text and returns ``{"retrieved": [...], "answer": "..."}`` (a
dict or a pydantic model). It may be a plain function, run on a thread pool, or an
``async def``, run on one event loop that lives as long as the process: an adapter that keeps
one module-level async client (``httpx.AsyncClient``, an OpenAI client) therefore sees the same
loop on every question and every later call. Either way at most ``concurrency`` questions are
in flight, and a question the adapter fails (an exception, the wrong shape, its own
``sys.exit()``, or no answer within ``data.adapter_timeout_s``) is recorded in
``run_meta.failed`` while the rest go on.

The user's code is contained: any exception it raises, ``BaseException`` subclasses of its own
included, is one failed question with its message (or, from a sweep factory, a refusal of the
setting), never a traceback of the harness. Only ``KeyboardInterrupt`` from a plain function
stops the run, as Ctrl-C does (the signals the harness handles arrive as one:
``judge.signals``). What the adapter writes to ``sys.stdout`` and ``sys.stderr`` while it is
asked goes to a log beside its saved answers (``reports/runs/<answers>.log``, named in a
warning line), never to the harness's output: the nightly's first line stays its verdict, and
no escape sequence or bell of the adapter's reaches the terminal.

Answers cost time and money and a generator need not be deterministic, so a produced run is
saved under ``reports/runs/`` (``save_checked_run``), and later commands reuse the newest valid
one for the same adapter, golden set and corpus instead of asking again; only the questions the
adapter failed are asked again (``adapter_answers``).
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import inspect
import io
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ValidationError

from judge.errors import AdapterError, InputError, Interrupted
from judge.inputs.golden import GoldenQuestion, GoldenSet
from judge.inputs.runs import (
    RetrievedChunk,
    Run,
    RunMeta,
    RunRecord,
    load_run,
    save_run,
    validate_run,
)
from judge.io.jsonl import record_problem
from judge.io.text import Id, StrictRecord
from judge.io.validation import describe_validation_error
from judge.signals import Workers

if TYPE_CHECKING:
    # asyncio is imported where an async adapter needs it: a run read from a file (the nightly,
    # a re-render) never starts an event loop, and the import is a tenth of the CLI's start-up.
    import asyncio


class AdapterOutput(StrictRecord):
    """What an adapter returns for one question (a dict with these keys, or this model)."""

    retrieved: tuple[RetrievedChunk | Id, ...]
    """Ranked chunks, best first: chunk ids, or dicts with chunk_id, score, text."""
    answer: str


Adapter = Callable[[str], Any]

logger = logging.getLogger(__name__)


# --- the user's code, contained ---------------------------------------------------------------

_user = threading.local()


@contextmanager
def _user_code() -> Iterator[None]:
    """Mark this thread as running the user's code (what it prints goes to the adapter's log)."""
    depth = getattr(_user, "depth", 0)
    _user.depth = depth + 1
    try:
        yield
    finally:
        _user.depth = depth


def _in_user_code() -> bool:
    """Whether the current thread runs the user's code: inside ``_user_code``, or the adapter
    event loop's thread (which runs nothing but adapters)."""
    return getattr(_user, "depth", 0) > 0 or threading.current_thread() is _loop_thread


def _exited(exc: BaseException) -> RuntimeError:
    # Any BaseException that is not an Exception, raised by the adapter's own code: SystemExit
    # (escaping a worker it would end the harness: sys.exit(0) gives exit 0 and no message), a
    # KeyboardInterrupt in the event loop (it would stop the loop's thread and leave every
    # waiter hanging), GeneratorExit, or a class of its own (``class Abort(BaseException)``),
    # which would end the command with a traceback. Each is one failed question.
    return RuntimeError(f"the adapter raised {type(exc).__name__}({exc})")


def _contained(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (the adapter, ``sweep.answer`` or ``sweep.factory``) as the harness calls
    it: an exception that is not an ``Exception`` comes back as one (``_exited``), so every
    ``except Exception`` around user code catches it. A plain function's ``KeyboardInterrupt``
    passes (Ctrl-C, or the function's own: it stops the run as Ctrl-C does), and so does an
    async function's cancellation (the harness cancels it at its deadline); an async
    function's ``KeyboardInterrupt`` would stop the event loop, so it is one failed question.
    What it prints goes to the adapter's log."""
    if _is_async(function):
        import asyncio

        @functools.wraps(function)
        async def call_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await function(*args, **kwargs)
            except (Exception, asyncio.CancelledError):
                raise
            except BaseException as exc:
                raise _exited(exc) from None

        return call_async

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        with _user_code():
            try:
                return function(*args, **kwargs)
            except (Exception, KeyboardInterrupt):
                # Ctrl-C and SIGTERM (judge.signals), or the function's own, which stops the
                # run as they do (``_answer_sync``)
                raise
            except BaseException as exc:
                raise _exited(exc) from None

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
        with _user_code():
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
    text; for a class of its own, its name and text (``_failure``)."""
    return str(exc) if isinstance(exc, Exception | SystemExit) else _failure(exc)


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
    to the log, the harness's to the stream it replaced (everything else is that stream's)."""

    def __init__(self, stream: Any, log: AdapterLog) -> None:
        super().__init__()
        self._stream = stream
        self._log = log

    def write(self, text: str) -> int:
        if _in_user_code():
            self._log.write(text)
            return len(text)
        return int(self._stream.write(text))

    def flush(self) -> None:
        if not _in_user_code():
            self._stream.flush()

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
    (a progress display) is left to whoever put it there."""
    log = AdapterLog(path)
    stdout, stderr = sys.stdout, sys.stderr
    split_out, split_err = _Split(stdout, log), _Split(stderr, log)
    sys.stdout, sys.stderr = split_out, split_err
    try:
        yield log
    finally:
        if sys.stdout is split_out:
            sys.stdout = stdout
        if sys.stderr is split_err:
            sys.stderr = stderr
        log.close()


def _to_record(question: GoldenQuestion, result: Any) -> RunRecord:
    if isinstance(result, BaseModel):
        result = result.model_dump()
    try:
        output = AdapterOutput.model_validate(result)
        retrieved = tuple(
            RetrievedChunk(chunk_id=item) if isinstance(item, str) else item
            for item in output.retrieved
        )
        record = RunRecord(id=question.id, retrieved=retrieved, answer=output.answer)
    except ValidationError as exc:  # one line, whichever model refused it (e.g. a blank answer)
        raise ValueError(
            "returned "
            + "; ".join(describe_validation_error(exc))
            + " (expected {'retrieved': [...], 'answer': '...'})"
        ) from None
    # Refused now, as one failed question: saved, it would make the run file unreadable, and
    # every later command that reuses the answers would stop on it (judge.io.jsonl.read_jsonl).
    problem = record_problem(record)
    if problem is not None:
        raise ValueError(
            f"returned an answer that cannot be saved: {problem}; shorten the answer (or the "
            "chunk texts) the adapter returns"
        )
    return record


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


def _is_async(adapter: Adapter) -> bool:
    call = getattr(adapter, "__call__", None)  # noqa: B004 (a callable object's method)
    return inspect.iscoroutinefunction(adapter) or inspect.iscoroutinefunction(call)


async def _answer_async(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    # The adapter may be a function a factory built (not contained by load_adapter): any
    # BaseException but the harness's cancellation is one failed question (``_exited``).
    import asyncio

    try:
        result = await adapter(question.question)
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as exc:
        raise _exited(exc) from None
    return _to_record(question, result)


def _answer_sync(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    try:
        with _user_code():
            result = adapter(question.question)
        if inspect.isawaitable(result):  # a plain function that hands back a coroutine
            import asyncio

            result = asyncio.run_coroutine_threadsafe(_awaited(result), adapter_loop()).result()
    except (Exception, KeyboardInterrupt):
        # A KeyboardInterrupt it raises reaches the main thread, and stops the run like Ctrl-C.
        raise
    except BaseException as exc:  # SystemExit, GeneratorExit, a class of its own
        raise _exited(exc) from None
    return _to_record(question, result)


async def _awaited(awaitable: Any) -> Any:
    import asyncio

    try:
        return await awaitable
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as exc:
        raise _exited(exc) from None


class AdapterProgress(NamedTuple):
    """Progress events while producing a run."""

    question_id: str
    error: str | None
    done: int
    total: int


#: Default of ``data.adapter_timeout_s``: how long one question may take.
DEFAULT_ADAPTER_TIMEOUT_S = 300.0
NOT_ANSWERED = "not answered: the run was interrupted"


class AnswersInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while the adapter was being asked. ``run`` holds the answers given
    so far; the questions without one are in its ``failed``, so saved answers resume there."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run


def produce_run(
    spec: str,
    golden: GoldenSet,
    concurrency: int,
    on_progress: Callable[[AdapterProgress], None] = lambda _: None,
    search_dir: Path | None = None,
    timeout_s: float = DEFAULT_ADAPTER_TIMEOUT_S,
    adapter: Adapter | None = None,
) -> Run:
    """Ask the adapter every golden question; a question it fails is recorded, the rest go on.

    ``adapter``: the callable itself (the sweep builds one per setting); ``spec`` then only
    names it in the run's metadata. Unset, ``spec`` is imported (``load_adapter``).

    At most ``concurrency`` questions are in flight, each for at most ``timeout_s`` seconds: a
    question that takes longer is failed ("timed out after N s") and no longer waited for (an
    async call is cancelled; a plain function's thread cannot be stopped, so it is left to
    finish on its own, its result dropped, and another thread takes its place). The threads are
    daemon threads: one that never returns does not keep the process alive.

    The run is not validated here (see ``validate_run``): save it first, so that a bad chunk id
    in one answer does not throw away the adapter's work. On Ctrl-C nothing more is waited for:
    ``AnswersInterrupted`` carries the answers given so far.
    """
    if adapter is None:
        adapter = load_adapter(spec, search_dir)
    workers: Workers | None = None
    if _is_async(adapter):
        import asyncio

        loop = adapter_loop()

        def start(q: GoldenQuestion) -> concurrent.futures.Future[RunRecord]:
            coroutine: Coroutine[Any, Any, RunRecord] = _answer_async(adapter, q)
            return asyncio.run_coroutine_threadsafe(coroutine, loop)

    else:
        workers = Workers(concurrency, "judge-adapter")

        def start(q: GoldenQuestion) -> concurrent.futures.Future[RunRecord]:
            return workers.submit(_answer_sync, adapter, q)

    records: dict[str, RunRecord] = {}
    failed: dict[str, str] = {}
    running: dict[concurrent.futures.Future[RunRecord], tuple[str, float]] = {}
    queue = iter(golden.questions)
    total = len(golden.questions)

    def finished(qid: str, error: str | None) -> None:
        on_progress(AdapterProgress(qid, error, len(records) + len(failed), total))

    def fill() -> None:
        while len(running) < concurrency:
            q = next(queue, None)
            if q is None:
                return
            running[start(q)] = (q.id, time.monotonic() + timeout_s)

    try:
        fill()
        while running:
            first_deadline = min(deadline for _, deadline in running.values())
            done, _ = concurrent.futures.wait(
                running,
                timeout=max(0.0, first_deadline - time.monotonic()),
                return_when=concurrent.futures.FIRST_COMPLETED,
            )
            for future in done:
                qid, _ = running.pop(future)
                try:
                    records[qid] = future.result()
                    error = None
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # the user's code: any exception fails one question
                    error = failed[qid] = _failure(exc)
                finished(qid, error)
            now = time.monotonic()
            for future, (qid, deadline) in list(running.items()):
                if deadline <= now:
                    del running[future]
                    future.cancel()  # an async call is cancelled; a thread cannot be
                    if workers is not None:
                        workers.abandon(future)
                    error = failed[qid] = (
                        f"timed out after {timeout_s:g} s (data.adapter_timeout_s)"
                    )
                    finished(qid, error)
            fill()
    except KeyboardInterrupt:
        for q in golden.questions:
            if q.id not in records:
                failed.setdefault(q.id, NOT_ANSWERED)
        raise AnswersInterrupted(_run(spec, golden, records, failed)) from None
    finally:
        for future in running:
            future.cancel()
        if workers is not None:
            workers.shutdown()
    return _run(spec, golden, records, failed)


#: An adapter's error message is kept to this many characters: every failed question's message
#: goes into the header line of the saved run, which must stay readable (``MAX_RECORD_MB``).
MAX_ERROR_CHARS = 500


def _failure(exc: BaseException) -> str:
    """What a failed question's error says: one exception's type and message, shortened, with
    any half character (a lone surrogate) replaced, so that the saved run can be read back."""
    text = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def _run(
    spec: str, golden: GoldenSet, records: dict[str, RunRecord], failed: dict[str, str]
) -> Run:
    ordered = {q.id: records[q.id] for q in golden.questions if q.id in records}
    meta = RunMeta(system=spec, adapter=spec, created_at=datetime.now(UTC), failed=failed)
    return Run(meta, ordered)


# --- saved adapter runs ---------------------------------------------------------------------


class Answers(NamedTuple):
    """The adapter's answers for a golden set, and where they are kept."""

    run: Run
    path: Path
    reused: bool
    """True when saved answers were used instead of asking the adapter every question."""
    asked_again: int
    """Questions the saved answers lacked (the adapter had failed them) and that were asked again."""
    log: Path | None = None
    """What the adapter printed while it was asked this time (None: it printed nothing)."""

    def log_note(self) -> str | None:
        """The line that names the adapter's log, or None when it printed nothing."""
        return None if self.log is None else log_note(self.log)


def log_note(log: Path) -> str:
    """The warning line that names the adapter's log (what it printed while it was asked)."""
    return (
        f"the adapter printed to stdout or stderr while it was asked: kept in {log} "
        "(never shown here)"
    )


@contextmanager
def _asking(runs_dir: Path, stem: str) -> Iterator[AdapterLog]:
    """While the adapter is asked: its output to ``<runs_dir>/<stem>.log``."""
    with adapter_output(runs_dir / f"{stem}.log") as log:
        yield log


def _named(answers: Answers, log: AdapterLog, say: bool) -> Answers:
    """``answers`` with the adapter's log, when it wrote one, named; with ``say``, also said
    once as a warning line of the ``judge.inputs.adapter`` logger, which the CLI prints (a
    caller that shows ``log_note`` itself, as ``judge.pipeline.inputs`` does in its warnings,
    passes False, so the line is not printed twice)."""
    if not log.written:
        return answers
    named = answers._replace(log=log.path)
    if say:
        logger.warning(named.log_note())
    return named


def adapter_answers(
    spec: str,
    golden: GoldenSet,
    runs_dir: Path,
    concurrency: int,
    *,
    fresh: bool = False,
    on_progress: Callable[[AdapterProgress], None] = lambda _: None,
    search_dir: Path | None = None,
    timeout_s: float = DEFAULT_ADAPTER_TIMEOUT_S,
    adapter: Adapter | None = None,
    say_log: bool = True,
) -> Answers:
    """The newest valid saved answers of this adapter for this golden set and corpus, with the
    questions it failed asked again; or, with ``fresh`` or none saved, every question asked.

    What the adapter printed is in ``Answers.log``; ``say_log`` also says so as a logged
    warning (``_named``), for callers that show no line of their own (a sweep).

    Each question may take ``timeout_s`` seconds (``produce_run``; ``adapter`` as there). On Ctrl-C the answers given
    so far are saved (the questions not answered count as failed, so the next command asks only
    those) and ``Interrupted`` says where.
    """
    saved = None if fresh else saved_run(runs_dir, spec, golden)
    if saved is not None:
        run = load_run(saved, golden)
        if not run.meta.failed:
            return Answers(run, saved, True, 0)
    stamp = _stamp()
    with _asking(runs_dir, _run_prefix(spec, golden) + stamp) as log:
        if saved is None:
            try:
                run = produce_run(
                    spec, golden, concurrency, on_progress, search_dir, timeout_s, adapter
                )
            except AnswersInterrupted as stop:
                raise _interrupted(stop.run, stop.run, runs_dir, spec, golden, stamp) from None
            path = save_checked_run(run, runs_dir, spec, golden, stamp)
            answers = Answers(run, path, False, 0)
        else:
            missing = golden._replace(
                questions=tuple(q for q in golden.questions if q.id in run.meta.failed)
            )
            try:
                retry = produce_run(
                    spec, missing, concurrency, on_progress, search_dir, timeout_s, adapter
                )
            except AnswersInterrupted as stop:
                merged = _merged(run, stop.run, golden)
                raise _interrupted(merged, stop.run, runs_dir, spec, golden, stamp) from None
            merged = _merged(run, retry, golden)
            path = save_checked_run(merged, runs_dir, spec, golden, stamp)
            answers = Answers(merged, path, True, len(missing.questions))
    return _named(answers, log, say_log)


def _merged(saved: Run, retry: Run, golden: GoldenSet) -> Run:
    """Saved answers completed with those of a retry of the questions they lacked."""
    records = {**saved.records, **retry.records}
    return Run(
        saved.meta.model_copy(update={"failed": retry.meta.failed}),
        {q.id: records[q.id] for q in golden.questions if q.id in records},
    )


def _interrupted(
    run: Run, asked: Run, runs_dir: Path, spec: str, golden: GoldenSet, stamp: str | None = None
) -> BaseException:
    """Save what the adapter answered before Ctrl-C (``asked``: the questions asked this time);
    the exception that says so (a plain KeyboardInterrupt when there was nothing to save)."""
    answered = len(asked.records)
    if not answered:
        return KeyboardInterrupt()
    try:
        path = save_checked_run(run, runs_dir, spec, golden, stamp)
    except InputError as exc:  # kept as *.invalid.jsonl, never reused
        return Interrupted(f"the adapter was stopped; {exc.problems[-1]}")
    missing = len(run.meta.failed)
    return Interrupted(
        f"the adapter was stopped after {answered} answer(s), saved in {path}; the next command "
        f"asks it only the {missing} question(s) without an answer"
    )


def _run_prefix(spec: str, golden: GoldenSet) -> str:
    """File-name prefix of the runs one adapter produced for one golden set and corpus."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", spec).strip("_")
    return f"adapter-{slug}-{golden.questions_hash[3:11]}-{golden.corpus_hash[3:11]}-"


INVALID_SUFFIX = ".invalid.jsonl"


def saved_run(runs_dir: Path, spec: str, golden: GoldenSet) -> Path | None:
    """The newest valid run this adapter produced for this golden set and corpus, if any."""
    found = sorted(
        path
        for path in runs_dir.glob(_run_prefix(spec, golden) + "*.jsonl")
        if not path.name.endswith(INVALID_SUFFIX)
    )
    return found[-1] if found else None


def _stamp() -> str:
    """The time in a saved run's name (to the microsecond: sorted, the newest is last)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def save_checked_run(
    run: Run, runs_dir: Path, spec: str, golden: GoldenSet, stamp: str | None = None
) -> Path:
    """Validate an adapter-produced run and keep it either way: answers cost time and money.

    A valid run is saved for reuse; one that fails validation is saved as ``*.invalid.jsonl``
    (never reused) and the problems are raised, naming that file. ``stamp``: the time in its
    name (default now; ``adapter_answers`` gives the one of the adapter's log beside it).
    """
    runs_dir.mkdir(parents=True, exist_ok=True)
    path = runs_dir / f"{_run_prefix(spec, golden)}{stamp or _stamp()}.jsonl"
    invalid = path.with_name(path.name.removesuffix(".jsonl") + INVALID_SUFFIX)
    try:
        validate_run(run, golden, lambda qid: f"{invalid} (question '{qid}')")
    except InputError as exc:
        save_run(run, invalid)
        raise InputError(
            [
                *exc.problems,
                f"the answers are kept in {invalid} but never reused; fix the adapter and run "
                "again",
            ]
        ) from None
    save_run(run, path)
    return path
