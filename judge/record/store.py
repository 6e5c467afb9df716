"""Report folders and the reports directory that holds them: the one module that opens a
folder's files (``manifest.json``, ``report.json``, ``values.json``, ``verdicts.jsonl``) and
writes them, and the encoder of the record's own JSON files (``record_json``, ``values_json``).
The views render the other files (``judge.report.files``, a layer above, which takes the
record's two from here); the wiring hands every file here as text or bytes, and this module
writes them without importing the views.

``reports/`` (``reports.dir``) holds:

- ``<UTC time>-<judge fingerprint>/``  one folder per judged run (``ReportFolder``), assembled under
  a temporary name and renamed into place when complete, so a crash never leaves a
  half-written folder that looks finished;
- ``history.jsonl``  one summary line per run (``judge.results.history``);
- ``latest``         the name of the newest folder;
- ``runs/``          runs produced by the adapter (``judge.inputs.adapter``);
- ``.lock``          held while a run writes here (``judge.io.lock``).

A folder holds ``manifest.json`` (``judge.results.manifest``), ``report.json`` (the run record,
``judge.record.model``, whose rows reference their item and verdict), ``items.jsonl`` (what the
judge saw, ``ItemRecord``, its chunks by id), ``chunks.jsonl`` (each chunk text once),
``verdicts.jsonl`` (``judge.record.lines``: each text once), ``run.jsonl`` (the judged run) and
the other rendered files (``judge.report``). This module is the only place that resolves, reads
and writes them; ``tests/test_layering.py`` checks that no other module names the two JSON
files. A file whose bytes would not change is not written again (``write_changed``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import PydanticSerializationError

from judge.errors import ConfigError
from judge.formatting import terminal_text, timestamp
from judge.io.jsonl import jsonl_text
from judge.io.lock import run_lock
from judge.io.state import (
    StateFile,
    checked_document_text,
    checked_size,
    json_document_text,
    read_json_document,
    read_pointer,
    validate_document,
    write_pointer,
)
from judge.io.write import write_changed
from judge.judging.types import Verdict
from judge.record.lines import (
    CHUNKS_FILE,
    ITEMS_FILE,
    VERDICTS_FILE,
    encodable,
    join_rows,
    model_json_bytes,
    share_fields_sets,
)
from judge.record.lines import read_verdicts as _read_verdicts
from judge.record.model import Record, _from_the_first_gate, _Plain
from judge.results.compare import SECTIONS, MetricValues, QuestionValues, Section
from judge.results.gate import Gate
from judge.results.history import HistoryEntry, append_history, read_history
from judge.results.item_record import ItemRecord
from judge.results.manifest import FORMAT_VERSION, MANIFEST_FILE, Manifest, upgrade_older_format

#: ``reports/latest``: the name of the newest report folder.
LATEST_FILE = StateFile(
    what="latest-run pointer",
    remedy="it holds the name of the newest report folder: write one of 'ls reports' into it, "
    "or delete it and run 'judge run'",
    error=ConfigError,
)


#: ``report.json``: the run record, of the manifest's format version (read by
#: ``read_record``, written by ``record_json``).
REPORT_FILE = StateFile(
    what="report.json",
    remedy="write it again with 'judge report FOLDER' (from the folder's run and the cache)",
    current=FORMAT_VERSION,
    upgrade=upgrade_older_format,
    error=ConfigError,
)

#: ``values.json``: the run's values question by question (``Record.values``), kept apart from
#: the record so that later runs' comparisons (the last run, the season's twenty) read a few
#: numbers per question instead of validating whole records.
VALUES_FILE = StateFile(
    what="values.json",
    remedy="write it again with 'judge report FOLDER' (from the folder's run and the cache)",
    current=FORMAT_VERSION,
    upgrade=upgrade_older_format,
    error=ConfigError,
)


#: A folder's files to write: name → text (or UTF-8 bytes), or (name, text) pairs.
Files = Mapping[str, str | bytes] | Iterable[tuple[str, str | bytes]]


class SavedValues(BaseModel):
    """``values.json``: ``QuestionValues`` as a document of its own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: int = FORMAT_VERSION
    types: dict[str, str]
    values: dict[Section, MetricValues]
    answers: dict[str, str] = {}
    """Question id → its answer's digest (the season counts a kept answer once); absent in
    files written before it was kept."""

    def question_values(self) -> QuestionValues:
        values = {s: self.values.get(s, {}) for s in SECTIONS}
        return QuestionValues(dict(self.types), values, dict(self.answers))


