"""Producing a run by asking the user's ``module:function`` adapter every golden question.

An adapter takes the question text and returns ``{"retrieved": [...], "answer": "..."}`` (a
dict or a pydantic model). It may be a plain function, run on a thread pool, or an
``async def``, run on the process's one adapter event loop (``judge.inputs.user_code``, which
also contains what the user's code raises and prints). Either way at most ``concurrency``
questions are in flight, and a question the adapter fails (an exception, the wrong shape, its
own ``sys.exit()``, or no answer within ``data.adapter_timeout_s``) is recorded in
``run_meta.failed`` while the rest go on.

Answers cost time and money and a generator need not be deterministic, so a produced run is
saved under ``reports/runs/`` (``save_checked_run``), and later commands reuse the newest valid
one for the same adapter, golden set and corpus instead of asking again; only the questions the
adapter failed are asked again (``adapter_answers``).
"""

from __future__ import annotations

import concurrent.futures
import inspect
import logging
import re
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from judge.errors import InputError, Interrupted
from judge.inputs.golden import GoldenQuestion, GoldenSet
from judge.inputs.provenance import adapter_meta, produced_meta
from judge.inputs.runs import (
    RetrievedChunk,
    Run,
    RunMeta,
    RunRecord,
    load_run,
    save_run,
    validate_run,
)
from judge.inputs.user_code import (
    Adapter,
    AdapterLog,
    adapter_loop,
    adapter_output,
    awaited,
    exited,
    failure_text,
    is_async,
    load_adapter,
    user_code,
)
from judge.io.jsonl import record_problem
from judge.io.text import Id, StrictRecord
from judge.io.validation import describe_validation_error
from judge.signals import Workers


class AdapterOutput(StrictRecord):
    """What an adapter returns for one question (a dict with these keys, or this model)."""

    retrieved: tuple[RetrievedChunk | Id, ...]
    """Ranked chunks, best first: chunk ids, or dicts with chunk_id, score, text."""
    answer: str


logger = logging.getLogger(__name__)


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


async def _answer_async(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    # The adapter may be a function a factory built (not contained by load_adapter): any
    # BaseException but the harness's cancellation is one failed question (``exited``).
    import asyncio

    try:
        result = await adapter(question.question)
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as exc:
        raise exited(exc) from None
    return _to_record(question, result)


def _answer_sync(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    try:
        with user_code():
            result = adapter(question.question)
        if inspect.isawaitable(result):  # a plain function that hands back a coroutine
            import asyncio

            result = asyncio.run_coroutine_threadsafe(awaited(result), adapter_loop()).result()
    except (Exception, KeyboardInterrupt):
        # A KeyboardInterrupt it raises reaches the main thread, and stops the run like Ctrl-C.
        raise
    except BaseException as exc:  # SystemExit, GeneratorExit, a class of its own
        raise exited(exc) from None
    return _to_record(question, result)


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
    stated = adapter_meta(spec, adapter)  # a malformed one fails before anything is asked
    start, workers = _starter(adapter, concurrency)
    asking = _Asking(start, workers, golden, concurrency, timeout_s, on_progress)
    try:
        asking.fill()
        while asking.running:
            asking.step()
    except KeyboardInterrupt:
        for q in golden.questions:
            if q.id not in asking.records:
                asking.failed.setdefault(q.id, NOT_ANSWERED)
        raise AnswersInterrupted(
            _run(spec, golden, asking.records, asking.failed, stated)
        ) from None
    finally:
        asking.close()
    return _run(spec, golden, asking.records, asking.failed, stated)


#: Starts asking the adapter one question; the future holds its record (or its exception).
_Start = Callable[[GoldenQuestion], concurrent.futures.Future[RunRecord]]


def _starter(adapter: Adapter, concurrency: int) -> tuple[_Start, Workers | None]:
    """How a question is started: on the adapter event loop (an async adapter), or on one of
    ``concurrency`` worker threads (a plain function), with those workers."""
    if is_async(adapter):
        import asyncio

        loop = adapter_loop()

        def start(q: GoldenQuestion) -> concurrent.futures.Future[RunRecord]:
            coroutine: Coroutine[Any, Any, RunRecord] = _answer_async(adapter, q)
            return asyncio.run_coroutine_threadsafe(coroutine, loop)

        return start, None
    workers = Workers(concurrency, "judge-adapter")

    def start_on_a_thread(q: GoldenQuestion) -> concurrent.futures.Future[RunRecord]:
        return workers.submit(_answer_sync, adapter, q)

    return start_on_a_thread, workers


class _Asking:
    """One production of a run: the questions in flight with their deadlines, the answers and
    failures so far, a progress event for each question done."""

    def __init__(
        self,
        start: _Start,
        workers: Workers | None,
        golden: GoldenSet,
        concurrency: int,
        timeout_s: float,
        on_progress: Callable[[AdapterProgress], None],
    ) -> None:
        self.start = start
        self.workers = workers
        self.queue = iter(golden.questions)
        self.total = len(golden.questions)
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.on_progress = on_progress
        self.records: dict[str, RunRecord] = {}
        self.failed: dict[str, str] = {}
        self.running: dict[concurrent.futures.Future[RunRecord], tuple[str, float]] = {}

    def fill(self) -> None:
        """Start questions until ``concurrency`` are in flight or none is left."""
        while len(self.running) < self.concurrency:
            q = next(self.queue, None)
            if q is None:
                return
            self.running[self.start(q)] = (q.id, time.monotonic() + self.timeout_s)

    def step(self) -> None:
        """Wait for a question to finish or the first deadline; take what finished, fail what
        is past its deadline, and start as many questions as that freed."""
        first_deadline = min(deadline for _, deadline in self.running.values())
        done, _ = concurrent.futures.wait(
            self.running,
            timeout=max(0.0, first_deadline - time.monotonic()),
            return_when=concurrent.futures.FIRST_COMPLETED,
        )
        for future in done:
            self._take(future)
        self._expire()
        self.fill()

    def _take(self, future: concurrent.futures.Future[RunRecord]) -> None:
        """A finished question: its record, or (any exception of the user's code) its failure."""
        qid, _ = self.running.pop(future)
        try:
            self.records[qid] = future.result()
            error = None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the user's code: any exception fails one question
            error = self.failed[qid] = failure_text(exc)
        self._finished(qid, error)

    def _expire(self) -> None:
        """Fail every question past its deadline and stop waiting for it."""
        now = time.monotonic()
        for future, (qid, deadline) in list(self.running.items()):
            if deadline <= now:
                del self.running[future]
                future.cancel()  # an async call is cancelled; a thread cannot be
                if self.workers is not None:
                    self.workers.abandon(future)
                error = self.failed[qid] = (
                    f"timed out after {self.timeout_s:g} s (data.adapter_timeout_s)"
                )
                self._finished(qid, error)

    def _finished(self, qid: str, error: str | None) -> None:
        self.on_progress(
            AdapterProgress(qid, error, len(self.records) + len(self.failed), self.total)
        )

    def close(self) -> None:
        """Stop waiting: cancel what is still in flight and let the worker threads go."""
        for future in self.running:
            future.cancel()
        if self.workers is not None:
            self.workers.shutdown()


def _run(
    spec: str,
    golden: GoldenSet,
    records: dict[str, RunRecord],
    failed: dict[str, str],
    stated: RunMeta | None = None,
) -> Run:
    ordered = {q.id: records[q.id] for q in golden.questions if q.id in records}
    return Run(produced_meta(spec, stated, failed), ordered)


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
