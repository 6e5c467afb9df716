import ast
from pathlib import Path

import judge.metrics
from judge.metrics import RETRIEVAL_SCALE, RetrievalMetric, metric_names, retrieval_metrics


def test_metric_names_put_the_primary_k_first() -> None:
    assert metric_names([5, 1, 10]) == [
        "recall@5",
        "hit@5",
        "mrr",
        "ndcg@5",
        "recall@1",
        "hit@1",
        "ndcg@1",
        "recall@10",
        "hit@10",
        "ndcg@10",
    ]


def test_a_metric_knows_its_name_scale_and_direction() -> None:
    assert RetrievalMetric("ndcg", 5).name == "ndcg@5"
    assert RetrievalMetric("mrr", None).name == "mrr"
    # mrr has no k: it appears once, whatever the ks.
    assert [m for m in retrieval_metrics([3, 7]) if m.measure == "mrr"] == [
        RetrievalMetric("mrr", None)
    ]
    for metric in retrieval_metrics([1, 5]):
        assert metric.scale == RETRIEVAL_SCALE == (0.0, 1.0)
        assert metric.higher_is_better


def test_the_metrics_module_is_a_leaf() -> None:
    """It imports nothing from the package, so config and retrieval can both use it without an
    import circle (the contracts in .importlinter check the circles; this checks the leaf)."""
    tree = ast.parse(Path(judge.metrics.__file__).read_text(encoding="utf-8"))
    imported: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            imported.append("." * node.level + (node.module or ""))
    assert imported  # the walk saw the imports at all
    assert [name for name in imported if name.startswith(("judge", "."))] == []