def values_json(record: Record) -> str:
    """``values.json`` of a record (checked by the one writer's rules, as report.json)."""
    values = record.values()
    # Built from the record's own typed values, not read: nothing to validate (reading it back
    # does, and checked_document_text below reads it back).
    saved = SavedValues.model_construct(
        types=values.types, values=dict(values.values), answers=dict(values.answers)
    )
    return checked_document_text(
        saved.model_dump_json() + "\n", VALUES_FILE, record.manifest.folder
    )


class ReportFolder:
    """One report folder: its manifest and records, read on demand."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._record: Record | None = None

    @property
    def name(self) -> str:
        return self.path.name

    @cached_property
    def manifest(self) -> Manifest:
        return read_manifest(self.path)

    def record(self) -> Record:
        """The folder's run record (``report.json``), read once: every command that opens a
        saved run reads it through here."""
        if self._record is None:
            self._record = read_record(self.path)
        return self._record

    def values(self) -> QuestionValues:
        """The run's values question by question (``values.json``; a folder without one, from
        earlier in this format, from its record): what later runs are compared with."""
        path = self.path / "values.json"
        if not path.exists():
            return self.record().values()
        return read_json_document(path, SavedValues, VALUES_FILE).question_values()

    def items(self) -> dict[str, ItemRecord]:
        """What the judge saw, by question id, in golden-set order (from the record)."""
        return {item.question_id: item for item in self.record().items}

    def verdicts(self) -> dict[str, Verdict]:
        """The verdicts by question id, in golden-set order (from the record)."""
        return {v.question_id: v for v in self.record().verdicts}

    @property
    def run_path(self) -> Path:
        return self.path / "run.jsonl"

    def write_files(self, files: Files) -> list[str]:
        """Write (or rewrite) files of this folder, each whole: write, then rename; a file
        that already holds those bytes is left as it is (``judge report`` of an intact folder
        writes nothing). ``files``: name → text, or (name, text) pairs, each written before
        the next is asked for (``judge.report.files.folder_files`` renders them one at a
        time). The names of the files written."""
        pairs = files.items() if isinstance(files, Mapping) else files
        return [name for name, text in pairs if write_changed(self.path / name, text)]


class ReportsDir:
    """The reports directory: its folders, history, ``latest`` pointer and lock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def history_path(self) -> Path:
        return self.path / "history.jsonl"

    @property
    def runs_dir(self) -> Path:
        """Where adapter-produced runs are kept."""
        return self.path / "runs"

    @contextmanager
    def lock(self, wait_s: float = 0.0) -> Iterator[None]:
        """Held while a run writes here: one run at a time (a second waits up to ``wait_s``
        seconds for the first, then is refused: ``judge.io.lock.run_lock``)."""
        with run_lock(self.path, wait_s):
            yield

    def folder(self, name: str | None) -> ReportFolder:
        """A report folder from a path, a folder name, or None for the latest run.

        Its manifest is read (and its format version checked) here, so a folder that cannot be
        used is refused before anything else happens.
        """
        if name is None or name == "latest":
            latest = self.path / "latest"
            if not latest.exists():
                raise ConfigError(f"no runs in {self.path} yet; run 'judge run' first")
            name = self._inside(latest, read_pointer(latest, LATEST_FILE))
        for candidate in (Path(name), self.path / name):
            if (candidate / "manifest.json").is_file():
                folder = ReportFolder(candidate)
                folder.manifest  # noqa: B018 (read now: a wrong format fails here, in one line)
                return folder
        raise ConfigError(f"{name}: not a report folder (no manifest.json); see 'ls {self.path}'")

    def _inside(self, latest: Path, name: str) -> str:
        """The folder name ``latest`` holds, when it names a folder of this reports directory;
        anything else (``../elsewhere``, an absolute path, a link out of it) refused in one
        line: the pointer is written by a run, and a run's folder is always in here."""
        target = self.path / name
        inside = (
            name not in ("", ".", "..")
            and Path(name).name == name
            and "\\" not in name
            and target.resolve().parent == self.path.resolve()
        )
        if not inside:
            shown = terminal_text(name[:120], one_line=True)
            raise ConfigError(
                f"{latest}: names '{shown}', which is not a report folder in {self.path}; "
                "it must hold the name of one (the newest run's): run 'judge run' to write it "
                "again, or give the folder explicitly"
            )
        return name

    def history(self) -> list[HistoryEntry]:
        return read_history(self.history_path)

    def history_entry(self, folder: ReportFolder) -> HistoryEntry:
        """The history line of a report folder."""
        for entry in self.history():
            if entry.folder == folder.name:
                return entry
        raise ConfigError(f"{folder.name} is not in {self.history_path}")

    def new_folder_name(
        self, fingerprint: str, now: datetime, history: list[HistoryEntry] | None = None
    ) -> str:
        """A name for a new folder; ``history``: the history as the caller read it (read here
        when not given)."""
        stamp = timestamp(now)
        name = f"{stamp}-{fingerprint.split(':')[1][:8]}"
        # Two runs in one second with the same judge; or a deleted folder whose history line
        # remains (a second line of the same name would make comparisons ambiguous).
        taken = {entry.folder for entry in (self.history() if history is None else history)}
        candidate, suffix = name, 2
        while (self.path / candidate).exists() or candidate in taken:
            candidate, suffix = f"{name}-{suffix}", suffix + 1
        return candidate

    def publish(self, name: str, files: Files, entry: HistoryEntry) -> ReportFolder:
        """Write a new folder atomically, then its history line and the ``latest`` pointer.

        Called with the lock held: a partial folder found here belongs to a run that died
        while writing, and is removed.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        for stale in self.path.glob(".*.partial"):
            shutil.rmtree(stale, ignore_errors=True)
        final = self.path / name
        tmp = self.path / f".{name}.{os.getpid()}.partial"
        tmp.mkdir()
        try:
            ReportFolder(tmp).write_files(files)  # rendered as they are written
        except BaseException:  # a file that could not be rendered: no half folder is left
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        os.replace(tmp, final)
        append_history(self.history_path, entry)
        write_pointer(self.path / "latest", name, LATEST_FILE)
        return ReportFolder(final)


def read_manifest(folder: Path) -> Manifest:
    """A folder's manifest; another format version or a damaged file is one clear error."""
    return read_json_document(folder / "manifest.json", Manifest, MANIFEST_FILE)


