"""Comparing per-type metrics: regressed, improved or noise; a metric with no value before is skipped."""

import pytest

from judge.results.compare import compare_metrics


def test_compare_metrics_directions() -> None:
    old = {"factual": {"recall@5": 0.80, "mrr": 0.5, "faithfulness": None}}
    new = {"factual": {"recall@5": 0.70, "mrr": 0.53, "faithfulness": 1.5}}
    changes = {c.metric: c for c in compare_metrics("retrieval", old, new, 0.05)}
    assert changes["recall@5"].direction == "regressed"
    assert changes["recall@5"].delta == pytest.approx(-0.10)
    assert changes["mrr"].direction == "noise"
    assert "faithfulness" not in changes  # no value before: nothing to compare
