"""Producing a run by asking the user's ``module:function`` adapter every golden question.

An adapter takes the question text and returns ``{"retrieved": [...], "answer": "..."}`` (a
dict or a pydantic model). It may be a plain function, run on a thread pool, or an
``async def``, run on one event loop that lives as long as the process: an adapter that keeps
one module-level async client (``httpx.AsyncClient``, an OpenAI client) therefore sees the same
loop on every question and every later call. Either way at most ``concurrency`` questions are
in flight, and a question the adapter fails is recorded in ``run_meta.failed`` while the rest
go on.

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
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from judge.errors import AdapterError, InputError
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
from judge.jsonl import StrictRecord, describe_validation_error


class AdapterOutput(StrictRecord):
    """What an adapter returns for one question (a dict with these keys, or this model)."""

    retrieved: tuple[RetrievedChunk | str, ...]
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
    except Exception as exc:
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
    except ValidationError as exc:
        raise ValueError(
            "returned "
            + "; ".join(describe_validation_error(exc))
            + " (expected {'retrieved': [...], 'answer': '...'})"
        ) from None
    retrieved = tuple(
        RetrievedChunk(chunk_id=item) if isinstance(item, str) else item
        for item in output.retrieved
    )
    return RunRecord(id=question.id, retrieved=retrieved, answer=output.answer)


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


async def _answer_async(
    adapter: Adapter, question: GoldenQuestion, slots: asyncio.Semaphore
) -> RunRecord:
    async with slots:
        try:
            result = await adapter(question.question)
        except (KeyboardInterrupt, SystemExit) as exc:
            # Escaping the task, these would stop the loop's thread and leave every waiter
            # hanging: the adapter's own exit is one failed question, like any exception.
            raise RuntimeError(f"the adapter raised {type(exc).__name__}({exc})") from None
        return _to_record(question, result)


def _answer_sync(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    result = adapter(question.question)
    if inspect.isawaitable(result):  # a plain function that hands back a coroutine
        result = asyncio.run_coroutine_threadsafe(_awaited(result), adapter_loop()).result()
    return _to_record(question, result)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


class AdapterProgress(NamedTuple):
    """Progress events while producing a run."""

    question_id: str
    error: str | None
    done: int
    total: int


def produce_run(
    spec: str,
    golden: GoldenSet,
    concurrency: int,
    on_progress: Callable[[AdapterProgress], None] = lambda _: None,
    search_dir: Path | None = None,
) -> Run:
    """Ask the adapter every golden question; a question it fails is recorded, the rest go on.

    The run is not validated here (see ``validate_run``): save it first, so that a bad chunk id
    in one answer does not throw away the adapter's work. On Ctrl-C the questions not yet
    started are cancelled.
    """
    adapter = load_adapter(spec, search_dir)
    futures: dict[concurrent.futures.Future[RunRecord], str] = {}
    pool: concurrent.futures.ThreadPoolExecutor | None = None
    if _is_async(adapter):
        loop = adapter_loop()
        slots = asyncio.Semaphore(concurrency)  # binds to the loop at first use
        for q in golden.questions:
            coroutine: Coroutine[Any, Any, RunRecord] = _answer_async(adapter, q, slots)
            futures[asyncio.run_coroutine_threadsafe(coroutine, loop)] = q.id
    else:
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency)
        futures = {pool.submit(_answer_sync, adapter, q): q.id for q in golden.questions}
    records: dict[str, RunRecord] = {}
    failed: dict[str, str] = {}
    try:
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            qid = futures[future]
            try:
                records[qid] = future.result()
                error = None
            except Exception as exc:  # the user's code: any exception is one failed question
                error = failed[qid] = f"{type(exc).__name__}: {exc}"
            on_progress(AdapterProgress(qid, error, done, len(futures)))
    finally:
        for future in futures:
            future.cancel()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
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
) -> Answers:
    """The newest valid saved answers of this adapter for this golden set and corpus, with the
    questions it failed asked again; or, with ``fresh`` or none saved, every question asked."""
    saved = None if fresh else saved_run(runs_dir, spec, golden)
    if saved is None:
        run = produce_run(spec, golden, concurrency, on_progress, search_dir)
        return Answers(run, save_checked_run(run, runs_dir, spec, golden), False, 0)
    run = load_run(saved, golden)
    if not run.meta.failed:
        return Answers(run, saved, True, 0)
    missing = golden._replace(
        questions=tuple(q for q in golden.questions if q.id in run.meta.failed)
    )
    retry = produce_run(spec, missing, concurrency, on_progress, search_dir)
    records = {**run.records, **retry.records}
    merged = Run(
        run.meta.model_copy(update={"failed": retry.meta.failed}),
        {q.id: records[q.id] for q in golden.questions if q.id in records},
    )
    path = save_checked_run(merged, runs_dir, spec, golden)
    return Answers(merged, path, True, len(missing.questions))


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
