"""Run history, and which earlier run each section of a run is compared with.

``reports/history.jsonl`` holds one summary line per run (bounded: the oldest lines are dropped
past ``MAX_ENTRIES``). A run is compared section by section with the latest earlier run that
measured the same thing on the same golden set:

- retrieval metrics: same golden content hash and same retrieval settings (context_k, k values);
- judge metrics: same golden content hash and same judge fingerprint (a prompt edit changes the
  ruler, so judge metrics are then not compared; the flipped verdicts are listed instead).

A corpus change is noted next to the numbers but does not stop the comparison; a golden-set
change does. The comparison is question by question: the earlier run's values are read from its
report folder (``judge.results.values``), never stored here, so this file stays small; when a
compatible run's folder was deleted, the latest one still there is used. How two runs are
compared is ``judge.results.compare``; the pinned baseline is ``judge.results.baseline``; the
gate is ``judge.results.gate``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from judge.errors import InputError
from judge.jsonl import (
    StateFile,
    append_line,
    checked_line,
    describe_validation_error,
    locked,
    parse_json_line,
    version_problem,
    write_atomic,
)
from judge.results.compare import (
    SECTIONS,
    GateRule,
    QuestionValues,
    Section,
    SectionComparison,
    TypeMetrics,
    compare_values,
)

FORMAT_VERSION = 1
MAX_ENTRIES = 1000

logger = logging.getLogger(__name__)


class HistoryEntry(BaseModel):
    """One run, summarised."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = FORMAT_VERSION
    folder: str
    started_at: str
    golden_hash: str
    corpus_hash: str
    run_hash: str
    """Hash of the run's rankings and answers: equal means the RAG output did not change."""
    retrieval_fingerprint: str
    judge_fingerprint: str
    judge_parts: dict[str, Any]
    metrics: dict[str, TypeMetrics]
    """Section (retrieval, judge) → per-type metrics."""
    status_counts: dict[str, int]

    def fingerprint(self, section: Section) -> str:
        """What must match for this section to be compared with another run."""
        return self.retrieval_fingerprint if section == "retrieval" else self.judge_fingerprint


class History(NamedTuple):
    """What ``history.jsonl`` holds: its entries, and a torn last line if there is one."""

    entries: list[HistoryEntry]
    warnings: list[str]
    """One line each, for the user: a torn last line that was skipped."""
    torn_at: int | None = None
    """Byte offset where the torn last line starts (the next append drops it)."""


#: A line of ``history.jsonl``: its format version checked like every state file's.
HISTORY_LINE = StateFile(
    what="history entry",
    remedy="remove the line (each line is one earlier run: removing it only loses comparisons "
    "with that run)",
    current=FORMAT_VERSION,
)

Damage = Literal["torn", "damaged", "version"]


def _parse_entry(line: bytes) -> tuple[HistoryEntry | None, str, Damage]:
    """The entry of one line, or why it is none and what kind of damage that is: ``torn``
    (what a crash in the middle of an append leaves), ``damaged``, or a ``version`` this
    judge does not read (the reason is then a whole sentence that says what to do)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8: byte 0x{line[exc.start]:02x}", "torn"
    value, problem = parse_json_line(text)  # the JSONL loader's limits
    if problem is not None and problem.syntax:
        return None, "not valid JSON", "torn"
    if problem is not None:
        return None, problem.text, "damaged"
    version = value.get("format_version") if isinstance(value, dict) else None
    if type(version) is int:  # absent: the model's default; not an integer: the model says so
        _, refusal = version_problem(value, HISTORY_LINE)
        if refusal is not None:
            return None, refusal, "version"
    try:
        return HistoryEntry.model_validate(value), "", "damaged"
    except ValidationError as exc:
        return None, "; ".join(describe_validation_error(exc)[:3]), "damaged"


def load_history(path: Path) -> History:
    """Entries oldest first; a damaged line is an error naming it (the file is append-only).

    Only the last line may be torn (cut short, or not UTF-8): that is what a crash in the
    middle of an append leaves, so it is skipped with a warning and replaced by the next
    append instead of blocking every later run. A line that is whole JSON but no entry, or
    any damaged line before the last, is an error; so is a line of a newer format version (one
    line that says to upgrade judge or remove it), which would otherwise be misread. Lines are
    parsed with the JSONL loader's limits (``judge.jsonl.parse_json_line``).
    """
    if not path.exists():
        return History([], [])
    raw = path.read_bytes()
    rows: list[tuple[int, int, bytes]] = []  # (line number, byte offset, bytes)
    offset = 0
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if line.strip():
            rows.append((number, offset, line.removesuffix(b"\r")))
        offset += len(line) + 1
    entries: list[HistoryEntry] = []
    problems: list[str] = []
    warnings: list[str] = []
    torn_at: int | None = None
    for index, (number, start, line) in enumerate(rows):
        entry, problem, damage = _parse_entry(line)
        if entry is not None:
            entries.append(entry)
        elif damage == "torn" and index == len(rows) - 1:
            torn_at = start
            warnings.append(
                f"{path}:{number}: the last line is incomplete ({problem}): a run stopped while "
                "writing it; it is skipped, and the next run's line replaces it"
            )
        elif damage == "version":
            problems.append(f"{path}:{number}: {problem}")
        else:
            problems.append(
                f"{path}:{number}: not a history entry ({problem}); remove or fix the line "
                "(each line is one earlier run: removing it only loses comparisons with that run)"
            )
    if problems:
        raise InputError(problems)
    return History(entries, warnings, torn_at)


def read_history(path: Path) -> list[HistoryEntry]:
    """Entries oldest first (``load_history``); a torn last line is logged as a warning on the
    ``judge.results.history`` logger and skipped."""
    history = load_history(path)
    for warning in history.warnings:
        logger.warning(warning)
    return history.entries


def _line(path: Path, entry: HistoryEntry) -> str:
    """An entry's line, refused when ``load_history`` could not read it back."""
    return checked_line(entry.model_dump(mode="json"), path)


