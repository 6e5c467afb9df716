import math
import random
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.metrics import retrieval_metrics
from judge.retrieval import score_rankings, score_run

Tiny = Callable[..., Config]


def test_hand_computed_values_on_the_tiny_set(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    scores = score_run(golden, load_run(config.data.run, golden), [5, 1])
    assert scores.question_ids == ["q1", "q2", "q3"]
    assert scores.excluded == {"q4": "no relevant chunks (out of scope)"}
    v = scores.values
    # q1: the one relevant chunk at rank 1 -> every metric 1.
    # q2: relevant {restore, auto} at ranks 3 and 1.
    #     recall@1 = 1/2; recall@5 = 2/2; mrr = 1/1
    #     ndcg@5 = (1/log2(2) + 1/log2(4)) / (1/log2(2) + 1/log2(3)) = 1.5 / 1.6309 = 0.91972
    # q3: the relevant chunk was not retrieved -> every metric 0.
    assert v["recall@1"] == [1.0, 0.5, 0.0]
    assert v["recall@5"] == [1.0, 1.0, 0.0]
    assert v["hit@1"] == [1.0, 1.0, 0.0]
    assert v["mrr"] == [1.0, 1.0, 0.0]
    assert v["ndcg@1"] == [1.0, 1.0, 0.0]
    assert v["ndcg@5"][1] == pytest.approx(0.91972, abs=1e-5)


def test_relevant_chunk_at_rank_six() -> None:
    ranking = [f"d{i}" for i in range(1, 11)]
    v = score_rankings([ranking], [{"d6"}], [5, 10])
    # Outside the generator's 5 chunks: recall@5 = hit@5 = ndcg@5 = 0.
    # mrr = 1/6; ndcg@10 = (1/log2(7)) / (1/log2(2)) = 0.35621
    assert (v["recall@5"], v["hit@5"], v["ndcg@5"]) == ([0.0], [0.0], [0.0])
    assert v["mrr"] == [pytest.approx(1 / 6)]
    assert v["ndcg@10"] == [pytest.approx(1 / math.log2(7))]
    assert v["recall@10"] == [1.0]


def test_the_first_relevant_chunk_below_every_k_still_sets_the_reciprocal_rank() -> None:
    """The scorer looks for relevant chunks only within the largest k, and for the first one
    below it: a chunk at rank 25 of 30 (ks 5 and 10) gives mrr 1/25 and nothing else; with
    another at rank 3, mrr is 1/3 and the one at 25 counts for no k; a ranking exactly as
    long as the largest k and one shorter score as the top k alone."""
    ranking = [f"d{i}" for i in range(1, 31)]
    deep = score_rankings([ranking, ranking], [{"d25"}, {"d3", "d25"}], [5, 10])
    assert deep["mrr"] == [pytest.approx(1 / 25), pytest.approx(1 / 3)]
    assert deep["recall@10"] == [0.0, 0.5]
    assert deep["hit@5"] == [0.0, 1.0]
    assert deep["ndcg@10"][0] == 0.0
    assert deep["ndcg@10"][1] == pytest.approx((1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    short = score_rankings([ranking[:10], ranking[:4]], [{"d10", "x"}, {"d5"}], [5, 10])
    assert short["mrr"] == [pytest.approx(1 / 10), 0.0]
    assert short["recall@10"] == [0.5, 0.0]
    assert short["recall@5"] == [0.0, 0.0]


def test_empty_ranking_scores_zero() -> None:
    v = score_rankings([[]], [{"d1", "d2"}], [1, 5])
    assert all(column == [0.0] for column in v.values())


def test_ideal_dcg_counts_all_relevant_chunks() -> None:
    # Three relevant chunks, one found at rank 1, k = 2:
    # DCG@2 = 1; IDCG@2 = 1 + 1/log2(3) = 1.63093 -> 0.61315
    v = score_rankings([["a", "x", "y"]], [{"a", "b", "c"}], [2])
    assert v["ndcg@2"] == [pytest.approx(1 / (1 + 1 / math.log2(3)))]
    assert v["recall@2"] == [pytest.approx(1 / 3)]


def test_values_equal_trec_eval_on_generated_runs() -> None:
    """The same ranked lists through pytrec_eval (trec_eval's own code) give the same numbers."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(20261129)
    ks = [1, 3, 5, 10, 20]
    pool = [f"doc{i}" for i in range(60)]
    rankings: list[list[str]] = []
    relevant: list[set[str]] = []
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(300):
        qid = f"q{q}"
        rel = set(rng.sample(pool, rng.randint(1, 6)))
        ranking = rng.sample(pool, rng.randint(1, 40))
        # Judged non-relevant chunks (grade 0) must not count either.
        qrels[qid] = {d: 1 for d in rel} | {d: 0 for d in rng.sample(pool, 5) if d not in rel}
        run[qid] = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
        rankings.append(ranking)
        relevant.append(rel)
    cut = ",".join(map(str, ks))
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"recall.{cut}", f"success.{cut}", "recip_rank", f"ndcg_cut.{cut}"}
    )
    reference = evaluator.evaluate(run)
    ours = score_rankings(rankings, relevant, ks)
    for index in range(len(rankings)):
        expected = reference[f"q{index}"]
        assert ours["mrr"][index] == pytest.approx(expected["recip_rank"], abs=1e-9)
        for k in ks:
            assert ours[f"recall@{k}"][index] == pytest.approx(expected[f"recall_{k}"], abs=1e-9)
            assert ours[f"hit@{k}"][index] == pytest.approx(expected[f"success_{k}"], abs=1e-9)
            assert ours[f"ndcg@{k}"][index] == pytest.approx(expected[f"ndcg_cut_{k}"], abs=1e-9)


def test_the_columns_are_the_metrics_of_judge_metrics_on_their_scale() -> None:
    """The scorer computes exactly what ``judge.metrics`` says a metric is: the same names in
    the same order, every value within the metric's scale."""
    rng = random.Random(7)
    pool = [f"d{i}" for i in range(20)]
    rankings = [rng.sample(pool, rng.randint(0, 12)) for _ in range(50)]
    relevant = [set(rng.sample(pool, rng.randint(1, 5))) for _ in range(50)]
    ks = [5, 1, 10]
    columns = score_rankings(rankings, relevant, ks)
    metrics = retrieval_metrics(ks)
    assert list(columns) == [metric.name for metric in metrics]
    for metric in metrics:
        low, high = metric.scale
        assert all(low <= value <= high for value in columns[metric.name]), metric.name
    # A perfect ranking reaches the top of every scale; a ranking of nothing relevant, the bottom.
    best = score_rankings([["a", "x"]], [{"a"}], ks)
    worst = score_rankings([["x", "y"]], [{"a"}], ks)
    assert {name: v[0] for name, v in best.items()} == {m.name: m.scale[1] for m in metrics}
    assert {name: v[0] for name, v in worst.items()} == {m.name: m.scale[0] for m in metrics}
