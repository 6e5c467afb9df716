"""Run history, and which earlier run each section of a run is compared with.

``reports/history.jsonl`` holds one summary line per run (bounded: the oldest lines are dropped
past ``MAX_ENTRIES``). A run is compared section by section with the latest earlier run that
measured the same thing on the same golden set:

- retrieval metrics: same golden content hash and same retrieval settings (context_k, k values);
- judge metrics: same golden content hash and same judge fingerprint (a prompt edit changes the
  ruler, so judge metrics are then not compared; the flipped verdicts are listed instead).

A corpus change is noted next to the numbers but does not stop the comparison; a golden-set
change does. So is a change of the RAG system's settings as its run states them
(``run_meta``'s embedding model and version, chunking and generator: ``settings_note``), read
from each line's ``settings``: they are the system's own description of what it ran with, a
few short values that every comparison needs, so they live in the line with the other keys
that decide a comparison rather than in the earlier run's folder (which may be gone). The comparison is question by question: the earlier run's values are read from its
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
from judge.inputs.runs import JsonScalar, RunSettings
from judge.io.json import UTF8_BOM
from judge.io.jsonl import checked_line, parse_json_line
from judge.io.lock import locked
from judge.io.state import StateFile, version_problem
from judge.io.validation import describe_validation_error
from judge.io.write import append_line, write_atomic
from judge.results.compare import (
    SECTIONS,
    GateRule,
    QuestionValues,
    Section,
    SectionComparison,
    TypeMetrics,
    compare_values,
)
from judge.textnorm import same_name

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
    settings: RunSettings | None = None
    """The RAG system's settings as its run stated them (``RunMeta.settings``): a comparison
    with this run says which changed. None: a line written before they were recorded (they
    are then not compared)."""

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
    parsed with the JSONL loader's limits (``judge.io.jsonl.parse_json_line``); a leading BOM
    (the file saved in a Windows editor) is dropped, as every reader drops it.
    """
    if not path.exists():
        return History([], [])
    raw = path.read_bytes()
    rows: list[tuple[int, int, bytes]] = []  # (line number, byte offset, bytes)
    offset = len(UTF8_BOM) if raw.startswith(UTF8_BOM) else 0  # an editor's BOM: dropped
    for number, line in enumerate(raw[offset:].split(b"\n"), start=1):
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
    the file's lock (``judge.io.lock.locked``): a rewrite (the oldest lines dropped, a torn line
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
        changed = settings_note(match.settings, entry.settings, section)
        if changed is not None:
            notes.append(changed)
        changes = compare_values(section, values, current, rule, type_order)
        comparisons.append(SectionComparison(section, match.folder, changes, "; ".join(notes)))
    return comparisons


#: The index's provenance (the embedder): its name and version, and the dimension and canary
#: digest (``judge.inputs.runs.canary_digest``) that show a change under the same name.
INDEX = ("embedding_model", "embedding_version", "embedding_dimension", "embedding_canary")
#: The settings a section's numbers depend on, in the order a note names them: retrieval is
#: the index's (embeddings, chunking); the judge's verdicts depend on those, through the
#: chunks the generator saw, and on the generator.
SETTINGS: dict[Section, tuple[str, ...]] = {
    "retrieval": (*INDEX, "chunking"),
    "judge": (*INDEX, "chunking", "generator_model"),
}

#: A setting's value in a note is cut to this many characters (a run file states it).
SETTING_CHARS = 60


def _value(value: JsonScalar) -> str:
    text = "not stated" if value is None else str(value)
    return text if len(text) <= SETTING_CHARS else text[: SETTING_CHARS - 1] + "…"


def _same_text(before: object, after: object) -> bool:
    """Two stated names that are one as users mean them (``same_name``: "bge-m3" and
    "BGE-M3 " are one embedding model), not a change."""
    return isinstance(before, str) and isinstance(after, str) and same_name(before, after)


def settings_changes(
    earlier: RunSettings | None, current: RunSettings | None, section: Section | None = None
) -> list[str]:
    """Each setting that differs between two runs, as "the embedding version (v1 → v2)"; the
    chunking as its keys that differ ("the chunking (max_chars 450 → 800)"). Only the
    settings ``section``'s numbers depend on (all of them when None); none when either run's
    settings were not recorded (a history line older than them). A setting stated in one run
    only counts as changed ("not stated → v2"): a run that stops stating its embedding
    version may have changed it too."""
    if earlier is None or current is None:
        return []
    changes = []
    for name in SETTINGS["judge" if section is None else section]:
        before, after = getattr(earlier, name), getattr(current, name)
        if before == after or _same_text(before, after):
            continue
        label = "the " + name.replace("_", " ")
        if name == "chunking":
            keys = [*before, *(k for k in after if k not in before)]
            moved = ", ".join(
                f"{k} {_value(before.get(k))} → {_value(after.get(k))}"
                for k in keys
                if before.get(k) != after.get(k)
            )
            changes.append(f"{label} ({moved})")
        else:
            changes.append(f"{label} ({_value(before)} → {_value(after)})")
    return changes


def _sentence(changes: Sequence[str], since: str) -> str | None:
    """The note of ``settings_changes``: one setting's values after its name, several
    settings each with theirs."""
    if not changes:
        return None
    if len(changes) == 1:
        name, _, values = changes[0].partition(" (")
        return f"{name} changed since {since} ({values}: a fall below may reflect that"
    listed = ", ".join(changes[:-1]) + " and " + changes[-1]
    return f"{listed} changed since {since}: a fall below may reflect that"


def settings_note(
    earlier: RunSettings | None, current: RunSettings | None, section: Section | None = None
) -> str | None:
    """The note beside a comparison when the RAG system's settings changed since the run it
    compares with ("the embedding version changed since that run (v1 → v2): a fall below may
    reflect that"), or None. As with a corpus change, the comparison still stands: the note
    says what other than the system's quality may have moved the numbers."""
    return _sentence(settings_changes(earlier, current, section), "that run")


def compared_settings_note(
    entry: HistoryEntry, history: Sequence[HistoryEntry], comparisons: Sequence[SectionComparison]
) -> str | None:
    """The settings that changed since the earlier runs ``comparisons`` compared with (those
    of ``compare_with_history``; the others, such as the pinned baseline's, are passed over),
    in one note for a line that stands alone, such as the nightly's first ("the embedding
    version changed since the last compatible run (v1 → v2): a fall below may reflect that"),
    or None. The settings are read from the history lines, as the comparison's note reads
    them."""
    by_folder = {e.folder: e for e in history}
    changes: list[str] = []
    for comp in comparisons:
        compared = by_folder.get(comp.baseline) if comp.baseline is not None else None
        if compared is None or compared.folder == entry.folder:
            continue
        for change in settings_changes(compared.settings, entry.settings, comp.section):
            if change not in changes:
                changes.append(change)
    return _sentence(changes, "the last compatible run")


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
