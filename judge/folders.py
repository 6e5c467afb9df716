"""Report folders and the reports directory that holds them: the one module that opens a
folder's files (``manifest.json``, ``report.json``, ``verdicts.jsonl``) and writes them.

``reports/`` (``reports.dir``) holds:

- ``<UTC time>-<judge fingerprint>/``  one folder per judged run (``ReportFolder``), assembled under
  a temporary name and renamed into place when complete, so a crash never leaves a
  half-written folder that looks finished;
- ``history.jsonl``  one summary line per run (``judge.results.history``);
- ``latest``         the name of the newest folder;
- ``runs/``          runs produced by the adapter (``judge.inputs.adapter``);
- ``.lock``          held while a run writes here (``judge.io.lock``).

A folder holds ``manifest.json`` (``judge.results.manifest``), ``report.json`` (the run record,
``judge.record``), ``items.jsonl`` (what the judge saw, ``ItemRecord``), ``verdicts.jsonl``,
``run.jsonl`` (the judged run) and the other rendered files (``judge.report``). This module is
the only place that resolves, reads and writes them; ``tests/test_layering.py`` checks that no
other module names the two JSON files.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path

from judge.errors import ConfigError
from judge.formatting import timestamp
from judge.io.jsonl import read_jsonl
from judge.io.lock import run_lock
from judge.io.state import StateFile, read_json_document, read_pointer, write_pointer
from judge.io.validation import parse_records
from judge.io.write import write_atomic
from judge.judging.types import Verdict
from judge.record import REPORT_FILE, VALUES_FILE, Record, SavedValues
from judge.results.compare import QuestionValues
from judge.results.history import HistoryEntry, append_history, read_history
from judge.results.item_record import ItemRecord
from judge.results.manifest import MANIFEST_FILE, Manifest

#: ``reports/latest``: the name of the newest report folder.
LATEST_FILE = StateFile(
    what="latest-run pointer",
    remedy="it holds the name of the newest report folder: write one of 'ls reports' into it, "
    "or delete it and run 'judge run'",
    error=ConfigError,
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

    def write_files(self, files: Mapping[str, str | bytes]) -> None:
        """Write (or rewrite) files of this folder, each whole: write, then rename."""
        for name, text in files.items():
            write_atomic(self.path / name, text)


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
    def lock(self) -> Iterator[None]:
        """Held while a run writes here: one run at a time."""
        with run_lock(self.path):
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
            name = read_pointer(latest, LATEST_FILE)
        for candidate in (Path(name), self.path / name):
            if (candidate / "manifest.json").is_file():
                folder = ReportFolder(candidate)
                folder.manifest  # noqa: B018 (read now: a wrong format fails here, in one line)
                return folder
        raise ConfigError(f"{name}: not a report folder (no manifest.json); see 'ls {self.path}'")

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

    def publish(
        self, name: str, files: Mapping[str, str | bytes], entry: HistoryEntry
    ) -> ReportFolder:
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
        ReportFolder(tmp).write_files(files)
        os.replace(tmp, final)
        append_history(self.history_path, entry)
        write_pointer(self.path / "latest", name, LATEST_FILE)
        return ReportFolder(final)


def read_manifest(folder: Path) -> Manifest:
    """A folder's manifest; another format version or a damaged file is one clear error."""
    return read_json_document(folder / "manifest.json", Manifest, MANIFEST_FILE)


def read_record(folder: Path) -> Record:
    """A report folder's ``report.json`` as the record it was written from: the one reader of
    it (limits, format version and fields checked; one located line on any problem)."""
    return read_json_document(folder / "report.json", Record, REPORT_FILE)


def read_saved_verdicts(folder: Path) -> dict[str, Verdict]:
    """A folder's ``verdicts.jsonl`` (the record's verdicts, one a line) by question id: what
    ``judge report`` keeps for a verdict whose reply is no longer in the cache, read even when
    the rendered files (``report.json`` among them) are damaged."""
    path = folder / "verdicts.jsonl"
    return {v.question_id: v for _, v in parse_records(path, read_jsonl(path), Verdict)}
