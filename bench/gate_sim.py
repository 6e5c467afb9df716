"""Simulated nights for the regression gate: how often each rule cries wolf, how often it sees a
real drop (issue 10, part 4). Figures in docs/benchmarks.md and docs/gate.md.

A golden set shaped like the shipped sample (factual 12, procedural 8, negative 5,
out_of_scope 5) with per-question values drawn once; then nights. On a night where nothing
changed, each verdict is re-drawn with probability ``flip`` (the generator rewrites an answer a
little, the judge reads it a little differently), and each question's retrieval with
probability ``RETRIEVAL_FLIP``. On a night with a real drop, four factual questions (of those
with faithfulness 1 or 2) lose a faithfulness point on top of the same noise: the type's mean
falls by 4/12 = 0.333. Each night is compared with the night before by:

- the old rule: per-type means (each type and ``all``) of every metric, a fall of more than
  ``reports.regression_threshold`` = 0.05 regresses (what ``judge.results.compare`` did before);
- the new rule: ``judge.results.compare.compare_values`` with the default ``GateRule`` (paired,
  95 % bootstrap interval below 0, margins 0.05 / 0.10, at least 8 questions).

The false-alarm rate is the share of no-change nights with any regression; the detection rate
the share of drop nights where the rule calls factual faithfulness regressed (and, apart, any
regression at all). ``python bench/gate_sim.py [--nights N]``; ``make bench`` runs it.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.results.compare import (
    SECTIONS,
    GateRule,
    QuestionValues,
    Section,
    compare_values,
    paired_change,
)

TYPES = {"factual": 12, "procedural": 8, "negative": 5, "out_of_scope": 5}
OUT_OF_SCOPE = {"out_of_scope"}
#: Judge scores of the sample's kind of RAG system: mostly good, some partly grounded.
FAITHFULNESS = (0.10, 0.25, 0.65)  # P(0), P(1), P(2)
RELEVANCE = (0.05, 0.20, 0.75)
QUOTE_VERIFIED = 0.8
#: Rank of the first relevant chunk (one relevant chunk per question): 1, 2, 3, 4-10, none.
RANKS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, None)
RANK_P = (0.45, 0.15, 0.10, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.02, 0.10)
KS = (5, 1, 10)
#: A question's ranking changes between nights this often (an index rebuild, ties).
RETRIEVAL_FLIP = 0.05
OLD_THRESHOLD = 0.05
ALL = "all"
DROP_TYPE = "factual"
#: Questions of DROP_TYPE that lose a faithfulness point: 4 of 12 is the issue's fall of about
#: 0.3 (-0.333); 6 of 12 (-0.5) for comparison.
DROPS = (4, 6)


class Question(NamedTuple):
    qid: str
    type: str
    faithfulness: int
    relevance: int
    quote: bool
    rank: int | None
    """None: no relevant chunk retrieved; out-of-scope questions have no retrieval at all."""


def _question(qid: str, type_name: str, rng: np.random.Generator) -> Question:
    """A question's values as they are when nothing disturbs them."""
    return Question(
        qid,
        type_name,
        int(rng.choice(3, p=FAITHFULNESS)),
        int(rng.choice(3, p=RELEVANCE)),
        bool(rng.random() < QUOTE_VERIFIED),
        RANKS[int(rng.choice(len(RANKS), p=RANK_P))],
    )


def _golden(rng: np.random.Generator, sizes: dict[str, int] = TYPES) -> list[Question]:
    return [
        _question(f"{type_name}-{i:02d}", type_name, rng)
        for type_name, count in sizes.items()
        for i in range(count)
    ]


def _neighbour(score: int, rng: np.random.Generator) -> int:
    """A re-drawn verdict lands one point away (a 0 or a 2 can only go to 1)."""
    if score in (0, 2):
        return 1
    return int(rng.choice([0, 2]))


def _night(questions: list[Question], flip: float, rng: np.random.Generator) -> list[Question]:
    """One night's values: each verdict re-drawn with probability ``flip`` (each axis on its own),
    each ranking with probability RETRIEVAL_FLIP."""
    night = []
    for q in questions:
        f = _neighbour(q.faithfulness, rng) if rng.random() < flip else q.faithfulness
        r = _neighbour(q.relevance, rng) if rng.random() < flip else q.relevance
        quote = (not q.quote) if rng.random() < flip / 2 else q.quote
        rank = q.rank
        if q.type not in OUT_OF_SCOPE and rng.random() < RETRIEVAL_FLIP:
            rank = RANKS[int(rng.choice(len(RANKS), p=RANK_P))]
        night.append(q._replace(faithfulness=f, relevance=r, quote=quote, rank=rank))
    return night


