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

An engine's answer becomes a ``Reply`` exactly as the ``openai`` backend reads a server's
(``judge.judging.backends.openai``): an error line (a prompt over the context, a refused
request) is a non-ok reply, reported and never stored, never a verdict.

With further judgements on (``judge.judging.tasks``: ``[judge.chunks]``, ...), the export
holds their pending requests too, each ``custom_id`` the item key after the task
(``chunk/h1:…``; an answer's is its key alone, as before), and the manifest records each
task's fingerprint (``BatchManifest.tasks``). The import stores each reply under its own
task's fingerprint, so the run after it asks nothing of any of them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from pydantic import Field

from judge.config import Config
from judge.errors import (
    BackendError,
    BackendRequestError,
    ConfigError,
    InputError,
    PromptTooLong,
)
from judge.formatting import timestamp
from judge.io.state import StateFile, read_json_document, write_json_document
from judge.io.text import StrictInt, StrictRecord, check_readable
from judge.io.write import claim_unique
from judge.judging.backends.openai import (
    completion_reply,
    error_message,
    openai_identity,
    refusal,
    request_body,
)
from judge.judging.cache import VerdictCache
from judge.judging.grading import Fingerprint, judge_fingerprint, task_label
from judge.judging.items import JudgeItem, build_items
from judge.judging.prompts import Prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.registry import FURTHER, enabled_tasks, load_task_prompt, task_named
from judge.judging.verdict import Reply, verdict_schema
from judge.pipeline.inputs import load_inputs
from judge.pipeline.session import TaskPlan, earlier_replies, task_plans
from judge.record.store import ReportsDir
from judge.results.tokens import Estimate, estimate

#: Bump when BatchManifest changes; it is the manifest's first field.
MANIFEST_FORMAT = 1
MANIFEST_NAME = "manifest.json"
REQUEST_URL = "/v1/chat/completions"
#: OpenAI's Batch API takes files of up to 200 MB and 50,000 requests; half the size by
#: default, so that a file also goes through older or stricter services (100 MB). The limit
#: of a request file this writes, not of an input file it reads (``data.max_file_mb``,
#: ``judge.io.text.DEFAULT_MAX_FILE_MB``).
BATCH_MAX_FILE_MB = 100.0
MAX_REQUESTS_PER_FILE = 50_000
#: Replies stored per transaction on import: one commit per chunk, not per row (a commit per
#: row costs more than reading the line), and a crash loses at most one chunk's work.
IMPORT_CHUNK_ROWS = 5_000


# --- the manifest --------------------------------------------------------------------------


class BatchFile(StrictRecord):
    """One request file of an export."""

    name: str
    """File name, in the manifest's folder."""
    lines: StrictInt
    bytes: StrictInt
    sha256: str


class BatchTask(StrictRecord):
    """One further judgement of an export: which judge configuration its replies belong to."""

    fingerprint: str
    fingerprint_parts: dict[str, Any]
    prompt: str


class BatchManifest(StrictRecord):
    """What an export holds and which judge it is for; written last (its presence means the
    export is complete) and read back by ``import_batch``."""

    format_version: StrictInt = MANIFEST_FORMAT
    created_at: str
    fingerprint: str
    """The judge fingerprint the engine's replies are stored under."""
    fingerprint_parts: dict[str, Any]
    model: str
    """``judge.openai.model``: the model the engine must serve under this name."""
    url: str = REQUEST_URL
    prompt: str
    golden_hash: str
    corpus_hash: str
    run_source: str
    context_k: StrictInt
    files: tuple[BatchFile, ...]
    items: dict[str, str] = Field(default_factory=dict)
    """Each request's ``custom_id`` (an answer's item key, or ``<task>/<item key>`` for a chunk
    grade, ...) → golden question id."""
    tasks: dict[str, BatchTask] = Field(default_factory=dict)
    """Per further judgement exported (``chunk``, ...): the fingerprint its replies
    are stored under (empty in an export of answers alone)."""


BATCH_MANIFEST_FILE = StateFile(
    what="batch manifest",
    remedy="export again with 'judge batch export'",
    current=MANIFEST_FORMAT,
    damaged="{where}: not a batch manifest ({problem}); {remedy}",
    invalid="{path}: not a batch manifest: {problem}",
    error=ConfigError,
)


def read_manifest(path: Path) -> BatchManifest:
    """Read and check a manifest written by ``export_batch`` (``judge.io.state``'s state-file
    reader: its limits, its format version, one line for any problem)."""
    if not path.exists():
        raise ConfigError(
            f"{path}: manifest not found; give the manifest.json that 'judge batch export' "
            "wrote with the requests (--manifest)"
        )
    return read_json_document(path, BatchManifest, BATCH_MANIFEST_FILE)


def current_fingerprint(config: Config) -> tuple[Fingerprint, Prompt]:
    """The fingerprint of the ``openai`` judge that ``config`` describes, with no server."""
    prompt = load_task_prompt(config.judge.prompt, ANSWER)
    return judge_fingerprint(openai_identity(config.judge.openai), prompt), prompt


def custom_id(task: str, key: str) -> str:
    """A request's ``custom_id``: an answer's item key, or the key after its task."""
    return key if task == "answer" else f"{task}/{key}"


def task_of(request_id: str) -> tuple[str, str]:
    """The task and the item key of a ``custom_id`` (``custom_id``'s inverse)."""
    for task in FURTHER:
        if request_id.startswith(f"{task.name}/"):
            return task.name, request_id[len(task.name) + 1 :]
    return "answer", request_id


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


def changed_parts(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Names of the fingerprint parts that differ (``options.max_tokens``, ``prompt_sha256``)."""
    changed = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            changed += changed_parts(a, b, f"{prefix}{key}.")
        else:
            changed.append(f"{prefix}{key}")
    return changed


# --- export --------------------------------------------------------------------------------


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


def _request_lines(
    items: Sequence[JudgeItem], prompt: Prompt, config: Config
) -> Iterator[tuple[JudgeItem, bytes]]:
    """Each item's request line, byte for byte ``json.dumps`` of ``{"custom_id", "method",
    "url", "body"}`` (compact, UTF-8).

    The line is the same for every item but for the key and the prompt: it is encoded once with
    placeholders, and each item's two strings are encoded into it (JSON encodes a value the
    same wherever it stands). Encoding the whole body, schema included, for every line took
    about as long as rendering the prompt. In ``sentences`` mode the schema depends on the
    answer (its sentence count), so each line is encoded whole.
    """
    if prompt.mode == "sentences":
        for item in items:
            body = request_body(
                config.judge.openai, prompt.render_item(item), prompt.request_schema(item)
            )
            request = {"custom_id": item.key, "method": "POST", "url": REQUEST_URL, "body": body}
            line = json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n"
            yield item, line.encode()
        return
    key_mark, text_mark = "\x00custom_id\x00", "\x00prompt\x00"
    template = json.dumps(
        {
            "custom_id": key_mark,
            "method": "POST",
            "url": REQUEST_URL,
            "body": request_body(config.judge.openai, text_mark, verdict_schema(prompt.mode)),
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    head, rest = template.split(json.dumps(key_mark))
    middle, tail = rest.split(json.dumps(text_mark))
    for item in items:
        text = prompt.render_item(item)
        line = (
            head
            + json.dumps(item.key)
            + middle
            + json.dumps(text, ensure_ascii=False)
            + tail
            + "\n"
        )
        yield item, line.encode()


def _task_items(
    plans: Sequence[TaskPlan], pending: dict[str, set[str]]
) -> Iterator[tuple[TaskPlan, Any]]:
    """(plan, item) of each pending further request, once per key, in the order they are
    written (the judgements in the registry's order; each in
    the run's order)."""
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
    """The request line of each pending further request (a chunk grade, ...): the body the ``openai`` backend would send for it (its prompt and its
    task's schema)."""
    for plan, item in _task_items(plans, pending):
        task, key, question_id = plan.task.name, item.key, item.question_id
        request = plan.task.request(plan.prompt, item)
        body = request_body(config.judge.openai, request.prompt, request.schema)
        line = {
            "custom_id": custom_id(task, key),
            "method": "POST",
            "url": REQUEST_URL,
            "body": body,
        }
        yield (
            question_id,
            (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode(),
        )


class _FileWriter:
    """Request files ``requests-0001.jsonl``, ... each written whole or not at all."""

    def __init__(self, out_dir: Path, max_bytes: int, max_lines: int) -> None:
        self.out_dir, self.max_bytes, self.max_lines = out_dir, max_bytes, max_lines
        self.done: list[BatchFile] = []
        self._handle: Any = None
        self._name = ""
        self._lines = self._bytes = 0
        self._hash = hashlib.sha256()

    def _tmp(self) -> Path:
        return self.out_dir / f".{self._name}.{os.getpid()}.tmp"

    def write(self, question_id: str, line: bytes) -> None:
        if len(line) > self.max_bytes:
            raise ConfigError(
                f"the request for question '{question_id}' alone is "
                f"{len(line) / 1024 / 1024:.1f} MB, over the file limit of "
                f"{self.max_bytes / 1024 / 1024:g} MB; raise --max-file-mb"
            )
        if self._handle is not None and (
            self._bytes + len(line) > self.max_bytes or self._lines >= self.max_lines
        ):
            self.close()
        if self._handle is None:
            self._name = f"requests-{len(self.done) + 1:04d}.jsonl"
            self._handle = self._tmp().open("wb")
            self._lines = self._bytes = 0
            self._hash = hashlib.sha256()
        self._handle.write(line)
        self._hash.update(line)
        self._lines += 1
        self._bytes += len(line)

    def close(self) -> None:
        if self._handle is None:
            return
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        self._handle = None
        os.replace(self._tmp(), self.out_dir / self._name)
        self.done.append(
            BatchFile(
                name=self._name,
                lines=self._lines,
                bytes=self._bytes,
                sha256=self._hash.hexdigest(),
            )
        )

    def abandon(self) -> None:
        """Remove every file written so far (the export failed or was interrupted)."""
        if self._handle is not None:
            self._handle.close()
            self._tmp().unlink(missing_ok=True)
            self._handle = None
        for done in self.done:
            (self.out_dir / done.name).unlink(missing_ok=True)
        self.done = []


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
    started = datetime.now(UTC)
    reports = ReportsDir(config.reports.dir)
    with reports.lock():  # as a run: an adapter is asked at most once at a time
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
        for item in items:  # replies are cached by item key alone: one request serves every twin
            unique.setdefault(item.key, item)
        pending = [item for item in unique.values() if item.key not in cached]
        earlier = earlier_replies(cache, fingerprint.parts) if pending else []
        pending_tasks: dict[str, set[str]] = {}
        counts: dict[str, tuple[int, int]] = {}
        for plan in plans:
            task, keys = plan.task.name, plan.keys
            held = cache.get_many(tasks[task][0].value, keys)
            pending_tasks[task] = {key for key in keys if key not in held}
            counts[task] = (len(pending_tasks[task]), len(keys))
    finally:
        cache.close()
    out = out_dir or default_out_dir(config, fingerprint.value, started)
    waiting = len(pending) + sum(n for n, _ in counts.values())
    everything = len(unique) + sum(n for _, n in counts.values())
    result = BatchExport(
        out_dir=out,
        manifest=None,
        files=(),
        pending=waiting,
        cached=everything - waiting,
        total=everything,
        fingerprint=fingerprint.value,
        warnings=inputs.warnings(with_labels=False),
        estimate=estimate(len(pending), len(unique), earlier),
        tasks=counts,
    )
    if not waiting:
        return result
    if out_dir is None:  # <time>-<fingerprint>, or -2, ... when another export had that name
        out = claim_unique(out.parent, out.name, folder=True)
        result = result._replace(out_dir=out)
    elif (out / MANIFEST_NAME).exists() or any(out.glob("requests-*.jsonl")):
        raise ConfigError(
            f"{out}: already holds a batch export; give another --out or remove the folder"
        )
    out.mkdir(parents=True, exist_ok=True)
    writer = _FileWriter(out, int(max_file_mb * 1024 * 1024), max_requests_per_file)
    try:
        for item, line in _request_lines(pending, prompt, config):
            writer.write(item.question.id, line)
        for question_id, line in _task_lines(plans, pending_tasks, config):
            writer.write(question_id, line)
        writer.close()
    except BaseException:
        writer.abandon()  # without its manifest an export is no export: none of it is left
        raise
    manifest = BatchManifest(
        created_at=started.isoformat(timespec="seconds"),
        fingerprint=fingerprint.value,
        fingerprint_parts=fingerprint.parts,
        model=config.judge.openai.model,
        prompt=str(prompt.path),
        golden_hash=inputs.golden.questions_hash,
        corpus_hash=inputs.golden.corpus_hash,
        run_source=inputs.run_source,
        context_k=config.retrieval.context_k,
        files=tuple(writer.done),
        items={item.key: item.question.id for item in pending}
        | {
            custom_id(plan.task.name, item.key): item.question_id
            for plan, item in _task_items(plans, pending_tasks)
        },
        tasks={
            task: BatchTask(
                fingerprint=tasks[task][0].value,
                fingerprint_parts=tasks[task][0].parts,
                prompt=str(tasks[task][1].path),
            )
            for task in counts
        },
    )
    path = out / MANIFEST_NAME
    write_json_document(path, manifest, BATCH_MANIFEST_FILE, indent=1)
    return result._replace(manifest=path, files=manifest.files)


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


def find_manifest(files: Sequence[Path]) -> Path:
    """The manifest beside the first output file (where an export puts it)."""
    if not files:
        raise ConfigError("no output files given; name the engine's output files to import")
    candidate = files[0].parent / MANIFEST_NAME
    if not candidate.is_file():
        raise ConfigError(
            f"no {MANIFEST_NAME} beside {files[0]}; give --manifest (the manifest.json that "
            "'judge batch export' wrote with the requests)"
        )
    return candidate


def engine_reply(line: dict[str, Any]) -> Reply:
    """The ``Reply`` of one output line of a batch engine, read as the ``openai`` backend reads
    a server's answer.

    Shapes: OpenAI's Batch output and error files and ``vllm run-batch``'s output:
    ``{"custom_id", "response": {"status_code", "body"} | null, "error": null | str | {...}}``.
    An error entry, an HTTP error status or a body without a completion is a non-ok reply:
    ``truncated`` when the engine says the prompt does not fit, else ``error``. Raises
    ``ValueError`` for a line of another shape.
    """
    response = line.get("response")
    if response is not None and not isinstance(response, dict):
        raise ValueError(f"'response' must be an object or null, not {type(response).__name__}")
    status = response.get("status_code", 200) if response else None
    if status is not None and type(status) is not int:
        raise ValueError(f"'response.status_code' must be an integer, not {status!r}")
    body = response.get("body") if response else None
    error = line.get("error")
    try:
        if error not in (None, "", {}) or response is None or (status or 0) >= 400:
            message = error_message(error if error not in (None, "", {}) else body)
            code = error.get("code") if isinstance(error, dict) else None
            if isinstance(code, str) and code not in message:
                message = f"{code}: {message}"
            if status is not None and status >= 400:
                raise refusal(status, message)
            # No HTTP status (an error file's line, or an error beside a 2xx): the words decide
            # whether the prompt did not fit, as they do for a refused request.
            failure = refusal(400, message)
            if isinstance(failure, PromptTooLong):
                raise failure
            raise BackendRequestError(f"the engine did not run the request: {message}")
        if isinstance(body, dict) and not body.get("choices") and body.get("error"):
            # An error body under a 2xx status: an engine that does not keep the status (Ray
            # Data's HTTP stage), where a table may also give every row both keys.
            raise refusal(400, error_message(body["error"]))
        return completion_reply(body)
    except PromptTooLong as exc:
        return Reply(kind="truncated", detail=str(exc))
    except BackendError as exc:
        return Reply(kind="error", detail=str(exc))


def _why_not_judged(reply: Reply) -> str:
    if reply.kind == "truncated":
        return (
            f"not judged: {reply.detail} (the prompt does not fit the model's context and is "
            "never cut: serve a longer context or shorten the context chunks)"
        )
    return (
        f"not judged: {reply.detail} (it stays pending: the next 'judge batch export' writes "
        "it again)"
    )


class _OutputReader:
    """One pass over the output files: the good replies ``chunk_rows`` at a time, every problem
    located, in file order.

    An item may have an error line and, later, a reply (the failed requests run again and
    imported with the first output): the reply is taken, and the error line is no longer a
    problem. A second line for an item that has its reply is one.
    """

    def __init__(self, manifest: BatchManifest, manifest_path: Path, chunk_rows: int) -> None:
        self.manifest = manifest
        self.requests = {(manifest_path.parent / f.name).resolve() for f in manifest.files}
        self.chunk_rows = chunk_rows
        self.lines = 0
        self.not_judged: dict[str, Reply] = {}
        self._problems: list[str | None] = []
        self._error_lines: dict[str, list[int]] = {}  # item key → its error problems' indices
        self._replied: dict[str, str] = {}  # item key → where its reply was

    @property
    def problems(self) -> list[str]:
        return [p for p in self._problems if p is not None]

    def chunks(self, files: Sequence[Path]) -> Iterator[list[tuple[str, str, Reply]]]:
        rows: list[tuple[str, str, Reply]] = []
        for path in files:
            if path.resolve() in self.requests:
                self._problems.append(
                    f"{path}: a request file of this export, not the engine's output; import "
                    "the files the engine wrote"
                )
                continue
            with path.open("rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    row = self._line(f"{path}:{number}", raw, first=number == 1)
                    if row is not None:
                        rows.append(row)
                        if len(rows) >= self.chunk_rows:
                            yield rows
                            rows = []
        yield rows

    def _line(self, where: str, raw: bytes, first: bool) -> tuple[str, str, Reply] | None:
        """The reply row of one line, or None (a blank line, or a problem recorded)."""
        try:
            text = raw.decode("utf-8-sig" if first else "utf-8")
        except UnicodeDecodeError as exc:
            self._problems.append(f"{where}: not UTF-8 (byte 0x{raw[exc.start]:02x})")
            return None
        if not text.strip():
            return None
        self.lines += 1
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            self._problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            return None
        except (RecursionError, ValueError):
            self._problems.append(f"{where}: not a batch output line (JSON too deep or long)")
            return None
        problem = self._check(value, where)
        if problem:
            self._problems.append(problem)
            return None
        key = value["custom_id"]
        qid = self.manifest.items[key]
        try:
            reply = engine_reply(value)
        except ValueError as exc:
            self._problems.append(f"{where}: {exc}")
            return None
        if reply.kind != "reply":
            self.not_judged[key] = reply
            self._error_lines.setdefault(key, []).append(len(self._problems))
            self._problems.append(f"{where}: question '{qid}' ({key}): {_why_not_judged(reply)}")
            return None
        self._replied[key] = where
        self.not_judged.pop(key, None)
        for index in self._error_lines.pop(key, []):
            self._problems[index] = None  # answered after all
        return key, qid, reply

    def _check(self, value: Any, where: str) -> str:
        """What is wrong with a parsed line before its reply is read ("" when nothing)."""
        if not isinstance(value, dict):
            return f"{where}: expected a JSON object, got {type(value).__name__}"
        key = value.get("custom_id")
        if "response" not in value and "error" not in value:
            if "body" in value and "method" in value:
                return f"{where}: a request line (method, url, body), not a result of the engine"
            return f"{where}: not a batch output line (no 'response' and no 'error')"
        if not isinstance(key, str):
            return f"{where}: 'custom_id' must be a string, not {json.dumps(key)[:40]}"
        if key not in self.manifest.items:
            return (
                f"{where}: custom_id '{key[:80]}' is not an item of this export; import each "
                "output with the manifest of the export it came from"
            )
        if key in self._replied:
            return (
                f"{where}: custom_id '{key}' again (first answered at {self._replied[key]}); "
                "the first is kept"
            )
        return ""


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
    unreadable = []
    for path in unique:
        try:
            check_readable(path, config.data.max_file_mb)
        except InputError as exc:
            unreadable += exc.problems
            continue
        if path.stat().st_size == 0:  # never "0 lines": an output that is not there
            unreadable.append(
                f"{path}: the file is empty (0 bytes), not a batch engine's output; import the "
                "files the engine wrote (a download or a copy cut short leaves an empty file)"
            )
    if unreadable:
        raise InputError(unreadable)
    fingerprint, prompt = current_fingerprint(config)
    tasks = task_fingerprints(config, list(loaded.tasks))
    reader = _OutputReader(loaded, manifest_path, chunk_rows)
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
    if refusals:
        for _ in reader.chunks(unique):
            pass  # every bad line is reported too; nothing is written
        raise InputError([*refusals, *reader.problems])
    cache = VerdictCache(config.judge.cache_path)
    try:
        identity = openai_identity(config.judge.openai)
        prints: dict[str, str] = {"answer": fingerprint.value}
        cache.register(fingerprint.value, fingerprint.parts, task_label(identity, prompt))
        for task, (task_print, task_prompt) in tasks.items():
            cache.register(task_print.value, task_print.parts, task_label(identity, task_prompt))
            prints[task] = task_print.value
        imported = offered = 0
        for rows in reader.chunks(unique):
            by_task: dict[str, list[tuple[str, str, Reply]]] = {}
            for request_id, question_id, reply in rows:
                task, key = task_of(request_id)
                by_task.setdefault(task, []).append((key, question_id, reply))
            for task, task_rows in by_task.items():
                imported += cache.put_many(prints[task], task_rows)
                offered += len(task_rows)
        held = {task: cache.cached_keys(value) for task, value in prints.items()}
        still_pending = sum(key not in held[task] for task, key in map(task_of, loaded.items))
    finally:
        cache.close()
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
