"""Per-question-type tables from per-question values (``judge.grouped`` aggregates them; a
table's ``frame`` is its pandas view, built on first use: the tables themselves are plain rows,
so a run or a re-render that never asks for a frame never imports pandas).

Every table is per type first, ``all`` last, with the weakest type named: averages hide the
failures of the small types. Means use only the rows that have a value; the rows that do not
(out-of-scope questions for retrieval, non-ok verdicts for the judge) are counted in their own
columns, never turned into 0 or NaN inside a mean.

The optional axes (``judge.axes.OPTIONAL_AXES``: ``correctness``) are columns of the judge
table only when the run has a verdict for them, after relevance, with their own counts
(``correctness_asked``: questions of the type given a correctness verdict;
``correctness_not_ok``: those whose verdict is not ok, left out of the mean like a failed
answer verdict); an earlier run's table, or a run with correctness off, is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from judge.axes import EXPECTED_METRICS, JUDGE_TABLE_METRICS, judge_table_metrics
from judge.config import Config
from judge.grouped import ALL, grouped
from judge.inputs.golden import GoldenSet
from judge.judging.types import STATUSES, CorrectnessVerdict, Verdict
from judge.metrics import metric_names
from judge.results.compare import MetricValues
from judge.results.values import correctness_value, verdict_values
from judge.retrieval import RetrievalScores

if TYPE_CHECKING:
    import pandas as pd


class TypeTable(BaseModel):
    """A per-type table: one row per question type, then ``all``.

    Part of the run record (``judge.record``): its rows are what ``report.json`` keeps, and a
    table read back from a folder is the same object, and every view renders the rows (a
    re-rendered report shows what the first one showed). ``frame`` is the pandas view of the rows
    for the Python API.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: list[str]
    count_columns: list[str]
    primary: str
    """The metric that decides the weakest type."""
    weakest: str | None
    """The type with the lowest primary mean (None if no type has a value)."""
    rows: list[dict[str, str | int | float | None]]
    """One per type then ``all``: ``type``, the counts, then each metric's mean (None where no
    question has a value), rounded to 6 places."""
    _frame: pd.DataFrame | None = PrivateAttr(default=None)

    @property
    def frame(self) -> pd.DataFrame:
        """Index: type names then ``all``. Columns: counts first, then metric means."""
        if self._frame is None:
            import pandas as pd

            frame = pd.DataFrame(
                [{k: v for k, v in row.items() if k != "type"} for row in self.rows],
                index=[str(row["type"]) for row in self.rows],
                columns=[*self.count_columns, *self.metrics],
            )
            for metric in self.metrics:
                frame[metric] = frame[metric].astype(float)
            self._frame = frame
        return self._frame

    def to_json(self) -> dict[str, Any]:
        return {"primary_metric": self.primary, "weakest_type": self.weakest, "rows": self.rows}


def per_type_table(
    values: Mapping[str, Mapping[str, float]],
    types: Mapping[str, str],
    type_order: Sequence[str],
    metrics: Sequence[str],
    counts: dict[str, dict[str, int]] | None = None,
) -> TypeTable:
    """Mean of each metric per type, plus ``all``; ``metrics[0]`` is the primary metric.

    ``values``: metric → question id → value, for the questions of ``types`` (question id →
    type) that have one; each mean is ``judge.grouped``'s, the one per-type aggregation. ``n``
    counts the questions with a value for the primary metric. ``counts`` adds columns of
    per-type counts (e.g. excluded questions).
    """
    counts = counts or {}
    primary = metrics[0]
    index = [*type_order, ALL]
    groups = {m: grouped(values.get(m, {}), types, type_order, overall=ALL) for m in metrics}
    rows: list[dict[str, str | int | float | None]] = []
    for type_name in index:
        row: dict[str, str | int | float | None] = {"type": type_name}
        row["n"] = groups[primary][type_name].n
        for name, per_type in counts.items():
            row[name] = sum(per_type.values()) if type_name == ALL else per_type.get(type_name, 0)
        for metric in metrics:
            mean = groups[metric][type_name].mean
            row[metric] = None if mean is None or math.isnan(mean) else round(float(mean), 6)
        rows.append(row)
    candidates = [(groups[primary][t].mean, i, t) for i, t in enumerate(type_order)]
    valued = [(mean, i, t) for mean, i, t in candidates if mean is not None]
    # The lowest primary mean; a tie goes to the type listed first. When every type has the
    # same mean no type is weaker than another: marking the first would point at nothing.
    tied = len({mean for mean, _, _ in valued}) <= 1
    weakest = None if tied else min(valued)[2]
    return TypeTable(
        metrics=list(metrics),
        count_columns=["n", *counts],
        primary=primary,
        weakest=weakest,
        rows=rows,
    )


