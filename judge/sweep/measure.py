"""What a sweep measures for each setting: retrieval per question, and the judge's means.

A question the adapter failed under a setting scores 0 on every retrieval metric here, and is
listed: a setting that cannot answer a question is worse for it, and leaving the question out
would compare the settings on different questions (or quietly shrink n).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from judge.config import Config
from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.verdict import Verdict
from judge.results.paired import bootstrap_interval, seed_for
from judge.results.tables import ALL, TypeTable, retrieval_table
from judge.results.values import verdict_values
from judge.retrieval import score_run
from judge.sweep.settings import Setting


class SettingScores(NamedTuple):
    """One setting's retrieval on a split."""

    setting: Setting
    run_path: str
    reused: bool
    values: dict[str, list[float]]
    """Metric → one value per scored question (``question_ids`` order); failures are 0."""
    question_ids: list[str]
    failed: dict[str, str]
    """Question id → the adapter's error, for the questions it failed under this setting."""
    table: TypeTable
    """The per-type retrieval table, as ``judge run`` shows it (failures counted apart)."""

    def mean(self, metric: str) -> float:
        column = self.values[metric]
        return sum(column) / len(column) if column else 0.0


def scored_questions(golden: GoldenSet) -> list[str]:
    """Questions with relevant chunks: the ones retrieval (and so the selection) scores."""
    return [q.id for q in golden.questions if q.relevant_chunks]


def setting_scores(
    config: Config, golden: GoldenSet, setting: Setting, run: Run, run_path: str, reused: bool
) -> SettingScores:
    scores = score_run(golden, run, config.retrieval.ks)
    ids = scored_questions(golden)
    position = {qid: i for i, qid in enumerate(scores.question_ids)}
    values = {
        metric: [column[position[qid]] if qid in position else 0.0 for qid in ids]
        for metric, column in scores.values.items()
    }
    failed = {qid: run.meta.failed.get(qid, "no answer") for qid in ids if qid not in position}
    table = retrieval_table(config, golden, scores)
    return SettingScores(setting, run_path, reused, values, ids, failed, table)


class JudgeMeans(NamedTuple):
    """The judge's grades of one setting's answers, per type and ``all``."""

    per_type: dict[str, dict[str, Any]]
    """Type → n (answers judged), ok, faithfulness, relevance (means over ok verdicts, or
    None when no verdict is ok)."""
    verdicts: dict[str, Verdict]


def judge_means(
    golden: GoldenSet, verdicts: Mapping[str, Verdict], types: Iterable[str]
) -> JudgeMeans:
    by_id = golden.by_id()
    groups: dict[str, list[Verdict]] = {t: [] for t in (*types, ALL)}
    for qid, verdict in verdicts.items():
        groups.setdefault(by_id[qid].type, []).append(verdict)
        groups[ALL].append(verdict)
    per_type: dict[str, dict[str, Any]] = {}
    for name, group in groups.items():
        values = [verdict_values(v) for v in group]
        ok = [v for v in values if "faithfulness" in v]
        per_type[name] = {
            "n": len(group),
            "ok": len(ok),
            "faithfulness": _mean([v["faithfulness"] for v in ok]),
            "relevance": _mean([v["relevance"] for v in ok]),
        }
    return JudgeMeans(per_type, dict(verdicts))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class PairedChange(NamedTuple):
    """``new - old`` over the questions both have, with its 95 % bootstrap interval."""

    metric: str
    n: int
    mean: float
    low: float
    high: float


def paired_change(old: SettingScores, new: SettingScores, metric: str) -> PairedChange | None:
    """The paired change of ``metric`` (both scored on the same split); None on no questions."""
    changes = [b - a for a, b in zip(old.values[metric], new.values[metric], strict=True)]
    if not changes:
        return None
    low, high = bootstrap_interval(
        changes, seed_for("sweep", old.setting.key, new.setting.key, metric)
    )
    return PairedChange(metric, len(changes), sum(changes) / len(changes), low, high)
