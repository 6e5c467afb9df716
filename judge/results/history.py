"""Run history, and which earlier run each section of a run is compared with.

``reports/history.jsonl`` holds one summary line per run (bounded: the oldest lines are dropped
past ``MAX_ENTRIES``). A run is compared section by section with the latest earlier run that
measured the same thing on the same golden set:

- retrieval metrics: same golden content hash and same retrieval settings (context_k, k values);
- judge metrics: same golden content hash and same judge fingerprint (a prompt edit changes the
  ruler, so judge metrics are then not compared; the flipped verdicts are listed instead).

A corpus change is noted next to the numbers but does not stop the comparison; a golden-set
change does. How two sets of numbers are compared is ``judge.results.compare``; the pinned
baseline is ``judge.results.baseline``; the gate is ``judge.results.gate``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from judge.errors import InputError
from judge.jsonl import split_lines, write_atomic
from judge.results.compare import (
    SECTIONS,
    Section,
    SectionComparison,
    TypeMetrics,
    compare_metrics,
)

FORMAT_VERSION = 1
MAX_ENTRIES = 1000


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


def read_history(path: Path) -> list[HistoryEntry]:
    """Entries oldest first; a damaged line is an error naming it (the file is append-only)."""
    if not path.exists():
        return []
    entries = []
    problems = []
    for number, line in enumerate(split_lines(path.read_text(encoding="utf-8")), start=1):
        if not line.strip():
            continue
        try:
            entries.append(HistoryEntry.model_validate_json(line))
        except ValueError as exc:
            problems.append(f"{path}:{number}: not a history entry ({str(exc).splitlines()[0]})")
    if problems:
        raise InputError([*problems, f"{path}: remove or fix the damaged lines"])
    return entries


def append_history(path: Path, entry: HistoryEntry) -> None:
    """Append one line; past ``MAX_ENTRIES`` the file is rewritten without the oldest lines."""
    entries = read_history(path)
    line = entry.model_dump_json() + "\n"
    if len(entries) + 1 <= MAX_ENTRIES:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        return
    kept = entries[-(MAX_ENTRIES - 1) :]
    write_atomic(path, "".join(e.model_dump_json() + "\n" for e in kept) + line)


def compare_with_history(
    entry: HistoryEntry, history: list[HistoryEntry], threshold: float
) -> list[SectionComparison]:
    """Compare each section with the latest earlier compatible run."""
    earlier = [e for e in history if e.folder != entry.folder]
    comparisons = []
    for section in SECTIONS:
        fingerprint = entry.fingerprint(section)
        match = next(
            (
                e
                for e in reversed(earlier)
                if e.golden_hash == entry.golden_hash and e.fingerprint(section) == fingerprint
            ),
            None,
        )
        if match is None:
            if earlier and earlier[-1].golden_hash != entry.golden_hash:
                note = "the golden set changed since the last run: not compared"
            elif earlier:
                what = "retrieval settings" if section == "retrieval" else "judge configuration"
                note = f"no earlier run with this {what} on this golden set: not compared"
            else:
                note = "no earlier run to compare with"
            comparisons.append(SectionComparison(section, None, [], note))
            continue
        note = ""
        if match.corpus_hash != entry.corpus_hash:
            note = "the corpus changed since that run: the numbers measure a different corpus"
        changes = compare_metrics(
            section, match.metrics[section], entry.metrics[section], threshold
        )
        comparisons.append(SectionComparison(section, match.folder, changes, note))
    return comparisons


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