def _dropped(questions: list[Question], size: int, rng: np.random.Generator) -> list[Question]:
    """The real drop: ``size`` questions of DROP_TYPE lose a faithfulness point."""
    candidates = [i for i, q in enumerate(questions) if q.type == DROP_TYPE and q.faithfulness > 0]
    chosen = set(rng.choice(candidates, size=size, replace=False).tolist())
    return [
        q._replace(faithfulness=q.faithfulness - 1) if i in chosen else q
        for i, q in enumerate(questions)
    ]


def _retrieval(rank: int | None) -> dict[str, float]:
    values: dict[str, float] = {}
    for index, k in enumerate(KS):
        found = rank is not None and rank <= k
        values[f"recall@{k}"] = float(found)
        values[f"hit@{k}"] = float(found)
        if index == 0:
            values["mrr"] = 0.0 if rank is None else 1.0 / rank
        values[f"ndcg@{k}"] = 1.0 / math.log2(rank + 1) if found and rank else 0.0
    return values


def values_of(night: list[Question]) -> QuestionValues:
    """A night's per-question values, as ``judge.results.values`` reads them from a folder."""
    types = {q.qid: q.type for q in night}
    retrieval: dict[str, dict[str, float]] = {}
    judge: dict[str, dict[str, float]] = {
        m: {} for m in ("faithfulness", "relevance", "full_marks", "quote_verified", "ok_share")
    }
    for q in night:
        if q.type not in OUT_OF_SCOPE:
            for metric, value in _retrieval(q.rank).items():
                retrieval.setdefault(metric, {})[q.qid] = value
        judge["faithfulness"][q.qid] = float(q.faithfulness)
        judge["relevance"][q.qid] = float(q.relevance)
        judge["full_marks"][q.qid] = float(q.faithfulness == 2 and q.relevance == 2)
        judge["quote_verified"][q.qid] = float(q.quote)
        judge["ok_share"][q.qid] = 1.0
    return QuestionValues(types, {"retrieval": retrieval, "judge": judge})


def _means(values: QuestionValues, section: Section) -> dict[tuple[str, str], float]:
    """(type, metric) → mean, each type and ``all``: the per-type table the old rule read."""
    means = {}
    for metric, per_question in values.values[section].items():
        groups: dict[str, list[float]] = {}
        for qid, value in per_question.items():
            groups.setdefault(values.types[qid], []).append(value)
            groups.setdefault(ALL, []).append(value)
        for type_name, group in groups.items():
            means[(type_name, metric)] = statistics.fmean(group)
    return means


def old_rule(before: QuestionValues, after: QuestionValues) -> set[tuple[str, str, str]]:
    """(section, type, metric) whose per-type mean fell by more than 0.05 (the old gate)."""
    fell = set()
    for section in SECTIONS:
        old, new = _means(before, section), _means(after, section)
        for key, value in new.items():
            if key in old and value - old[key] < -OLD_THRESHOLD:
                fell.add((section, *key))
    return fell


def new_rule(
    before: QuestionValues, after: QuestionValues, rule: GateRule
) -> set[tuple[str, str, str]]:
    """(section, type, metric) the paired gate calls regressed."""
    return {
        (c.section, c.type, c.metric)
        for section in SECTIONS
        for c in compare_values(section, before, after, rule, tuple(TYPES))
        if c.direction == "regressed"
    }


def pooled_rule(
    before: QuestionValues, after: QuestionValues, rule: GateRule
) -> set[tuple[str, str, str]]:
    """(section, ``all``, metric) regressed when each metric is also compared pooled over all
    questions: a variant the gate does not use (the false alarms it adds are in ``run``)."""
    fell = set()
    for section in SECTIONS:
        old_metrics = before.values[section]
        for metric, new in after.values[section].items():
            ids = [q for q in new if q in old_metrics.get(metric, {})]
            old = [old_metrics[metric][q] for q in ids]
            change = paired_change(section, ALL, metric, ids, old, [new[q] for q in ids], rule)
            if change.direction == "regressed":
                fell.add((section, ALL, metric))
    return fell


