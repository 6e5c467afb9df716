"""The OpenAI batch format that ``judge batch export|import`` writes and reads: request lines
(``{"custom_id", "method", "url", "body"}``, the body the ``openai`` backend would send), the
``custom_id`` scheme, the request files and the export's manifest.

``custom_id`` is an answer's item key, or ``<task>/<item key>`` for a further judgement
(``chunk/h1:…``). Request files ``requests-0001.jsonl``, ... are each written whole or not at
all, and the manifest is written last, so that an export without its manifest is no export.
Reading an engine's output back is ``judge.judging.backends.openai_batch_output``; what is
pending and where replies are stored is the wiring's (``judge.pipeline.batch``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from judge.config_backends import OpenAIConfig
from judge.errors import ConfigError
from judge.io.state import StateFile, read_json_document
from judge.io.text import StrictInt, StrictRecord
from judge.judging.backends.openai import request_body
from judge.judging.items import JudgeItem
from judge.judging.prompts import Prompt
from judge.judging.verdict import verdict_schema

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


# --- the requests --------------------------------------------------------------------------


def custom_id(task: str, key: str) -> str:
    """A request's ``custom_id``: an answer's item key, or the key after its task."""
    return key if task == "answer" else f"{task}/{key}"


def task_of(request_id: str, tasks: Collection[str]) -> tuple[str, str]:
    """The task and the item key of a ``custom_id`` (``custom_id``'s inverse), given the names
    of the further judgements it may be for (an export's: its manifest's ``tasks``)."""
    for task in tasks:
        if request_id.startswith(f"{task}/"):
            return task, request_id[len(task) + 1 :]
    return "answer", request_id


def request_line(
    config: OpenAIConfig, request_id: str, prompt: str, schema: dict[str, Any]
) -> bytes:
    """One request line, byte for byte ``json.dumps`` of ``{"custom_id", "method", "url",
    "body"}`` (compact, UTF-8, newline-ended): the body the ``openai`` backend would send."""
    body = request_body(config, prompt, schema)
    request = {"custom_id": request_id, "method": "POST", "url": REQUEST_URL, "body": body}
    return (json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def answer_lines(
    items: Sequence[JudgeItem], prompt: Prompt, config: OpenAIConfig
) -> Iterator[tuple[JudgeItem, bytes]]:
    """Each item's answer request line, as ``request_line`` writes it (``custom_id`` = the item
    key).

    The line is the same for every item but for the key and the prompt: it is encoded once with
    placeholders, and each item's two strings are encoded into it (JSON encodes a value the
    same wherever it stands). Encoding the whole body, schema included, for every line took
    about as long as rendering the prompt; the prompt comes JSON-encoded from
    ``Prompt.render_json``, its template and chunks encoded once, not per line. In
    ``sentences`` mode the schema depends on the answer (its sentence count), so each line is
    encoded whole.
    """
    if prompt.mode == "sentences":
        for item in items:
            text, schema = prompt.render_item(item), prompt.request_schema(item)
            yield item, request_line(config, item.key, text, schema)
        return
    key_mark, text_mark = "\x00custom_id\x00", "\x00prompt\x00"
    template = request_line(config, key_mark, text_mark, verdict_schema(prompt.mode)).decode()
    head, rest = template.split(json.dumps(key_mark))
    middle, tail = rest.split(json.dumps(text_mark))
    key_json = json.encoder.encode_basestring_ascii  # json.dumps of a str, without its overhead
    for item in items:
        parts = (head, key_json(item.key), middle, prompt.render_item_json(item), tail)
        yield item, "".join(parts).encode()


#: Bytes buffered before a request file is written to: a request line is a few kB.
WRITE_BUFFER = 1 << 20


class RequestFiles:
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
            # A 1 MB buffer: 8 KB (the default) made a system call every two lines, half
            # the cost of writing 100,000 requests (docs/benchmarks.md).
            self._handle = self._tmp().open("wb", buffering=WRITE_BUFFER)
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