def retrieval_values(
    scores: RetrievalScores, questions: Collection[str], metrics: Collection[str] | None = None
) -> MetricValues:
    """Metric → question id → value, for ``questions`` (and ``metrics``, if given)."""
    return {
        metric: {q: v for q, v in zip(scores.question_ids, column, strict=True) if q in questions}
        for metric, column in scores.values.items()
        if metrics is None or metric in metrics
    }


def judge_values(verdicts: Iterable[Verdict]) -> MetricValues:
    """Metric → question id → value of the ok verdicts: faithfulness, relevance (0-2),
    full_marks (1 when both are 2), quote_verified (1 when the quote was found exactly or
    normalised; only for verdicts that quoted something), and the expected scores where the
    judge gave probabilities."""
    out: MetricValues = {}
    for v in verdicts:
        if v.status != "ok":
            continue
        # The same per-question values the paired comparison uses (ok_share apart: the table
        # counts non-ok verdicts in their own columns).
        values = verdict_values(v)
        for metric in JUDGE_METRICS:
            if metric in values:
                out.setdefault(metric, {})[v.question_id] = values[metric]
        for axis, expected in v.expected_scores.items():
            out.setdefault(f"expected_{axis}", {})[v.question_id] = expected
    return out


#: Judge metrics, in display order; faithfulness is the primary one.
JUDGE_METRICS = list(JUDGE_TABLE_METRICS)
NOT_OK = [status for status in STATUSES if status != "ok"]


def status_counts(golden: GoldenSet, verdicts: Iterable[Verdict]) -> dict[str, dict[str, int]]:
    """Per non-ok status, per type: how many verdicts have it (every status, even if 0)."""
    by_id = golden.by_id()
    counts: dict[str, dict[str, int]] = {status: {} for status in NOT_OK}
    for v in verdicts:
        if v.status in counts:
            qtype = by_id[v.question_id].type
            counts[v.status][qtype] = counts[v.status].get(qtype, 0) + 1
    return counts


def retrieval_table(config: Config, golden: GoldenSet, scores: RetrievalScores) -> TypeTable:
    """Per-type retrieval table at every k (primary metric: recall@context_k).

    ``excluded`` counts out-of-scope questions; ``unlabelled`` (questions whose relevant chunks
    are not known) and ``adapter_failed`` (the adapter gave no answer; the judge table's column
    of the same name) appear when there are any.
    """
    by_id = golden.by_id()
    kinds: dict[str, dict[str, int]] = {"excluded": {}, "unlabelled": {}, "adapter_failed": {}}
    column = {"out_of_scope": "excluded", "unlabelled": "unlabelled", "failed": "adapter_failed"}
    for qid, kind in scores.why_excluded.items():
        per_type = kinds[column[kind]]
        qtype = by_id[qid].type
        per_type[qtype] = per_type.get(qtype, 0) + 1
    counts = {name: c for name, c in kinds.items() if c or name == "excluded"}
    types = {q.id: q.type for q in golden.questions}
    return per_type_table(
        retrieval_values(scores, types),
        types,
        config.data.question_types,
        metric_names(config.retrieval.ks),
        counts=counts,
    )


