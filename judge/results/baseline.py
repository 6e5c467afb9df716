"""The pinned baseline: per-type numbers every run is held to, raised only on purpose.

``judge baseline pin`` writes it from a run; ``judge baseline ratchet`` raises each metric where
a later run is better and never lowers one; ``pin --replace`` is the only way down.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from judge.errors import ConfigError
from judge.jsonl import write_atomic
from judge.results.compare import (
    SECTIONS,
    Change,
    Section,
    SectionComparison,
    TypeMetrics,
    compare_metrics,
)
from judge.results.history import FORMAT_VERSION, HistoryEntry


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

    def fingerprint(self, section: Section) -> str:
        return self.retrieval_fingerprint if section == "retrieval" else self.judge_fingerprint


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
        same = entry.fingerprint(section) == baseline.fingerprint(section)
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
        pinned_fp = baseline.fingerprint(section)
        if baseline.golden_hash != entry.golden_hash:
            note = "the baseline was pinned for another golden set: not compared"
        elif pinned_fp != entry.fingerprint(section):
            note = "the baseline was measured with other settings: not compared"
        else:
            changes = compare_metrics(
                section, baseline.metrics[section], entry.metrics[section], threshold
            )
            comparisons.append(SectionComparison(section, "baseline", changes, ""))
            continue
        comparisons.append(SectionComparison(section, None, [], note))
    return comparisons
