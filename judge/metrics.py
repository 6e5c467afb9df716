"""What a retrieval metric is: its name at each k, its scale, and which way is better.

*Who computes* the metrics is ``judge.retrieval`` (with trec_eval's conventions, written out
there); this module only says *what they are*, the way ir_measures keeps a measure apart from
its providers. It is a leaf: it imports nothing from the package, so the configuration (which
checks that ``sweep.primary`` names a metric) and the scorer can both use it without an import
circle (``config → retrieval → inputs → config`` was one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, NamedTuple

Measure = Literal["recall", "hit", "mrr", "ndcg"]

#: The measures in display order at each k; ``mrr`` has no k (it reads the whole ranking).
MEASURES: Final[tuple[Measure, ...]] = ("recall", "hit", "mrr", "ndcg")

#: Every retrieval metric is a share (recall, hit) or a normalised gain (mrr, ndcg): a value
#: in [0, 1] for one question, so a mean over questions is in [0, 1] too.
RETRIEVAL_SCALE: Final[tuple[float, float]] = (0.0, 1.0)


class RetrievalMetric(NamedTuple):
    """One retrieval metric, e.g. ``RetrievalMetric("ndcg", 5)`` is ``ndcg@5``."""

    measure: Measure
    k: int | None
    """The cut-off; None for ``mrr``, which is read over the whole ranking."""

    @property
    def name(self) -> str:
        """The name in tables, config (``sweep.primary``) and ``report.json``."""
        return self.measure if self.k is None else f"{self.measure}@{self.k}"

    @property
    def scale(self) -> tuple[float, float]:
        """The lowest and highest value (the gate's ``margin_share`` is on this scale)."""
        return RETRIEVAL_SCALE

    @property
    def higher_is_better(self) -> bool:
        """Always True: more relevant chunks found, or found higher up, is better."""
        return True


def retrieval_metrics(ks: Sequence[int]) -> list[RetrievalMetric]:
    """The metrics at ``ks`` in display order: for each k recall, hit, ndcg; ``mrr`` once, after
    the first (primary) k's hit, so the primary k's four metrics come first."""
    metrics: list[RetrievalMetric] = []
    for index, k in enumerate(ks):
        for measure in MEASURES:
            if measure != "mrr":
                metrics.append(RetrievalMetric(measure, k))
            elif index == 0:
                metrics.append(RetrievalMetric("mrr", None))
    return metrics


def metric_names(ks: Sequence[int]) -> list[str]:
    """Metric names in display order: for each k recall, hit, ndcg; ``mrr`` after the first k."""
    return [metric.name for metric in retrieval_metrics(ks)]
