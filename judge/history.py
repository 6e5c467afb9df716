"""Run history, comparison with the last compatible run, the regression gate and the baseline.

``reports/history.jsonl`` holds one summary line per run (bounded: the oldest lines are dropped
past ``MAX_ENTRIES``). A run is compared section by section with the latest earlier run that
measured the same thing on the same golden set:

- retrieval metrics: same golden content hash and same retrieval settings (context_k, k values);
- judge metrics: same golden content hash and same judge fingerprint (a prompt edit changes the
  ruler, so judge metrics are then not compared; the flipped verdicts are listed instead).

A move larger than the threshold is ``improved`` or ``regressed`` (every metric here is better
when higher); smaller moves are ``noise``. A corpus change is noted next to the numbers but
does not stop the comparison; a golden-set change does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.errors import ConfigError, InputError
from judge.jsonl import split_lines, write_atomic

FORMAT_VERSION = 1
MAX_ENTRIES = 1000

Section = Literal["retrieval", "judge"]
SECTIONS: tuple[Section, ...] = ("retrieval", "judge")
#: type → metric → value (None when undefined, e.g. retrieval of out-of-scope questions)
TypeMetrics = dict[str, dict[str, float | None]]


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


Direction = Literal["improved", "regressed", "noise"]


class Change(NamedTuple):
    section: Section
    type: str
    metric: str
    old: float
    new: float | None
    """None when the metric has no value any more (e.g. every verdict of the type failed)."""
    delta: float | None
    direction: Direction

    def describe(self) -> str:
        arrow = {"regressed": "▼", "improved": "▲", "noise": "·"}[self.direction]
        if self.new is None or self.delta is None:
            return f"{arrow} {self.type} {self.metric}: {self.old:.3f} → none (no value any more)"
        return f"{arrow} {self.type} {self.metric}: {self.old:.3f} → {self.new:.3f} ({self.delta:+.3f})"


class SectionComparison(NamedTuple):
    """One section compared with one earlier run (or why it was not compared)."""

    section: Section
    baseline: str | None
    """Folder of the run compared with; None when nothing compatible was found."""
    changes: list[Change]
    note: str

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.direction == "regressed"]


def _fingerprint_of(entry: HistoryEntry, section: Section) -> str:
    return entry.retrieval_fingerprint if section == "retrieval" else entry.judge_fingerprint


def compare_metrics(
    section: Section, old: TypeMetrics, new: TypeMetrics, threshold: float
) -> list[Change]:
    """Every metric that had a value before, with its direction (all are better when higher).

    A metric that lost its value (every verdict of a type failed) is a regression, and so is a
    fall in ``n``, the questions scored: a failing question must not make a mean look better
    by dropping out of it. ``n`` moves by whole questions, so any fall counts.
    """
    changes = []
    for type_name, metrics in new.items():
        for metric, value in metrics.items():
            before = old.get(type_name, {}).get(metric)
            if before is None:
                continue
            if value is None:
                changes.append(Change(section, type_name, metric, before, None, None, "regressed"))
                continue
            delta = value - before
            limit = 0.0 if metric == "n" else threshold
            direction: Direction = (
                "noise" if abs(delta) <= limit else "improved" if delta > 0 else "regressed"
            )
            changes.append(Change(section, type_name, metric, before, value, delta, direction))
    return changes


def compare_with_history(
    entry: HistoryEntry, history: list[HistoryEntry], threshold: float
) -> list[SectionComparison]:
    """Compare each section with the latest earlier compatible run."""
    earlier = [e for e in history if e.folder != entry.folder]
    comparisons = []
    for section in SECTIONS:
        fingerprint = _fingerprint_of(entry, section)
        match = next(
            (
                e
                for e in reversed(earlier)
                if e.golden_hash == entry.golden_hash and _fingerprint_of(e, section) == fingerprint
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


# --- the pinned baseline -------------------------------------------------------------------


class Baseline(BaseModel):
    """Pinned per-type metrics that the gate holds every run to; raised only on purpose."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = FORMAT_VERSION
    golden_hash: str
    retrieval_fingerprint: str
    judge_fingerprint: str
    metrics: dict[str, TypeMetrics]
    pinned_from: list[str]
    """The run folders whose numbers are in it (the first pin, then each ratchet)."""


def read_baseline(path: Path) -> Baseline | None:
    if not path.exists():
        return None
    try:
        return Baseline.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{path}: not a baseline file ({str(exc).splitlines()[0]})") from None


def write_baseline(path: Path, baseline: Baseline) -> None:
    write_atomic(path, baseline.model_dump_json(indent=2) + "\n")


def pin_baseline(path: Path, entry: HistoryEntry, replace: bool) -> Baseline:
    """Pin a run's numbers; an existing baseline is only replaced when asked explicitly."""
    if path.exists() and not replace:
        raise ConfigError(
            f"{path} exists; 'judge baseline ratchet' raises it where a run is better, "
            "'judge baseline pin --replace' overwrites it (which can lower it)"
        )
    baseline = Baseline(
        golden_hash=entry.golden_hash,
        retrieval_fingerprint=entry.retrieval_fingerprint,
        judge_fingerprint=entry.judge_fingerprint,
        metrics=entry.metrics,
        pinned_from=[entry.folder],
    )
    write_baseline(path, baseline)
    return baseline


def ratchet_baseline(path: Path, entry: HistoryEntry) -> tuple[Baseline, list[Change]]:
    """Raise each baseline metric to the run's value where the run is better; never lower."""
    baseline = read_baseline(path)
    if baseline is None:
        raise ConfigError(f"{path}: no baseline yet; pin one with 'judge baseline pin'")
    if baseline.golden_hash != entry.golden_hash:
        raise ConfigError(f"{path}: pinned for another golden set; re-pin it with --replace")
    raised: list[Change] = []
    metrics = json.loads(json.dumps(baseline.metrics))
    for section in SECTIONS:
        same = _fingerprint_of(entry, section) == (
            baseline.retrieval_fingerprint if section == "retrieval" else baseline.judge_fingerprint
        )
        if not same:
            continue
        for change in compare_metrics(
            section, baseline.metrics[section], entry.metrics[section], 0.0
        ):
            if change.delta is not None and change.delta > 0:
                metrics[section][change.type][change.metric] = change.new
                raised.append(change)
    updated = baseline.model_copy(
        update={"metrics": metrics, "pinned_from": [*baseline.pinned_from, entry.folder]}
    )
    write_baseline(path, updated)
    return updated, raised


def compare_with_baseline(
    entry: HistoryEntry, baseline: Baseline, threshold: float
) -> list[SectionComparison]:
    """Each section against the pinned numbers (when measured the same way)."""
    comparisons = []
    for section in SECTIONS:
        pinned_fp = (
            baseline.retrieval_fingerprint if section == "retrieval" else baseline.judge_fingerprint
        )
        if baseline.golden_hash != entry.golden_hash:
            note = "the baseline was pinned for another golden set: not compared"
        elif pinned_fp != _fingerprint_of(entry, section):
            note = "the baseline was measured with other settings: not compared"
        else:
            changes = compare_metrics(
                section, baseline.metrics[section], entry.metrics[section], threshold
            )
            comparisons.append(SectionComparison(section, "baseline", changes, ""))
            continue
        comparisons.append(SectionComparison(section, None, [], note))
    return comparisons
