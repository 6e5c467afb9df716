"""The batch path: pending judge calls out to a batch engine, its answers back into the cache.

``export_batch`` does what a run does up to the judge (``judge.pipeline``: inputs, items, the
cache lookup) and writes the items the cache lacks as OpenAI Batch JSONL: one request a line,
``custom_id`` = the item key, the body the ``openai`` backend would send for it. Any engine that
reads that format runs them (``vllm run-batch``, an OpenAI-compatible batch service, a Ray Data
job): see docs/batch.md. ``import_batch`` reads the engine's output files into the verdict
cache under the same fingerprint, so the next ``judge run --backend openai`` finds every reply
there and judges nothing.

The fingerprint is that of ``judge.openai`` and the prompt, computed without a server (no
OpenAI-compatible server reports a model digest, so nothing a server says goes into it). The
manifest written with the requests records it; an import under a configuration that no longer
gives it is refused, since its replies were made by another judge.

The format (request lines, ``custom_id``, request files, the manifest) is
``judge.judging.backends.openai_batch``, beside the backend that speaks it; reading an engine's
output is ``judge.judging.backends.openai_batch_output``: an engine's answer becomes a ``Reply``
exactly as the ``openai`` backend reads a server's (an error line, a prompt over the context or
a refused request, is a non-ok reply, reported and never stored, never a verdict). This module
is the wiring: what is pending, where the files go, what is stored under which fingerprint.

With further judgements on (``judge.judging.tasks``: ``[judge.chunks]``, ...), the export
holds their pending requests too, each ``custom_id`` the item key after the task
(``chunk/h1:…``; an answer's is its key alone, as before), and the manifest records each
task's fingerprint (``BatchManifest.tasks``). The import stores each reply under its own
task's fingerprint, so the run after it asks nothing of any of them.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.formatting import timestamp
from judge.io.state import write_json_document
from judge.io.write import claim_unique
from judge.judging.backends.openai import openai_identity
from judge.judging.backends.openai_batch import (
    BATCH_MANIFEST_FILE,
    BATCH_MAX_FILE_MB,
    MANIFEST_NAME,
    MAX_REQUESTS_PER_FILE,
    BatchFile,
    BatchManifest,
    BatchTask,
    RequestFiles,
    answer_lines,
    changed_parts,
    custom_id,
    find_manifest,
    read_manifest,
    request_line,
    task_of,
)
from judge.judging.backends.openai_batch_output import OutputReader, unreadable_outputs
from judge.judging.cache import VerdictCache
from judge.judging.grading import Fingerprint, judge_fingerprint, task_label
from judge.judging.items import JudgeItem, build_items
from judge.judging.prompts import Prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.registry import enabled_tasks, load_task_prompt, task_named
from judge.judging.verdict import Reply
from judge.pipeline.inputs import Inputs, load_inputs
from judge.pipeline.session import TaskPlan, earlier_replies, task_plans
from judge.record.store import ReportsDir
from judge.results.tokens import Estimate, estimate

#: Replies stored per transaction on import: one commit per chunk, not per row (a commit per
#: row costs more than reading the line), and a crash loses at most one chunk's work.
IMPORT_CHUNK_ROWS = 5_000


# --- the judge the requests are for --------------------------------------------------------


def current_fingerprint(config: Config) -> tuple[Fingerprint, Prompt]:
    """The fingerprint of the ``openai`` judge that ``config`` describes, with no server."""
    prompt = load_task_prompt(config.judge.prompt, ANSWER)
    return judge_fingerprint(openai_identity(config.judge.openai), prompt), prompt


def task_fingerprints(
    config: Config, tasks: Sequence[str]
) -> dict[str, tuple[Fingerprint, Prompt]]:
    """The fingerprint of each of ``tasks`` for the ``openai`` judge ``config`` describes, with
    its prompt (``judge.chunks.prompt``, ...), with no server."""
    identity = openai_identity(config.judge.openai)
    out: dict[str, tuple[Fingerprint, Prompt]] = {}
    for name in tasks:
        task = task_named(name)
        prompt = load_task_prompt(task.settings(config).prompt, task)
        out[name] = (task.fingerprint(identity, prompt), prompt)
    return out


# --- export --------------------------------------------------------------------------------


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while an export builds and writes its requests: what
    it allocates (the inputs, the items, their prompts) lives until the export ends, so every
    collection would only walk it again; at 100,000 items the collections were a sixth of the
    export's CPU (docs/benchmarks.md). Reference counting still frees what is dropped, and the
    collector is on again, as it was, when the export ends or fails."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class BatchExport(NamedTuple):
    """What ``export_batch`` wrote (no files and no manifest when nothing was pending)."""

    out_dir: Path
    manifest: Path | None
    files: tuple[BatchFile, ...]
    pending: int
    """Items written (one request each)."""
    cached: int
    """Items already in the cache for this judge configuration (not written)."""
    total: int
    fingerprint: str
    warnings: list[str]
    """What a run would warn about these inputs (leaks, reused answers, failed questions)."""
    estimate: Estimate | None = None
    """What the pending requests should cost, at the rate of this judge's earlier replies in
    the cache (``judge.results.tokens``): their tokens, and the time one request at a time
    would take (a batch engine's own pace is its own). The answers' requests only."""
    tasks: Mapping[str, tuple[int, int]] = MappingProxyType({})
    """Per further judgement exported (``chunk``, ...): its pending and total
    requests (counted in ``pending``, ``cached`` and ``total`` too)."""

    @property
    def paths(self) -> list[Path]:
        return [self.out_dir / f.name for f in self.files]


def default_out_dir(config: Config, fingerprint: str, now: datetime) -> Path:
    """``reports/batch/<UTC time>-<fingerprint digits>``: one folder per export."""
    return config.reports.dir / "batch" / f"{timestamp(now)}-{fingerprint.split(':')[-1][:8]}"


def _task_items(
    plans: Sequence[TaskPlan], pending: dict[str, set[str]]
) -> Iterator[tuple[TaskPlan, Any]]:
    """(plan, item) of each pending further request, once per key, in the order they are
    written (the judgements in the registry's order; each in the run's order)."""
    seen: set[tuple[str, str]] = set()
    for plan in plans:
        waiting = pending.get(plan.task.name, set())
        for item in plan.items:
            if item.key in waiting and (plan.task.name, item.key) not in seen:
                seen.add((plan.task.name, item.key))
                yield plan, item


def _task_lines(
    plans: Sequence[TaskPlan], pending: dict[str, set[str]], config: Config
) -> Iterator[tuple[str, bytes]]:
    """The request line of each pending further request (a chunk grade, ...): the body the
    ``openai`` backend would send for it (its prompt and its task's schema)."""
    for plan, item in _task_items(plans, pending):
        request = plan.task.request(plan.prompt, item)
        request_id = custom_id(plan.task.name, item.key)
        line = request_line(config.judge.openai, request_id, request.prompt, request.schema)
        yield item.question_id, line


class _Pending(NamedTuple):
    """What an export found: the judge, the inputs and, per judgement, what the cache lacks."""

    fingerprint: Fingerprint
    prompt: Prompt
    tasks: dict[str, tuple[Fingerprint, Prompt]]
    inputs: Inputs
    plans: list[TaskPlan]
    unique: dict[str, JudgeItem]
    """The answers' items by key: replies are cached by item key alone, so one request serves
    every twin."""
    answers: list[JudgeItem]
    """The answers' items the cache lacks."""
    earlier: list[Any]
    further: dict[str, set[str]]
    """Per further judgement, the item keys the cache lacks."""
    counts: dict[str, tuple[int, int]]

    @property
    def waiting(self) -> int:
        return len(self.answers) + sum(n for n, _ in self.counts.values())

    @property
    def everything(self) -> int:
        return len(self.unique) + sum(n for _, n in self.counts.values())


def _find_pending(config: Config, run_path: Path | None) -> _Pending:
    """The items a run on these inputs would judge, and which of them the cache lacks."""
    with ReportsDir(config.reports.dir).lock():  # as a run: an adapter is asked once at a time
        fingerprint, prompt = current_fingerprint(config)
        on = enabled_tasks(config)  # the judgements that are on, checked for their task
        identity = openai_identity(config.judge.openai)
        tasks = {task.name: (task.fingerprint(identity, p), p) for task, p in on}
        inputs = load_inputs(config, run_path, with_labels=False)
        items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
        plans = task_plans(config, on, inputs.golden, inputs.run)
    cache = VerdictCache(config.judge.cache_path)
    try:
        # get_many, as a run looks replies up: an unreadable row is pending here too.
        cached = cache.get_many(fingerprint.value, (item.key for item in items))
        unique: dict[str, JudgeItem] = {}
        for item in items:
            unique.setdefault(item.key, item)
        answers = [item for item in unique.values() if item.key not in cached]
        earlier = earlier_replies(cache, fingerprint.parts) if answers else []
        further: dict[str, set[str]] = {}
        counts: dict[str, tuple[int, int]] = {}
        for plan in plans:
            task, keys = plan.task.name, plan.keys
            held = cache.get_many(tasks[task][0].value, keys)
            further[task] = {key for key in keys if key not in held}
            counts[task] = (len(further[task]), len(keys))
    finally:
        cache.close()
    return _Pending(
        fingerprint, prompt, tasks, inputs, plans, unique, answers, earlier, further, counts
    )


def _claim_out(out_dir: Path | None, out: Path) -> Path:
    """The folder to write into: ``out`` (the default, or -2, ... when another export had that
    name), or ``out_dir`` when it holds no export already."""
    if out_dir is None:  # <time>-<fingerprint>, or -2, ... when another export had that name
        return claim_unique(out.parent, out.name, folder=True)
    if (out / MANIFEST_NAME).exists() or any(out.glob("requests-*.jsonl")):
        raise ConfigError(
            f"{out}: already holds a batch export; give another --out or remove the folder"
        )
    return out


def _write_requests(
    out: Path, found: _Pending, config: Config, max_bytes: int, max_lines: int
) -> tuple[BatchFile, ...]:
    """The request files of every pending request, each whole; none of them on any failure."""
    out.mkdir(parents=True, exist_ok=True)
    writer = RequestFiles(out, max_bytes, max_lines)
    try:
        for item, line in answer_lines(found.answers, found.prompt, config.judge.openai):
            writer.write(item.question.id, line)
        for question_id, line in _task_lines(found.plans, found.further, config):
            writer.write(question_id, line)
        writer.close()
    except BaseException:
        writer.abandon()  # without its manifest an export is no export: none of it is left
        raise
    return tuple(writer.done)


def _manifest(
    config: Config, found: _Pending, files: tuple[BatchFile, ...], started: datetime
) -> BatchManifest:
    """The manifest of an export: its judge, its inputs, its files and its requests."""
    return BatchManifest(
        created_at=started.isoformat(timespec="seconds"),
        fingerprint=found.fingerprint.value,
        fingerprint_parts=found.fingerprint.parts,
        model=config.judge.openai.model,
        prompt=str(found.prompt.path),
        golden_hash=found.inputs.golden.questions_hash,
        corpus_hash=found.inputs.golden.corpus_hash,
        run_source=found.inputs.run_source,
        context_k=config.retrieval.context_k,
        files=files,
        items={item.key: item.question.id for item in found.answers}
        | {
            custom_id(plan.task.name, item.key): item.question_id
            for plan, item in _task_items(found.plans, found.further)
        },
        tasks={
            task: BatchTask(
                fingerprint=found.tasks[task][0].value,
                fingerprint_parts=found.tasks[task][0].parts,
                prompt=str(found.tasks[task][1].path),
            )
            for task in found.counts
        },
    )


def export_batch(
    config: Config,
    out_dir: Path | None = None,
    *,
    max_file_mb: float = BATCH_MAX_FILE_MB,
    max_requests_per_file: int = MAX_REQUESTS_PER_FILE,
    run_path: Path | None = None,
) -> BatchExport:
    """Write the items not yet in the cache for the ``openai`` judge as OpenAI Batch JSONL.

    One line per item, ``{"custom_id": <item key>, "method": "POST", "url":
    "/v1/chat/completions", "body": <what the openai backend sends>}``, in files of at most
    ``max_file_mb`` MB and ``max_requests_per_file`` lines, then ``manifest.json``. Items are
    those a ``judge run`` on the same inputs would judge (``run_path`` overrides ``data.run``
    as ``--run`` does); two questions with the same item key are one request. ``out_dir``
    (default ``reports/batch/<time>-<fingerprint>``) must not hold an export already. Nothing
    is written when nothing is pending.
    """
    if not max_file_mb > 0:
        raise ConfigError(f"--max-file-mb must be more than 0, not {max_file_mb:g}")
    if max_requests_per_file < 1:
        raise ConfigError(f"a file must hold at least one request, not {max_requests_per_file}")
    # Not with an adapter: it runs the user's code (their RAG system), whose garbage is theirs.
    from_file = run_path is not None or config.data.run is not None
    with _collector_paused() if from_file else nullcontext():
        return _export(config, out_dir, max_file_mb, max_requests_per_file, run_path)


def _export(
    config: Config,
    out_dir: Path | None,
    max_file_mb: float,
    max_requests_per_file: int,
    run_path: Path | None,
) -> BatchExport:
    """``export_batch``'s work, its arguments checked."""
    started = datetime.now(UTC)
    found = _find_pending(config, run_path)
    out = out_dir or default_out_dir(config, found.fingerprint.value, started)
    result = BatchExport(
        out_dir=out,
        manifest=None,
        files=(),
        pending=found.waiting,
        cached=found.everything - found.waiting,
        total=found.everything,
        fingerprint=found.fingerprint.value,
        warnings=found.inputs.warnings(with_labels=False),
        estimate=estimate(len(found.answers), len(found.unique), found.earlier),
        tasks=found.counts,
    )
    if not found.waiting:
        return result
    out = _claim_out(out_dir, out)
    max_bytes = int(max_file_mb * 1024 * 1024)
    files = _write_requests(out, found, config, max_bytes, max_requests_per_file)
    manifest = _manifest(config, found, files, started)
    path = out / MANIFEST_NAME
    write_json_document(path, manifest, BATCH_MANIFEST_FILE, indent=1)
    return result._replace(out_dir=out, manifest=path, files=manifest.files)


# --- import --------------------------------------------------------------------------------


class BatchImport(NamedTuple):
    """What ``import_batch`` did. ``problems`` lists every bad line, located (``file:line:``),
    in file order; the good lines were imported all the same."""

    manifest: Path
    fingerprint: str
    lines: int
    """Result lines read (blank lines aside)."""
    imported: int
    """Replies new to the cache."""
    already: int
    """Replies for items the cache already held (kept as they were)."""
    not_judged: dict[str, Reply]
    """Item key → the non-ok reply of an engine's error line (stored nowhere, never a verdict:
    ``truncated`` for a prompt over the context, else ``error``)."""
    problems: list[str]
    still_pending: int
    """Items of the export without a reply in the cache after this import."""


def _refusals(
    manifest_path: Path,
    loaded: BatchManifest,
    fingerprint: Fingerprint,
    tasks: dict[str, tuple[Fingerprint, Prompt]],
) -> list[str]:
    """Why the replies may not be stored: the configuration no longer gives the fingerprint
    the answers, or a further judgement, were exported for (empty when it does)."""
    refusals = []
    if fingerprint.value != loaded.fingerprint:
        changed = changed_parts(loaded.fingerprint_parts, fingerprint.parts)
        refusals.append(
            f"{manifest_path}: exported for judge configuration {loaded.fingerprint}, but "
            f"judge.openai and the prompt now give {fingerprint.value} (changed: "
            f"{', '.join(changed) or 'the fingerprint recipe'}); the replies were made by "
            "another judge: import them under the configuration they were exported with, "
            "or export again"
        )
    for task, exported in loaded.tasks.items():
        now = tasks[task][0]
        if now.value != exported.fingerprint:
            changed = changed_parts(exported.fingerprint_parts, now.parts)
            refusals.append(
                f"{manifest_path}: its {task} requests were exported for judge configuration "
                f"{exported.fingerprint}, but judge.openai and {exported.prompt} now give "
                f"{now.value} (changed: {', '.join(changed) or 'the fingerprint recipe'}); "
                "import them under the configuration they were exported with, or export again"
            )
    return refusals


def _store(
    config: Config,
    loaded: BatchManifest,
    reader: OutputReader,
    files: Sequence[Path],
    judges: dict[str, tuple[Fingerprint, Prompt]],
) -> tuple[int, int, int]:
    """Store every good reply under its task's fingerprint (``judges``: the answers' and each
    further judgement's), one transaction per chunk: (new replies, replies offered, items of
    the export still without a reply)."""
    cache = VerdictCache(config.judge.cache_path)
    try:
        identity = openai_identity(config.judge.openai)
        prints: dict[str, str] = {}
        for task, (task_print, task_prompt) in judges.items():
            cache.register(task_print.value, task_print.parts, task_label(identity, task_prompt))
            prints[task] = task_print.value
        imported = offered = 0
        for rows in reader.chunks(files):
            by_task: dict[str, list[tuple[str, str, Reply]]] = {}
            for request_id, question_id, reply in rows:
                task, key = task_of(request_id, loaded.tasks)
                by_task.setdefault(task, []).append((key, question_id, reply))
            for task, task_rows in by_task.items():
                imported += cache.put_many(prints[task], task_rows)
                offered += len(task_rows)
        held = {task: cache.cached_keys(value) for task, value in prints.items()}
        ids = (task_of(request_id, loaded.tasks) for request_id in loaded.items)
        still_pending = sum(key not in held[task] for task, key in ids)
    finally:
        cache.close()
    return imported, offered, still_pending


def import_batch(
    config: Config,
    files: Sequence[Path],
    manifest: Path | None = None,
    *,
    chunk_rows: int = IMPORT_CHUNK_ROWS,
) -> BatchImport:
    """Read a batch engine's output files into the verdict cache.

    ``manifest`` defaults to the ``manifest.json`` beside the first file. Every line is checked:
    a malformed line, an unknown or repeated ``custom_id``, an engine's error entry: each is a
    located problem in the result, and the good lines are imported all the same. Idempotent
    (a reply already cached is kept; importing twice changes nothing) and resumable (one
    transaction per ``chunk_rows`` replies: a crash keeps whole chunks, and importing again
    completes). Raises ``InputError``, writing nothing, when a file cannot be read (an empty,
    0-byte file included: no engine writes one) or when the configuration no longer gives the
    manifest's fingerprint (then with every bad line too).
    """
    manifest_path = manifest or find_manifest(files)
    loaded = read_manifest(manifest_path)
    unique = list(dict.fromkeys(Path(os.path.abspath(f)) for f in files))
    unreadable = unreadable_outputs(unique, config.data.max_file_mb)
    if unreadable:
        raise InputError(unreadable)
    fingerprint, prompt = current_fingerprint(config)
    tasks = task_fingerprints(config, list(loaded.tasks))
    reader = OutputReader(loaded, manifest_path, chunk_rows)
    refusals = _refusals(manifest_path, loaded, fingerprint, tasks)
    if refusals:
        for _ in reader.chunks(unique):
            pass  # every bad line is reported too; nothing is written
        raise InputError([*refusals, *reader.problems])
    judges = {"answer": (fingerprint, prompt), **tasks}
    imported, offered, still_pending = _store(config, loaded, reader, unique, judges)
    return BatchImport(
        manifest=manifest_path,
        fingerprint=fingerprint.value,
        lines=reader.lines,
        imported=imported,
        already=offered - imported,
        not_judged=reader.not_judged,
        problems=reader.problems,
        still_pending=still_pending,
    )
