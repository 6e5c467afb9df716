"""``judge diff A B``: two report folders' records compared question by question."""

from __future__ import annotations

from judge.record import Record, RunDiff
from judge.results.compare import (
    SECTIONS,
    GateRule,
    SectionComparison,
    changed_verdicts,
    compare_values,
    decide,
)

#: Fingerprint → what it stands for, in the order a difference is noted.
_PARTS = (
    ("golden", "golden set"),
    ("corpus", "corpus"),
    ("judge", "judge configuration"),
    ("retrieval", "retrieval settings"),
    ("run", "RAG output"),
)


def diff_records(old: Record, new: Record, rule: GateRule) -> RunDiff:
    """``new`` against ``old`` with the gate's rule, in the type order of ``new``'s
    configuration."""
    values_old, values_new = old.values(), new.values()
    types = tuple(new.manifest.config.get("data", {}).get("question_types", ()))
    fa = old.manifest.fingerprints.model_dump()
    fb = new.manifest.fingerprints.model_dump()
    comparisons = decide(
        [
            SectionComparison(
                section,
                old.manifest.folder,
                compare_values(section, values_old, values_new, rule, types),
                "",
            )
            for section in SECTIONS
        ],
        rule,
    )
    flips = changed_verdicts(
        {v.question_id: v for v in old.verdicts}, {v.question_id: v for v in new.verdicts}
    )
    return RunDiff(
        old.manifest.folder,
        new.manifest.folder,
        [what for key, what in _PARTS if fa[key] != fb[key]],
        rule,
        comparisons,
        flips,
    )
