"""The pinned baseline: per-question values every run is held to, raised only on purpose.

``judge baseline pin`` writes it from a run's report folder; ``judge baseline ratchet`` raises
it per (section, type, metric) where a later run is shown better, question by question under
the gate's own rule (``ratchet_values``), and never lowers one;
``pin --replace`` is the only way down. It keeps each question's value (not per-type means), so
that a run is compared with it question by question like with the last run
(``judge.results.compare``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.errors import ConfigError
from judge.grouped import ALL
from judge.io.lock import locked
from judge.io.state import StateFile, read_json_document, write_json_document
from judge.results.compare import (
    SECTIONS,
    GateRule,
    MetricValues,
    QuestionValues,
    Section,
    SectionComparison,
    compare_values,
    decide,
)
from judge.results.history import HistoryEntry

# numpy is imported by the functions that compute with it: rendering a record (judge report)
# needs none of it, and it is a tenth of the command's start-up.
if TYPE_CHECKING:
    pass

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
    """Pin a run's values; an existing baseline is only replaced when asked explicitly.

    Under the baseline's lock (``judge.io.lock.locked``), like a ratchet: of two pins at once
    without ``--replace``, one pins and the other is refused because the file now exists."""
    baseline = Baseline(
        golden_hash=entry.golden_hash,
        retrieval_fingerprint=entry.retrieval_fingerprint,
        judge_fingerprint=entry.judge_fingerprint,
        types=values.types,
        values={s: values.values.get(s, {}) for s in SECTIONS},
        pinned_from=[entry.folder],
    )
    with locked(path):
        if path.exists() and not replace:
            raise ConfigError(
                f"{path} exists; 'judge baseline ratchet' raises it where a run is better, "
                "'judge baseline pin --replace' overwrites it (which can lower it)"
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


def ratchet_baseline(
    path: Path,
    entry: HistoryEntry,
    values: QuestionValues,
    rule: GateRule,
    type_order: Sequence[str] = (),
) -> tuple[Baseline, list[Raised]]:
    """Raise the baseline per (section, type, metric) where the run is shown better
    (``ratchet_values``); never lower one. Sections measured another way (fingerprint) are left
    as they are.

    The read, the raise and the write hold the baseline's lock (``judge.io.lock.locked``): two
    ratchets at once (or a ratchet and a pin) each start from what the other wrote."""
    with locked(path):
        return _ratchet_locked(path, entry, values, rule, type_order)


def _ratchet_locked(
    path: Path,
    entry: HistoryEntry,
    values: QuestionValues,
    rule: GateRule,
    type_order: Sequence[str],
) -> tuple[Baseline, list[Raised]]:
    """``ratchet_baseline``'s read-modify-write; the caller holds the baseline's lock."""
    baseline = read_baseline(path)
    if baseline is None:
        raise ConfigError(f"{path}: no baseline yet; pin one with 'judge baseline pin'")
    if baseline.golden_hash != entry.golden_hash:
        raise ConfigError(f"{path}: pinned for another golden set; re-pin it with --replace")
    sections = [s for s in SECTIONS if entry.fingerprint(s) == baseline.fingerprint(s)]
    pinned_values, raised = ratchet_values(
        baseline.question_values(), values, rule, sections, type_order
    )
    updated = baseline.model_copy(
        update={
            "types": {**baseline.types, **values.types},
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


def _type_mean(values: dict[str, float], types: dict[str, str], type_name: str) -> float | None:
    """The mean of a type's pinned values (None without any)."""
    import numpy as np

    kept = [v for q, v in values.items() if types.get(q) == type_name]
    return float(np.mean(kept)) if kept else None


def ratchet_values(
    pinned: QuestionValues,
    run: QuestionValues,
    rule: GateRule,
    sections: Sequence[Section] = SECTIONS,
    type_order: Sequence[str] = (),
) -> tuple[dict[Section, MetricValues], list[Raised]]:
    """The ratchet's rule: a (section, type, metric) is raised only where the run is shown
    better than the pinned values, question by question, under the gate's own rule (the same
    paired test and family-wise level as a night's checks, ``judge.results.compare.decide``):
    its pinned values are then replaced by the run's (a question the run has no value for keeps
    its pinned one). Raising wherever a mean is higher would keep the highest of noisy nights
    and hold every later night to that luck (docs/gate.md measures it)."""
    import numpy as np

    comparisons = [
        SectionComparison(s, "baseline", compare_values(s, pinned, run, rule, type_order), "")
        for s in sections
    ]
    values = {s: {m: dict(v) for m, v in pinned.values.get(s, {}).items()} for s in SECTIONS}
    types = {**pinned.types, **run.types}
    raised = []
    for section in sections:  # a metric the baseline has no value for: nothing to hold runs to
        for metric, now in run.values.get(section, {}).items():
            if not values[section].get(metric):
                values[section][metric] = dict(now)
                for type_name in dict.fromkeys(types[q] for q in now):
                    mean = float(np.mean([v for q, v in now.items() if types[q] == type_name]))
                    raised.append(Raised(section, type_name, metric, None, mean))
    for comp in decide(comparisons, rule):
        for c in comp.changes:
            if c.direction != "improved" or c.type == ALL:
                continue
            now = run.values.get(comp.section, {}).get(c.metric, {})
            target = values[comp.section].setdefault(c.metric, {})
            before = _type_mean(target, types, c.type)
            for qid, value in now.items():
                if types.get(qid) == c.type:
                    target[qid] = value
            after = _type_mean(target, types, c.type)
            assert after is not None  # the type had pairs, so it has values
            raised.append(Raised(comp.section, c.type, c.metric, before, after))
    return values, raised