TARGET = ("judge", DROP_TYPE, "faithfulness")
RULES = ("old", "new", "new_pooled")


def _flags(
    before: QuestionValues, after: QuestionValues, rule: GateRule
) -> dict[str, set[tuple[str, str, str]]]:
    new = new_rule(before, after, rule)
    return {
        "old": old_rule(before, after),
        "new": new,
        "new_pooled": new | pooled_rule(before, after, rule),
    }


def simulate(nights: int, flip: float, seed: int = 10) -> dict[str, Any]:
    """For each rule, over ``nights`` golden sets of their own: the share of no-change nights
    with any regression (false alarm), and of drop nights where factual faithfulness is called
    regressed (detection), for each drop size; each night is compared with the evening
    before."""
    rng = np.random.default_rng(seed)
    rule = GateRule()
    false_alarms = dict.fromkeys(RULES, 0)
    detected = {(name, size): 0 for name in RULES for size in DROPS}
    for _ in range(nights):
        golden = _golden(rng)
        evening = values_of(_night(golden, flip, rng))
        quiet = values_of(_night(golden, flip, rng))
        drops = {size: values_of(_night(_dropped(golden, size, rng), flip, rng)) for size in DROPS}
        for name, fell in _flags(evening, quiet, rule).items():
            false_alarms[name] += bool(fell)
        for size, night in drops.items():
            for name, fell in _flags(evening, night, rule).items():
                detected[(name, size)] += TARGET in fell
    result: dict[str, Any] = {"nights": nights, "flip": flip}
    for name in RULES:
        result[f"{name}_false_alarm"] = false_alarms[name] / nights
        for size in DROPS:
            result[f"{name}_detects_{size}_of_12"] = detected[(name, size)] / nights
    return result


def time_large_run(n_questions: int = 10_000, repeats: int = 3, seed: int = 4) -> dict[str, Any]:
    """Seconds for the paired comparison of two runs of ``n_questions`` (both sections, every
    metric: 10 retrieval metrics and 5 judge metrics, 4 types and ``all``); median of
    ``repeats``."""
    rng = np.random.default_rng(seed)
    total = sum(TYPES.values())
    sizes = {t: n_questions * n // total for t, n in TYPES.items()}
    sizes["factual"] += n_questions - sum(sizes.values())
    golden = _golden(rng, sizes)
    before = values_of(_night(golden, 0.10, rng))
    after = values_of(_night(golden, 0.10, rng))
    rule = GateRule()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        changes = [
            c for s in SECTIONS for c in compare_values(s, before, after, rule, tuple(TYPES))
        ]
        seconds.append(time.perf_counter() - start)
    return {
        "questions": len(golden),
        "comparisons": len(changes),
        "seconds": round(statistics.median(seconds), 3),
    }


def run(nights: int = 500, flips: tuple[float, ...] = (0.05, 0.10, 0.20)) -> dict[str, Any]:
    return {
        "simulations": [simulate(nights, flip) for flip in flips],
        "large_run": time_large_run(),
    }


def describe(results: dict[str, Any]) -> list[str]:
    drops = " ".join(f"{size}/12" for size in DROPS)
    lines = [
        "  re-drawn | false alarms: old · new · new+pooled | detects factual faithfulness "
        f"falling ({drops} questions by a point): old · new · new+pooled"
    ]
    for r in results["simulations"]:
        cells = []
        for size in DROPS:
            cells.append(" · ".join(f"{r[f'{name}_detects_{size}_of_12']:5.1%}" for name in RULES))
        lines.append(
            f"  {r['flip']:>7.0%} | "
            + " · ".join(f"{r[f'{name}_false_alarm']:5.1%}" for name in RULES)
            + " | "
            + " | ".join(cells)
            + f"   ({r['nights']} nights)"
        )
    large = results["large_run"]
    lines.append(
        f"  paired comparison of two {large['questions']:,}-question runs: "
        f"{large['comparisons']} (type, metric) comparisons in {large['seconds']} s"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=500, help="nights per noise level")
    args = parser.parse_args()
    print("\n".join(describe(run(args.nights))))


if __name__ == "__main__":
    main()
