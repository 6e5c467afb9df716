"""Producing a run by asking the user's ``module:function`` adapter every golden question.

An adapter takes the question text and returns ``{"retrieved": [...], "answer": "..."}`` (a
dict or a pydantic model). It may be a plain function, run on a thread pool, or an
``async def``, run on one event loop that lives as long as the process: an adapter that keeps
one module-level async client (``httpx.AsyncClient``, an OpenAI client) therefore sees the same
loop on every question and every later call. Either way at most ``concurrency`` questions are
in flight, and a question the adapter fails (an exception, the wrong shape, its own
``sys.exit()``, or no answer within ``data.adapter_timeout_s``) is recorded in
``run_meta.failed`` while the rest go on.

Answers cost time and money and a generator need not be deterministic, so a produced run is
saved under ``reports/runs/`` (``save_checked_run``), and later commands reuse the newest valid
one for the same adapter, golden set and corpus instead of asking again; only the questions the
adapter failed are asked again (``adapter_answers``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import inspect
import re
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

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
from judge.jsonl import Id, StrictRecord, describe_validation_error, record_problem
from judge.signals import Workers


class AdapterOutput(StrictRecord):
    """What an adapter returns for one question (a dict with these keys, or this model)."""

    retrieved: tuple[RetrievedChunk | Id, ...]
    """Ranked chunks, best first: chunk ids, or dicts with chunk_id, score, text."""
    answer: str


Adapter = Callable[[str], Any]


def load_adapter(spec: str, search_dir: Path | None = None) -> Adapter:
    """Import ``module:function`` from ``search_dir`` (the config's folder) or the Python path."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AdapterError(f"adapter '{spec}': expected 'module:function', e.g. 'my_rag:answer'")
    if search_dir is not None and str(search_dir) not in sys.path:
        sys.path.insert(0, str(search_dir))
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # a module that calls sys.exit() on import
        raise AdapterError(f"adapter '{spec}': cannot import '{module_name}': {exc}") from exc
    function = getattr(module, attribute, None)
    if not callable(function):
        raise AdapterError(f"adapter '{spec}': '{module_name}' has no callable '{attribute}'")
    return function  # type: ignore[no-any-return]


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
    # every later command that reuses the answers would stop on it (judge.jsonl.read_jsonl).
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


def _exited(exc: BaseException) -> RuntimeError:
    # SystemExit (or, in the event loop, KeyboardInterrupt) raised by the adapter's own code:
    # escaping a worker it would end the harness (sys.exit(0): exit 0 and no message) or stop
    # the loop's thread and leave every waiter hanging. The adapter's own exit is one failed
    # question.
    return RuntimeError(f"the adapter raised {type(exc).__name__}({exc})")


async def _answer_async(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    try:
        result = await adapter(question.question)
    except (KeyboardInterrupt, SystemExit) as exc:
        raise _exited(exc) from None
    return _to_record(question, result)


def _answer_sync(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    try:
        result = adapter(question.question)
        if inspect.isawaitable(result):  # a plain function that hands back a coroutine
            result = asyncio.run_coroutine_threadsafe(_awaited(result), adapter_loop()).result()
    except SystemExit as exc:
        raise _exited(exc) from None
    # A KeyboardInterrupt it raises reaches the main thread, and stops the run like Ctrl-C.
    return _to_record(question, result)


async def _awaited(awaitable: Any) -> Any:
    try:
        return await awaitable
    except (KeyboardInterrupt, SystemExit) as exc:
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
                except Exception as exc:  # the user's code: any exception is one failed question
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


def _failure(exc: Exception) -> str:
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
) -> Answers:
    """The newest valid saved answers of this adapter for this golden set and corpus, with the
    questions it failed asked again; or, with ``fresh`` or none saved, every question asked.

    Each question may take ``timeout_s`` seconds (``produce_run``; ``adapter`` as there). On Ctrl-C the answers given
    so far are saved (the questions not answered count as failed, so the next command asks only
    those) and ``Interrupted`` says where.
    """
    saved = None if fresh else saved_run(runs_dir, spec, golden)
    if saved is None:
        try:
            run = produce_run(
                spec, golden, concurrency, on_progress, search_dir, timeout_s, adapter
            )
        except AnswersInterrupted as stop:
            raise _interrupted(stop.run, stop.run, runs_dir, spec, golden) from None
        return Answers(run, save_checked_run(run, runs_dir, spec, golden), False, 0)
    run = load_run(saved, golden)
    if not run.meta.failed:
        return Answers(run, saved, True, 0)
    missing = golden._replace(
        questions=tuple(q for q in golden.questions if q.id in run.meta.failed)
    )
    try:
        retry = produce_run(spec, missing, concurrency, on_progress, search_dir, timeout_s, adapter)
    except AnswersInterrupted as stop:
        raise _interrupted(
            _merged(run, stop.run, golden), stop.run, runs_dir, spec, golden
        ) from None
    merged = _merged(run, retry, golden)
    path = save_checked_run(merged, runs_dir, spec, golden)
    return Answers(merged, path, True, len(missing.questions))


def _merged(saved: Run, retry: Run, golden: GoldenSet) -> Run:
    """Saved answers completed with those of a retry of the questions they lacked."""
    records = {**saved.records, **retry.records}
    return Run(
        saved.meta.model_copy(update={"failed": retry.meta.failed}),
        {q.id: records[q.id] for q in golden.questions if q.id in records},
    )


def _interrupted(
    run: Run, asked: Run, runs_dir: Path, spec: str, golden: GoldenSet
) -> BaseException:
    """Save what the adapter answered before Ctrl-C (``asked``: the questions asked this time);
    the exception that says so (a plain KeyboardInterrupt when there was nothing to save)."""
    answered = len(asked.records)
    if not answered:
        return KeyboardInterrupt()
    try:
        path = save_checked_run(run, runs_dir, spec, golden)
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


def save_checked_run(run: Run, runs_dir: Path, spec: str, golden: GoldenSet) -> Path:
    """Validate an adapter-produced run and keep it either way: answers cost time and money.

    A valid run is saved for reuse; one that fails validation is saved as ``*.invalid.jsonl``
    (never reused) and the problems are raised, naming that file.
    """
    runs_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    path = runs_dir / f"{_run_prefix(spec, golden)}{stamp}.jsonl"
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
