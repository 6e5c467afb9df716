"""Runs: what the RAG system retrieved and answered for each golden question.

A run is either a JSONL file the user's system wrote (an optional ``{"run_meta": {...}}``
header line, then one record per question), or produced here by calling the user's
``module:function`` adapter for every question. Either way it is validated against the golden
set, and a produced run is saved so the report can be reproduced.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field, ValidationError, field_validator

from judge.errors import AdapterError, InputError
from judge.golden import Chunk, GoldenQuestion, GoldenSet
from judge.jsonl import (
    DEFAULT_MAX_FILE_MB,
    StrictRecord,
    describe_validation_error,
    parse_records,
    read_jsonl,
    write_jsonl,
)

JsonScalar = str | int | float | bool | None


class RunMeta(StrictRecord):
    """What produced the run; shown in reports so that two runs can be told apart."""

    system: str = "unknown"
    embedding_model: str | None = None
    embedding_version: str | None = None
    chunking: dict[str, JsonScalar] = Field(default_factory=dict)
    """Chunking settings, e.g. method, max_chars, overlap."""
    generator_model: str | None = None
    created_at: datetime | None = None
    notes: str | None = None
    adapter: str | None = None
    """The ``module:function`` that produced the run, when the harness produced it."""
    failed: dict[str, str] = Field(default_factory=dict)
    """Questions the adapter raised for: id → error. They are reported, not scored."""


class RetrievedChunk(StrictRecord):
    """One ranked retrieval result."""

    chunk_id: str = Field(min_length=1)
    score: float | None = None
    text: str | None = None
    """The text the generator saw; when absent it is taken from the corpus."""


class RunRecord(StrictRecord):
    """One question's retrieval results (best first) and the generated answer."""

    id: str = Field(min_length=1)
    retrieved: tuple[RetrievedChunk, ...]
    answer: str

    @field_validator("answer")
    @classmethod
    def _answer_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class _Header(StrictRecord):
    run_meta: RunMeta


class Run(NamedTuple):
    """A validated run."""

    meta: RunMeta
    records: dict[str, RunRecord]


class ContextChunk(NamedTuple):
    """A chunk as the generator (and therefore the judge) saw it."""

    rank: int
    chunk_id: str
    text: str


def context_for(record: RunRecord, corpus: dict[str, Chunk], context_k: int) -> list[ContextChunk]:
    """The top ``context_k`` chunks of ``record`` with their text, in rank order."""
    return [
        ContextChunk(rank, item.chunk_id, item.text or corpus[item.chunk_id].text)
        for rank, item in enumerate(record.retrieved[:context_k], start=1)
    ]


def validate_run(
    run: Run,
    golden: GoldenSet,
    where: Callable[[str], str] = lambda qid: qid,
    invalid_ids: frozenset[str] = frozenset(),
) -> None:
    """Check a run against the golden set; raise every problem at once.

    ``where(question_id)`` gives the location prefix for a record (``file:line`` for files);
    ``invalid_ids`` are records already reported as malformed (not reported again as missing).
    """
    problems = []
    golden_ids = {q.id for q in golden.questions}
    for qid, record in run.records.items():
        if qid not in golden_ids:
            problems.append(f"{where(qid)}: id: '{qid}' is not a golden question")
        seen: set[str] = set()
        for rank, item in enumerate(record.retrieved, start=1):
            if item.chunk_id in seen:
                problems.append(
                    f"{where(qid)}: retrieved: chunk '{item.chunk_id}' appears twice in the "
                    f"ranking for question '{qid}' (again at rank {rank})"
                )
            seen.add(item.chunk_id)
            if item.chunk_id not in golden.corpus:
                problems.append(
                    f"{where(qid)}: retrieved: chunk '{item.chunk_id}' (rank {rank}) "
                    "is not in the corpus"
                )
    accounted = run.records.keys() | run.meta.failed.keys() | invalid_ids
    missing = [q.id for q in golden.questions if q.id not in accounted]
    if missing:
        problems.append(
            f"the run has no record for {len(missing)} golden question(s): {', '.join(missing)}"
        )
    if problems:
        raise InputError(problems)


def load_run(path: Path, golden: GoldenSet, max_mb: float = DEFAULT_MAX_FILE_MB) -> Run:
    """Read a run file and validate it against the golden set."""
    lines = read_jsonl(path, max_mb)
    meta = RunMeta()
    if "run_meta" in lines[0].value:
        try:
            meta = _Header.model_validate(lines[0].value).run_meta
        except ValidationError as exc:
            raise InputError(
                [f"{path}:{lines[0].number}: {p}" for p in describe_validation_error(exc)]
            ) from None
        lines = lines[1:]
    problems: list[str] = []
    parsed = parse_records(path, lines, RunRecord, problems)
    records: dict[str, RunRecord] = {}
    line_of: dict[str, int] = {}
    for number, record in parsed:
        if record.id in records:
            problems.append(
                f"{path}:{number}: duplicate id '{record.id}' (first on line {line_of[record.id]})"
            )
            continue
        records[record.id] = record
        line_of[record.id] = number
    run = Run(meta, records)
    malformed = frozenset(str(line.value.get("id")) for line in lines) - records.keys()
    try:
        validate_run(run, golden, lambda qid: f"{path}:{line_of.get(qid, '?')}", malformed)
    except InputError as exc:
        problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return run


def save_run(run: Run, path: Path) -> None:
    """Write a run file (header line first) atomically."""
    header: dict[str, Any] = {"run_meta": run.meta.model_dump(mode="json", exclude_none=True)}
    write_jsonl(path, [header, *run.records.values()])


# --- Producing a run through the user's adapter -------------------------------------------


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


def _answer_one(adapter: Adapter, question: GoldenQuestion) -> RunRecord:
    result = adapter(question.question)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
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


async def _await(awaitable: Any) -> Any:
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
    started are cancelled (the ones in flight finish).
    """
    adapter = load_adapter(spec, search_dir)
    records: dict[str, RunRecord] = {}
    failed: dict[str, str] = {}
    pool = ThreadPoolExecutor(max_workers=concurrency)
    try:
        futures = {pool.submit(_answer_one, adapter, q): q.id for q in golden.questions}
        for done, future in enumerate(as_completed(futures), start=1):
            qid = futures[future]
            try:
                records[qid] = future.result()
                error = None
            except Exception as exc:  # the user's code: any exception is one failed question
                error = failed[qid] = f"{type(exc).__name__}: {exc}"
            on_progress(AdapterProgress(qid, error, done, len(futures)))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    ordered = {q.id: records[q.id] for q in golden.questions if q.id in records}
    meta = RunMeta(system=spec, adapter=spec, created_at=datetime.now(UTC), failed=failed)
    return Run(meta, ordered)
