"""What a sweep measures for each setting: retrieval per question, and the judge's means.

A question the adapter failed under a setting scores 0 on every retrieval metric here, and is
listed: a setting that cannot answer a question is worse for it, and leaving the question out
would compare the settings on different questions (or quietly shrink n).

The judge's means are per-type means of the per-question judge values
(``judge.results.values.verdict_values``, aggregated by ``judge.grouped``), the same
values and the same aggregation as the run's judge table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from judge.axes import AXES
from judge.config import Config
from judge.grouped import ALL, Group, grouped
from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.types import Verdict
from judge.results.paired import bootstrap_interval, seed_for
from judge.results.tables import TypeTable, retrieval_table
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
    """Per type of ``types`` (then ``all``): the answers judged, the ok verdicts among them and
    the mean scores over those (``n`` is over ``ok_share``, which every verdict has)."""
    by_id = golden.by_id()
    type_of = {qid: by_id[qid].type for qid in verdicts}
    order = tuple(types)
    values = {qid: verdict_values(v) for qid, v in verdicts.items()}

    def per_type(metric: str) -> dict[str, Group]:
        of_metric = {qid: v[metric] for qid, v in values.items() if metric in v}
        return grouped(of_metric, type_of, order, overall=ALL)

    judged = per_type("ok_share")
    # An ok verdict has both scores, and only an ok verdict has any: ok is either axis' n.
    scores = {axis: per_type(axis) for axis in AXES}
    return JudgeMeans(
        {
            name: {
                "n": judged[name].n,
                "ok": scores[AXES[0]][name].n,
                **{axis: scores[axis][name].mean for axis in AXES},
            }
            for name in judged
        },
        dict(verdicts),
    )


class PooledChange(NamedTuple):
    """``new - old`` over the questions both have, pooled over every type, with its 95 %
    bootstrap interval: a setting against the default on the holdout, shown and never used to
    choose (nor called a regression).

    Not ``judge.results.compare.Change``, which is per type, has a gate rule that calls it
    regressed or noise, and lists the questions that moved: the sweep compares two settings on
    one split, so its interval is seeded by the two settings and the metric (the same pair of
    settings always draws the same resamples) rather than by section, type and metric.
    """

    metric: str
    n: int
    mean: float
    low: float
    high: float


def pooled_change(old: SettingScores, new: SettingScores, metric: str) -> PooledChange | None:
    """The pooled paired change of ``metric`` (both scored on the same split); None on no
    questions. The interval is ``judge.results.paired``'s, as every paired change's."""
    changes = [b - a for a, b in zip(old.values[metric], new.values[metric], strict=True)]
    if not changes:
        return None
    low, high = bootstrap_interval(
        changes, seed_for("sweep", old.setting.key, new.setting.key, metric)
    )
    return PooledChange(metric, len(changes), sum(changes) / len(changes), low, high)
