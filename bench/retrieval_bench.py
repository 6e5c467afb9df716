"""Retrieval scoring speed: judge.retrieval against pytrec_eval (trec_eval's C code), same data.

100,000 generated questions, 100 ranked chunks each, 1-5 relevant chunks per question (about
three quarters of questions have one in their ranking). Both sides compute recall, hit/success
and nDCG at k = 1, 5, 10 and the reciprocal rank.

What is timed: for judge, ``score_rankings`` from ranked lists and relevant sets; for
pytrec_eval, building its evaluator from the qrels and ``evaluate`` on the run dict (the form
its API takes). Building the input structures is not timed on either side.
"""

from __future__ import annotations

import random
import time
from typing import Any

from judge.retrieval import score_rankings

KS = (5, 1, 10)


def generate(n_questions: int, depth: int, seed: int = 7) -> tuple[list[list[str]], list[set[str]]]:
    rng = random.Random(seed)
    pool = [f"doc{i}" for i in range(20_000)]
    rankings, relevant = [], []
    for _ in range(n_questions):
        ranking = rng.sample(pool, depth)
        n_rel = rng.randint(1, 5)
        if rng.random() < 0.75:
            found = rng.sample(ranking, rng.randint(1, n_rel))
            rel = set(found) | set(rng.sample(pool, n_rel - len(found)))
        else:
            rel = set(rng.sample(pool, n_rel)) - set(ranking) or {"never-retrieved"}
        rankings.append(ranking)
        relevant.append(rel)
    return rankings, relevant


def run(n_questions: int = 100_000, depth: int = 100) -> dict[str, Any]:
    rankings, relevant = generate(n_questions, depth)
    start = time.perf_counter()
    ours = score_rankings(rankings, relevant, KS)
    ours_s = time.perf_counter() - start
    result: dict[str, Any] = {
        "questions": n_questions,
        "depth": depth,
        "judge_s": round(ours_s, 3),
        "judge_qps": round(n_questions / ours_s),
    }
    try:
        import pytrec_eval
    except ImportError:
        result["pytrec_eval"] = "not installed"
        return result
    qrels = {f"q{i}": {d: 1 for d in rel} for i, rel in enumerate(relevant)}
    run_dict = {
        f"q{i}": {d: float(depth - r) for r, d in enumerate(ranking)}
        for i, ranking in enumerate(rankings)
    }
    cut = ",".join(str(k) for k in sorted(KS))
    start = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"recall.{cut}", f"success.{cut}", "recip_rank", f"ndcg_cut.{cut}"}
    )
    reference = evaluator.evaluate(run_dict)
    ref_s = time.perf_counter() - start
    result["pytrec_eval_s"] = round(ref_s, 3)
    result["pytrec_eval_qps"] = round(n_questions / ref_s)
    result["speedup"] = round(ref_s / ours_s, 2)
    # The two must agree, or the speed means nothing.
    worst = max(
        abs(ours["ndcg@10"][i] - reference[f"q{i}"]["ndcg_cut_10"]) for i in range(n_questions)
    )
    result["max_abs_diff_ndcg@10"] = worst
    return result


if __name__ == "__main__":
    print(run())
