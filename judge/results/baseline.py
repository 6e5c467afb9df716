"""The pinned baseline: per-question values every run is held to, raised only on purpose.

``judge baseline pin`` writes it from a run's report folder; ``judge baseline ratchet`` raises
it per (section, type, metric) where a later run's mean is higher and never lowers one;
``pin --replace`` is the only way down. It keeps each question's value (not per-type means), so
that a run is compared with it question by question like with the last run
(``judge.results.compare``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.errors import ConfigError
from judge.jsonl import StateFile, read_json_document, write_json_document
from judge.results.compare import (
    SECTIONS,
    GateRule,
    MetricValues,
    QuestionValues,
    Section,
    SectionComparison,
    compare_values,
)
from judge.results.history import HistoryEntry
from judge.results.paired import EPS

#: 1: per-type means; 2: per-question values.
BASELINE_FORMAT = 2


class Baseline(BaseModel):
    """Pinned per-question values that the gate holds every run to; raised only on purpose."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = BASELINE_FORMAT
    golden_hash: str
    retrieval_fingerprint: str
    judge_fingerprint: str
    types: dict[str, str]
    """Question id → type."""
    values: dict[Section, MetricValues]
    """Section → metric → question id → value."""
    pinned_from: list[str]
    """The run folders whose values are in it (the first pin, then each ratchet)."""

    def fingerprint(self, section: Section) -> str:
        return self.retrieval_fingerprint if section == "retrieval" else self.judge_fingerprint

    def question_values(self) -> QuestionValues:
        return QuestionValues(dict(self.types), {s: self.values.get(s, {}) for s in SECTIONS})


RE_PIN = "re-pin it with 'judge baseline pin --replace'"


def _old_format(path: Path, raw: dict[str, Any]) -> str | None:
    """Format 1 held per-type means, which no run can be compared with question by question."""
    if raw.get("format_version") == 1:
        return (
            f"{path}: a baseline of format 1 (per-type means); runs are now compared question "
            f"by question: {RE_PIN}"
        )
    return None


BASELINE_FILE = StateFile(
    what="baseline",
    remedy=RE_PIN,
    current=BASELINE_FORMAT,
    version_refusal=_old_format,
    damaged="{where}: not a baseline file ({problem}); {remedy}",
    invalid="{path}: not a baseline file ({problem}); {remedy}",
    error=ConfigError,
)


def read_baseline(path: Path) -> Baseline | None:
    """The baseline, or None when there is none; a file of another format (format 1 held
    per-type means) or a damaged one is one ConfigError saying what to do."""
    if not path.exists():
        return None
    return read_json_document(path, Baseline, BASELINE_FILE)


def write_baseline(path: Path, baseline: Baseline) -> None:
    """Write the baseline atomically; one its reader would refuse is not written."""
    write_json_document(path, baseline, BASELINE_FILE)


def pin_baseline(
    path: Path, entry: HistoryEntry, values: QuestionValues, replace: bool
) -> Baseline:
    """Pin a run's values; an existing baseline is only replaced when asked explicitly."""
    if path.exists() and not replace:
        raise ConfigError(
            f"{path} exists; 'judge baseline ratchet' raises it where a run is better, "
            "'judge baseline pin --replace' overwrites it (which can lower it)"
        )
    baseline = Baseline(
        golden_hash=entry.golden_hash,
        retrieval_fingerprint=entry.retrieval_fingerprint,
        judge_fingerprint=entry.judge_fingerprint,
        types=values.types,
        values={s: values.values.get(s, {}) for s in SECTIONS},
        pinned_from=[entry.folder],
    )
    write_baseline(path, baseline)
    return baseline


class Raised(NamedTuple):
    """One (section, type, metric) the ratchet raised: its mean before and after."""

    section: Section
    type: str
    metric: str
    old: float | None
    """None when the baseline had no value for it."""
    new: float

    def describe(self) -> str:
        before = "none" if self.old is None else f"{self.old:.3f}"
        gain = "" if self.old is None else f" ({self.new - self.old:+.3f})"
        return f"▲ {self.type} {self.metric}: {before} → {self.new:.3f}{gain}"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _ratchet_metric(
    section: Section,
    metric: str,
    pinned: dict[str, float],
    run: dict[str, float],
    types: dict[str, str],
) -> list[Raised]:
    """Raise ``pinned`` in place, type by type, where the run's values give a higher mean.

    A type's candidate is its pinned values with the run's values over them; a question the run
    has no value for keeps its pinned one (a question that failed must not raise a mean by
    dropping out of it). The candidate replaces the pinned values when its mean is higher.
    """
    by_type: dict[str, list[str]] = {}
    for qid in dict.fromkeys([*pinned, *run]):
        by_type.setdefault(types.get(qid, "?"), []).append(qid)
    raised = []
    for type_name, ids in by_type.items():
        before = [pinned[q] for q in ids if q in pinned]
        candidate = {q: run[q] if q in run else pinned[q] for q in ids}
        old = _mean(before) if before else None
        new = _mean(list(candidate.values()))
        if old is None or new > old + EPS:
            pinned.update(candidate)
            raised.append(Raised(section, type_name, metric, old, new))
    return raised


def ratchet_baseline(
    path: Path, entry: HistoryEntry, values: QuestionValues
) -> tuple[Baseline, list[Raised]]:
    """Raise the baseline per (section, type, metric) where the run's mean is higher; never
    lower one. Sections measured another way (fingerprint) are left as they are."""
    baseline = read_baseline(path)
    if baseline is None:
        raise ConfigError(f"{path}: no baseline yet; pin one with 'judge baseline pin'")
    if baseline.golden_hash != entry.golden_hash:
        raise ConfigError(f"{path}: pinned for another golden set; re-pin it with --replace")
    types = {**baseline.types, **values.types}
    pinned_values = {
        s: {m: dict(v) for m, v in baseline.values.get(s, {}).items()} for s in SECTIONS
    }
    raised: list[Raised] = []
    for section in SECTIONS:
        if entry.fingerprint(section) != baseline.fingerprint(section):
            continue
        for metric, run in values.values.get(section, {}).items():
            pinned = pinned_values[section].setdefault(metric, {})
            raised += _ratchet_metric(section, metric, pinned, run, types)
    updated = baseline.model_copy(
        update={
            "types": types,
            "values": pinned_values,
            "pinned_from": [*baseline.pinned_from, entry.folder],
        }
    )
    write_baseline(path, updated)
    return updated, raised


def compare_with_baseline(
    entry: HistoryEntry,
    baseline: Baseline,
    current: QuestionValues,
    rule: GateRule,
    type_order: tuple[str, ...] = (),
) -> list[SectionComparison]:
    """Each section against the pinned values, question by question (when measured the same
    way)."""
    comparisons = []
    pinned = baseline.question_values()
    for section in SECTIONS:
        pinned_fp = baseline.fingerprint(section)
        if baseline.golden_hash != entry.golden_hash:
            note = "the baseline was pinned for another golden set: not compared"
        elif pinned_fp != entry.fingerprint(section):
            note = "the baseline was measured with other settings: not compared"
        else:
            changes = compare_values(section, pinned, current, rule, type_order)
            comparisons.append(SectionComparison(section, "baseline", changes, ""))
            continue
        comparisons.append(SectionComparison(section, None, [], note))
    return comparisons
