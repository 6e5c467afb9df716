"""Retrieval scoring speed: judge.retrieval against pytrec_eval (trec_eval's C code), same data.

100,000 generated questions, 100 ranked chunks each, 1-5 relevant chunks per question (about
three quarters of questions have one in their ranking). Both sides compute recall, hit/success
and nDCG at k = 1, 5, 10 and the reciprocal rank.

Timed in alternating pairs (A B B A ...) by the CPU seconds of this process
(``time.process_time``: both sides run in it, single-threaded; wall-clock seconds on a shared
machine measure the other jobs too); the ratio of each pair, its median and range, and the
load average are reported. What is timed: for judge, ``score_rankings`` from ranked lists and
relevant sets; for pytrec_eval, building its evaluator from the qrels and ``evaluate`` on the
run dict (the form its API takes). Building the input structures is not timed on either side.
"""

from __future__ import annotations

import os
import random
import statistics
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


def _time_ours(rankings: list[list[str]], relevant: list[set[str]]) -> tuple[float, Any]:
    start = time.process_time()
    ours = score_rankings(rankings, relevant, KS)
    return time.process_time() - start, ours


def _time_reference(qrels: dict[str, Any], run_dict: dict[str, Any]) -> tuple[float, Any]:
    import pytrec_eval

    cut = ",".join(str(k) for k in sorted(KS))
    start = time.process_time()
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"recall.{cut}", f"success.{cut}", "recip_rank", f"ndcg_cut.{cut}"}
    )
    reference = evaluator.evaluate(run_dict)
    return time.process_time() - start, reference


def run(n_questions: int = 100_000, depth: int = 100, pairs: int = 5) -> dict[str, Any]:
    """Time both sides alternately (A B B A ...), CPU seconds: the ratio of each pair, its
    median and range, with the load average beside it (a shared machine moves seconds, not
    much the ratio)."""
    rankings, relevant = generate(n_questions, depth)
    ours_s, ours = _time_ours(rankings, relevant)
    result: dict[str, Any] = {"questions": n_questions, "depth": depth}
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        result.update(judge_s=round(ours_s, 3), judge_qps=round(n_questions / ours_s))
        result["pytrec_eval"] = "not installed"
        return result
    qrels = {f"q{i}": {d: 1 for d in rel} for i, rel in enumerate(relevant)}
    run_dict = {
        f"q{i}": {d: float(depth - r) for r, d in enumerate(ranking)}
        for i, ranking in enumerate(rankings)
    }
    ratios, mine, theirs = [], [], []
    reference: Any = None
    for pair in range(pairs):
        if pair % 2:
            ours_s, _ = _time_ours(rankings, relevant)
            ref_s, reference = _time_reference(qrels, run_dict)
        else:
            ref_s, reference = _time_reference(qrels, run_dict)
            ours_s, _ = _time_ours(rankings, relevant)
        mine.append(ours_s)
        theirs.append(ref_s)
        ratios.append(ref_s / ours_s)
    ours_med, ref_med = statistics.median(mine), statistics.median(theirs)
    result.update(
        judge_s=round(ours_med, 3),
        judge_qps=round(n_questions / ours_med),
        pytrec_eval_s=round(ref_med, 3),
        pytrec_eval_qps=round(n_questions / ref_med),
        speedup=round(statistics.median(ratios), 2),
        speedup_range=[round(min(ratios), 2), round(max(ratios), 2)],
        pairs=pairs,
        load_average=round(os.getloadavg()[0], 1),
    )
    # The two must agree, or the speed means nothing.
    worst = max(
        abs(ours[f"{metric}@{k}"][i] - reference[f"q{i}"][f"{theirs_name}_{k}"])
        for metric, theirs_name in (("ndcg", "ndcg_cut"), ("recall", "recall"), ("hit", "success"))
        for k in KS
        for i in range(n_questions)
    )
    worst_rr = max(
        abs(ours["mrr"][i] - reference[f"q{i}"]["recip_rank"]) for i in range(n_questions)
    )
    result["max_abs_diff"] = max(worst, worst_rr)
    return result


if __name__ == "__main__":
    print(run())