def read_record(folder: Path) -> Record:
    """A report folder's ``report.json`` as the record it was written from: the one reader of
    it (limits, format version and fields checked; one located line on any problem). Its
    rows' items and verdicts are the lines of ``items.jsonl`` and ``verdicts.jsonl`` they
    reference, the chunk texts those of ``chunks.jsonl`` (``judge.record.lines``; a folder of
    format 3 or 2 holds them in its rows)."""
    path = folder / "report.json"
    value = read_json_document(path, None, REPORT_FILE)
    join_rows(folder, value.get("questions"), path)
    record = validate_document(path, value, Record, REPORT_FILE)
    share_fields_sets(_row_models(record))
    return record


def _row_models(record: Record) -> Iterator[BaseModel]:
    """The models each row of ``record`` holds (the row, its verdict and the verdict's match):
    what ``share_fields_sets`` makes lighter, per question."""
    for row in record.questions:
        yield row
        if row.verdict is not None:
            yield row.verdict
            if row.verdict.match is not None:
                yield row.verdict.match


class _GateOnly(BaseModel):
    """The gate of a ``report.json``, the rest of the record left unvalidated (``read_gate``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    format_version: int
    gate: Annotated[Gate, _Plain]

    @field_validator("gate", mode="before")
    @classmethod
    def _as_today(cls, value: Any) -> Any:
        # Only the gate's part of the conversion: a validator of the whole object would have
        # pydantic build every row as Python objects, which is what this reader avoids.
        return _from_the_first_gate({"gate": value})["gate"]


def read_gate(folder: Path) -> Gate:
    """A report folder's gate (``report.json``'s), for a later run's notes of the falls that
    ended, without validating the record's rows (ten times the time, for what these notes do not
    read). pydantic-core parses the bytes and builds only the gate: it refuses what
    ``parse_json`` refuses (``judge.io.jsonl``'s fast path relies on the same); a file of
    another format version, or that it cannot read, goes the careful way (``read_json_document``,
    as ``read_record``: the same checks and the same located line)."""
    path = folder / "report.json"
    try:
        if path.is_file() and path.stat().st_size <= REPORT_FILE.max_mb * 1024 * 1024:
            fast = _GateOnly.model_validate_json(path.read_bytes())
            if fast.format_version == FORMAT_VERSION:
                return fast.gate
    except (ValidationError, OSError):
        pass
    return read_json_document(path, _GateOnly, REPORT_FILE).gate


def read_saved_verdicts(folder: Path) -> dict[str, Verdict]:
    """A folder's ``verdicts.jsonl`` (the record's verdicts, one a line) by question id: what
    ``judge report`` keeps for a verdict whose reply is no longer in the cache, read even when
    the rendered files (``report.json`` among them) are damaged."""
    return _read_verdicts(folder)


def record_files(record: Record) -> dict[str, bytes]:
    """The record's own files, UTF-8 as pydantic's serializer makes them: ``report.json``
    (``record_json``), ``items.jsonl``,
    ``chunks.jsonl`` and ``verdicts.jsonl`` (``judge.record.lines``: each text once)."""
    lines = encodable((row.item, row.verdict) for row in record.questions)
    if lines is None:  # half a UTF-16 character: the JSONL writer says which, in one line
        items, verdicts = jsonl_text(record.items), jsonl_text(record.verdicts)
        files = {ITEMS_FILE: items.encode("utf-8"), VERDICTS_FILE: verdicts.encode("utf-8")}
    else:
        files = {ITEMS_FILE: lines.items, CHUNKS_FILE: lines.chunks, VERDICTS_FILE: lines.verdicts}
    return {REPORT_FILE.what: record_json(record), **files}


def record_json(record: Record) -> bytes:
    """``report.json`` (UTF-8): the record as pydantic's serializer writes it, compact (one line:
    ``jq .`` indents it; indented, a 10,000-question file was 37 MB instead of 27 and took a
    tenth longer to write), with what follows from it for machines (``Record.derived_*``, after the record's own keys);
    refused, like every state file, when its own reader would refuse it.

    The one writer's rules (``checked_document_text``) check everything but the rows by reading
    it back: that is where JSON of a shape the record does not fix can be (the fingerprints'
    parts, the run's metadata) and so an integer the reader would refuse. A row holds only
    typed fields of fixed depth (``tests/record/test_model.py`` keeps it so), each value read under
    the same limits, so reading 10,000 rows back would prove nothing more; the whole file is
    still measured against the size limit, and half a UTF-16 character anywhere fails the
    encoding (then ``json_document_text`` says which, in one line).
    """
    where = record.manifest.folder
    try:
        data = (
            model_json_bytes(record, by_alias=True, exclude={"questions": _referenced(record)})
            + b"\n"
        )
        head = model_json_bytes(record, by_alias=True, exclude={"questions"}).decode("utf-8")
    except PydanticSerializationError:  # half a UTF-16 character, too deep: the writer says which
        return json_document_text(record, REPORT_FILE, where, by_alias=True).encode("utf-8")
    checked_document_text(head, REPORT_FILE, where)
    return checked_size(data, REPORT_FILE, where)


def _referenced(record: Record) -> dict[int, set[str]]:
    """Per row, the fields ``report.json`` leaves out because ``items.jsonl`` and
    ``verdicts.jsonl`` hold them (``judge.record.lines.question_lines``): a row's verdict,
    and its item beside a verdict. A row without a verdict keeps both (null, or the item)."""
    return {
        index: {"item", "verdict"} if row.item is not None else {"verdict"}
        for index, row in enumerate(record.questions)
        if row.verdict is not None
    }
