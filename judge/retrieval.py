"""Retrieval metrics per question, with the conventions of trec_eval.

For a question with relevant set R and ranking d_1, d_2, ... (best first, as the run lists it):

- ``recall@k``  = |R ∩ {d_1..d_k}| / |R|                        (trec_eval ``recall_k``)
- ``hit@k``     = 1 if any relevant chunk is in the top k, else 0 (trec_eval ``success_k``;
  some tutorials call this "recall")
- ``mrr``       = 1 / rank of the first relevant chunk in the whole ranking, 0 if none
  (trec_eval ``recip_rank``; the mean over questions is the MRR)
- ``ndcg@k``    = DCG@k / IDCG@k with binary gain and log2 discount:
  DCG@k = Σ_{i ≤ k, d_i ∈ R} 1 / log2(i + 1); IDCG@k is the DCG of an ideal ranking of *all*
  relevant chunks, i.e. Σ_{i=1}^{min(k, |R|)} 1 / log2(i + 1)     (trec_eval ``ndcg_cut_k``)

A question with no relevant chunks (out of scope) has no retrieval score: it is excluded from
means and counted. So is a question whose relevant chunks are not labelled
(``relevant_chunks: null``): it is judged, but its retrieval is unknown, never 0 or 1. A question that retrieved nothing scores 0 on every metric. Rank order is the
run's list order; trec_eval orders by score instead, which agrees whenever scores are strictly
decreasing (``judge.inputs.trec`` writes such scores).

The metric names, their scale and direction are ``judge.metrics``: this module computes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import repeat
from typing import Literal, NamedTuple

from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.metrics import metric_names

#: Why a question has no retrieval score: out of scope (nothing to find), relevant chunks not
#: labelled (unknown, so never scored as 0 or 1), or the adapter failed for it.
Exclusion = Literal["out_of_scope", "unlabelled", "failed"]


def _ideal_dcg_table(size: int) -> list[float]:
    """table[n] = Σ_{i=1}^{n} 1/log2(i+1), the IDCG of n relevant chunks."""
    table = [0.0]
    for i in range(1, size + 1):
        table.append(table[-1] + 1.0 / math.log2(i + 1))
    return table


def _relevant_ranks(
    rankings: Sequence[Sequence[str]],
    relevant: Sequence[frozenset[str] | set[str]],
    max_k: int,
) -> tuple[list[int], list[int], list[int]]:
    """What the metrics need of each ranking: (the owner of each relevant rank within the top
    ``max_k``, those ranks ascending per owner, the rank of each ranking's first relevant chunk
    or 0 when it has none).

    Only the top ``max_k`` and the first hit are looked for: a C-level set intersection with
    the top ``max_k``, then, when nothing relevant is there, a C-level ``filter`` that stops at
    the first relevant chunk and ``list.index`` for its rank. The rest of a ranking is never
    located chunk by chunk.
    """
    owner: list[int] = []
    top_ranks: list[int] = []
    first = [0] * len(rankings)
    for i, (ranking, rel) in enumerate(zip(rankings, relevant, strict=True)):
        top = ranking[:max_k]
        found = rel.intersection(top)
        if found:
            ranks = sorted(map(top.index, found))  # 0-based
            first[i] = ranks[0] + 1
            owner.extend(repeat(i, len(ranks)))
            top_ranks.extend(ranks)
        elif len(ranking) > max_k:
            hit = next(filter(rel.__contains__, ranking), None)
            if hit is not None:
                first[i] = ranking.index(hit) + 1
    return owner, top_ranks, first


def score_rankings(
    rankings: Sequence[Sequence[str]],
    relevant: Sequence[frozenset[str] | set[str]],
    ks: Sequence[int],
) -> dict[str, list[float]]:
    """Score many rankings at once; returns one column of values per metric name.

    Every ``relevant[i]`` must be non-empty and ``rankings[i]`` free of duplicates (the run
    loader guarantees both). Built for speed (docs/retrieval.md, ``bench/retrieval_bench.py``):
    the one Python loop (``_relevant_ranks``) finds the relevant ranks within the largest k
    and the first relevant rank, and the per-k sums are numpy ``bincount`` passes over those
    ranks. Ranks are kept in ascending order per question, so each DCG is summed in the same
    order as trec_eval's and the values are equal to the last bit.
    """
    import numpy as np  # here, not at the top: `judge check` scores retrieval without numpy

    n = len(rankings)
    max_k = max(ks)
    owner, top_ranks, first = _relevant_ranks(rankings, relevant, max_k)
    sizes = np.fromiter(map(len, relevant), dtype=np.int64, count=n)
    ideal = np.array(_ideal_dcg_table(max(max_k, int(sizes.max()) if n else 0)))
    # discount[r] for a 0-based rank r: 1/log2(rank + 1) of the 1-based rank.
    discount = np.array([1.0 / math.log2(i + 1) for i in range(1, max_k + 1)])
    who = np.array(owner, dtype=np.int64)
    rank_of = np.array(top_ranks, dtype=np.int64)
    first_rank = np.array(first, dtype=np.float64)
    mrr = np.divide(1.0, first_rank, out=np.zeros(n), where=first_rank > 0)
    columns: dict[str, list[float]] = {"mrr": mrr.tolist()}
    for k in ks:
        within = rank_of < k
        owners = who[within]
        found_k = np.bincount(owners, minlength=n).astype(np.float64)
        dcg = np.bincount(owners, weights=discount[rank_of[within]], minlength=n)
        columns[f"recall@{k}"] = (found_k / np.maximum(sizes, 1)).tolist()
        columns[f"hit@{k}"] = (found_k > 0).astype(np.float64).tolist()
        columns[f"ndcg@{k}"] = (dcg / ideal[np.maximum(np.minimum(k, sizes), 1)]).tolist()
    return {name: columns[name] for name in metric_names(ks)}


class RetrievalScores(NamedTuple):
    """Per-question retrieval metrics for one run."""

    question_ids: list[str]
    """Scored questions, golden order."""
    values: dict[str, list[float]]
    """Metric name → one value per scored question."""
    excluded: dict[str, str]
    """Question id → why it has no retrieval score, in words."""
    ks: tuple[int, ...]
    why_excluded: dict[str, Exclusion]
    """Question id → why it has no retrieval score, as a kind (tables count each kind apart)."""


def score_run(golden: GoldenSet, run: Run, ks: Sequence[int]) -> RetrievalScores:
    """Score every golden question of ``run``; ``ks[0]`` is the primary k (context_k)."""
    ids: list[str] = []
    rankings: list[list[str]] = []
    relevant: list[frozenset[str]] = []
    excluded: dict[str, str] = {}
    kinds: dict[str, Exclusion] = {}
    for question in golden.questions:
        record = run.records.get(question.id)
        if question.relevant_chunks is None:
            excluded[question.id] = "relevant chunks not labelled"
            kinds[question.id] = "unlabelled"
            continue
        if not question.relevant_chunks:
            excluded[question.id] = "no relevant chunks (out of scope)"
            kinds[question.id] = "out_of_scope"
            continue
        if record is None:
            excluded[question.id] = f"adapter failed: {run.meta.failed.get(question.id, '?')}"
            kinds[question.id] = "failed"
            continue
        ids.append(question.id)
        rankings.append([item.chunk_id for item in record.retrieved])
        relevant.append(frozenset(question.relevant_chunks))
    return RetrievalScores(ids, score_rankings(rankings, relevant, ks), excluded, tuple(ks), kinds)