def context_metrics(context_k: int) -> list[str]:
    """Retrieval at context_k, shown next to the judge's metrics."""
    return [f"recall@{context_k}", f"hit@{context_k}", "mrr", f"ndcg@{context_k}"]


#: The judge table's count of golden questions the RAG system gave no answer for.
ADAPTER_FAILED = "adapter_failed"


def failed_counts(
    golden: GoldenSet, failed: Collection[str], split: str | None = None
) -> dict[str, int]:
    """Per type: the golden questions (of ``split``, if given) the adapter gave no answer for."""
    counts: dict[str, int] = {}
    for q in golden.questions:
        if q.id in failed and (split is None or (q.split or "") == split):
            counts[q.type] = counts.get(q.type, 0) + 1
    return counts


#: The judge table's counts for the correctness axis (present only when the run has it).
CORRECTNESS_ASKED = "correctness_asked"
CORRECTNESS_NOT_OK = "correctness_not_ok"


def correctness_values(
    correctness: Mapping[str, CorrectnessVerdict], questions: Collection[str]
) -> MetricValues:
    """``correctness`` → question id → 0-2, for the ok correctness verdicts of ``questions``
    (the same value ``judge.results.values`` pairs; empty when there are none)."""
    column = {
        qid: value
        for qid, verdict in correctness.items()
        if qid in questions and (value := correctness_value(verdict)) is not None
    }
    return {"correctness": column} if column else {}


def correctness_counts(
    golden: GoldenSet, correctness: Mapping[str, CorrectnessVerdict], questions: Collection[str]
) -> dict[str, dict[str, int]]:
    """Per type: the questions of ``questions`` given a correctness verdict, and those whose
    verdict is not ok."""
    by_id = golden.by_id()
    asked: dict[str, int] = {}
    not_ok: dict[str, int] = {}
    for qid, verdict in correctness.items():
        if qid not in questions or qid not in by_id:
            continue
        qtype = by_id[qid].type
        asked[qtype] = asked.get(qtype, 0) + 1
        if correctness_value(verdict) is None:
            not_ok[qtype] = not_ok.get(qtype, 0) + 1
    return {CORRECTNESS_ASKED: asked, CORRECTNESS_NOT_OK: not_ok}


def judge_table(
    config: Config,
    golden: GoldenSet,
    scores: RetrievalScores,
    verdicts: list[Verdict],
    split: str | None = None,
    *,
    failed: Collection[str],
    correctness: Mapping[str, CorrectnessVerdict] | None = None,
) -> TypeTable:
    """Judge metrics next to retrieval at context_k, per type (primary metric: faithfulness).

    Non-ok verdicts are counted per status, never averaged; so are the questions the adapter
    failed for (``failed``, the run's failed ids), in ``adapter_failed`` (always there, 0 when
    none, so the table keeps its shape). ``split`` keeps one split only. ``correctness``
    (question id → correctness verdict; empty or None: the axis is off) adds the
    ``correctness`` column and its two counts when the run has any correctness verdict.
    """
    by_id = golden.by_id()
    if split is not None:
        verdicts = [v for v in verdicts if (by_id[v.question_id].split or "") == split]
    shown = context_metrics(config.retrieval.context_k)
    types = {q.id: q.type for q in golden.questions if split is None or (q.split or "") == split}
    values = judge_values(verdicts) | retrieval_values(scores, types, shown)
    expected = list(EXPECTED_METRICS) if any(v.score_probabilities for v in verdicts) else []
    counts = status_counts(golden, verdicts) | {
        ADAPTER_FAILED: failed_counts(golden, failed, split)
    }
    asked = {qid: v for qid, v in (correctness or {}).items() if qid in types}
    optional: list[str] = []
    if correctness:  # the run has the axis: every table of it shows the column
        optional.append("correctness")
        values |= correctness_values(asked, types)
        counts |= correctness_counts(golden, asked, types)
    return per_type_table(
        values,
        types,
        config.data.question_types,
        [*judge_table_metrics(optional), *expected, *shown],
        counts=counts,
    )