def append_history(path: Path, entry: HistoryEntry) -> None:
    """Append one line; past ``MAX_ENTRIES`` the file is rewritten without the oldest lines.

    A torn last line (``load_history``) is dropped first, atomically, so the new line never
    lands glued to it; a last line without its newline gets one. The read and the write hold
    the file's lock (``judge.jsonl.locked``): a rewrite (the oldest lines dropped, a torn line
    replaced) must not replace the file under another command's append.
    """
    with locked(path):
        history = load_history(path)
        entries = history.entries
        line = _line(path, entry)
        if len(entries) + 1 > MAX_ENTRIES:
            kept = entries[-(MAX_ENTRIES - 1) :]
            write_atomic(path, "".join(_line(path, e) for e in kept) + line)
            return
        if history.torn_at is not None:
            kept_text = path.read_bytes()[: history.torn_at].decode("utf-8")
            write_atomic(path, kept_text + line)
            logger.info("%s: the torn last line was replaced", path)
            return
        append_line(path, line)


def compare_with_history(
    entry: HistoryEntry,
    history: list[HistoryEntry],
    current: QuestionValues,
    earlier_values: Callable[[str], QuestionValues | None],
    rule: GateRule,
    type_order: Sequence[str] = (),
) -> list[SectionComparison]:
    """Compare each section, question by question, with the latest earlier compatible run
    whose folder can still be read (``earlier_values`` reads a folder's values by name, None
    when it is gone); newer compatible runs whose folders are gone are named in the note."""
    earlier = [e for e in history if e.folder != entry.folder]
    comparisons = []
    for section in SECTIONS:
        fingerprint = entry.fingerprint(section)
        matches = [
            e
            for e in reversed(earlier)
            if e.golden_hash == entry.golden_hash and e.fingerprint(section) == fingerprint
        ]
        if not matches:
            if earlier and earlier[-1].golden_hash != entry.golden_hash:
                note = "the golden set changed since the last run: not compared"
            elif earlier:
                what = "retrieval settings" if section == "retrieval" else "judge configuration"
                note = f"no earlier run with this {what} on this golden set: not compared"
            else:
                note = "no earlier run to compare with"
            comparisons.append(SectionComparison(section, None, [], note))
            continue
        gone: list[str] = []
        for match in matches:
            values = earlier_values(match.folder)
            if values is not None:
                break
            gone.append(match.folder)
        else:
            note = (
                f"the folders of the {len(gone)} compatible earlier run(s) are gone or "
                f"unreadable ({_names(gone)}): not compared"
            )
            comparisons.append(SectionComparison(section, None, [], note))
            continue
        notes = []
        if gone:
            notes.append(
                f"the folders of {len(gone)} newer compatible run(s) are gone or unreadable "
                f"({_names(gone)}): compared with the latest one still there"
            )
        if match.corpus_hash != entry.corpus_hash:
            notes.append(
                "the corpus changed since that run: the numbers measure a different corpus"
            )
        changes = compare_values(section, values, current, rule, type_order)
        comparisons.append(SectionComparison(section, match.folder, changes, "; ".join(notes)))
    return comparisons


def _names(folders: Sequence[str], first: int = 3) -> str:
    more = len(folders) - first
    return ", ".join(folders[:first]) + (f", … ({more} more)" if more > 0 else "")


def prompt_only_predecessor(
    entry: HistoryEntry, history: list[HistoryEntry]
) -> HistoryEntry | None:
    """The latest earlier run that differs from ``entry`` only in the judge prompt, if any."""

    def without_prompt(parts: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in parts.items() if k != "prompt_sha256"}

    for earlier in reversed([e for e in history if e.folder != entry.folder]):
        if (
            earlier.golden_hash == entry.golden_hash
            and earlier.corpus_hash == entry.corpus_hash
            and earlier.run_hash == entry.run_hash
            and earlier.retrieval_fingerprint == entry.retrieval_fingerprint
            and earlier.judge_parts.get("prompt_sha256") != entry.judge_parts.get("prompt_sha256")
            and without_prompt(earlier.judge_parts) == without_prompt(entry.judge_parts)
        ):
            return earlier
    return None
