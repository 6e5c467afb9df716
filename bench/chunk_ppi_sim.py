"""Coverage of the corrected recall@k interval (issue 23, part 4), beside the labels alone.

A synthetic golden set: each question has 1 to 3 truly relevant chunks; the system retrieves
5 to 10 chunks (the graded depth), and each relevant chunk is among them with probability
``found`` (``good`` retrieval: 0.85, placed towards the top, rank r weighted 1/r; ``poor``:
0.5, any rank alike). The judge grades every retrieved chunk, relevant (grade ≥ 2) with
probability ``sensitivity`` for a truly relevant chunk and ``1 − specificity`` for any other.
A share of the questions is labelled (the human recall@k is known; the labelled ones are the
first of the draw, i.e. a uniform random sample); the rest give only the judged recall@k.

Each draw asks ``judge.audit.chunk_agreement.corrected_cell`` (``ppi_mean`` on the scale 0–1,
λ tuned, plus-four t interval: what the reports show) for the mean human recall@5, and the
same with λ = 0 (the labels alone). The truth is the population's mean human recall@5,
computed once per retrieval profile from 4,000,000 questions (its error, about 0.0002, is far
below any interval's width). For each regime: the share of draws whose interval holds the
truth, and the mean widths. Target: at least 93 % in every regime at the nominal 95 %.

``python bench/chunk_ppi_sim.py`` (about 3 minutes on one core; ``--jobs 2`` splits the
regimes over two processes, ``--quick`` for a smoke run, ``--draws`` to change the 1,000 draws
per regime); ``make bench`` runs it (bench/run.py).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.audit.chunk_agreement import (
    corrected_cell,
)
from judge.audit.ppi import ppi_mean
from judge.inputs.golden import GoldenQuestion
from judge.metrics import RETRIEVAL_SCALE
from judge.results.chunk_grades import (
    GradedChunk,
)

K = 5
MIN_DEPTH, MAX_DEPTH = 5, 10
MAX_RELEVANT = 3
#: Retrieval profiles: (probability that a relevant chunk is retrieved, rank-weighted placing).
PROFILES: dict[str, tuple[float, bool]] = {"good": (0.85, True), "poor": (0.5, False)}
#: Judges: (name, sensitivity, specificity) per chunk.
JUDGES: tuple[tuple[str, float, float], ...] = (
    ("sharp", 0.95, 0.95),
    ("fair", 0.8, 0.9),
    ("weak", 0.6, 0.75),
    ("lenient", 0.95, 0.6),
    ("harsh", 0.5, 0.97),
)
SHARES = (0.1, 0.25, 0.5, 0.8)
SIZES = (20, 50, 150, 500)
TARGET = 0.93
TRUTH_QUESTIONS = 4_000_000


class Regime(NamedTuple):
    profile: str
    judge: str
    share: float
    n: int


class Draw(NamedTuple):
    """One synthetic golden set, as arrays (one row per question, one column per rank)."""

    depth: np.ndarray
    """Chunks retrieved (= graded), 5..10."""
    relevant: np.ndarray
    """How many chunks are truly relevant, 1..3."""
    ranks: np.ndarray
    """(n, 3): the rank of each relevant chunk, 0 where it was not retrieved."""
    grades: np.ndarray
    """(n, 10): the judge's grade at each rank, -1 past the depth."""


def regimes() -> Iterator[Regime]:
    for profile in PROFILES:
        for judge, _, _ in JUDGES:
            for share in SHARES:
                for n in SIZES:
                    yield Regime(profile, judge, share, n)


def _retrieve(profile: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Depth, number of relevant chunks and their ranks (0: not retrieved) of ``n`` questions."""
    found, weighted = PROFILES[profile]
    depth = rng.integers(MIN_DEPTH, MAX_DEPTH + 1, n)
    relevant = rng.integers(1, MAX_RELEVANT + 1, n)
    positions = np.arange(1, MAX_DEPTH + 1)
    # Weighted sampling without replacement (Efraimidis and Spirakis): key u^(1/w), the largest
    # keys first; w = 1/r puts relevant chunks towards the top, w = 1 anywhere.
    keys = rng.random((n, MAX_DEPTH)) ** (positions if weighted else 1)
    keys[positions[None, :] > depth[:, None]] = -1.0
    order = np.argsort(-keys, axis=1)[:, :MAX_RELEVANT] + 1
    retrieved = rng.random((n, MAX_RELEVANT)) < found
    retrieved &= np.arange(MAX_RELEVANT)[None, :] < relevant[:, None]
    return depth, relevant, np.where(retrieved, order, 0)


def _human_recall(relevant: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    return ((ranks > 0) & (ranks <= K)).sum(axis=1) / relevant


@cache
def truth(profile: str) -> float:
    """The population's mean human recall@K, from ``TRUTH_QUESTIONS`` questions (seeded)."""
    rng = np.random.default_rng(12345)
    total = 0.0
    for _ in range(TRUTH_QUESTIONS // 500_000):
        _, relevant, ranks = _retrieve(profile, 500_000, rng)
        total += float(_human_recall(relevant, ranks).sum())
    return total / TRUTH_QUESTIONS


def draw(regime: Regime, rng: np.random.Generator) -> Draw:
    depth, relevant, ranks = _retrieve(regime.profile, regime.n, rng)
    _, sensitivity, specificity = next(j for j in JUDGES if j[0] == regime.judge)
    rows = np.arange(regime.n)[:, None]
    truly = np.zeros((regime.n, MAX_DEPTH + 1), dtype=bool)
    truly[rows, ranks] = True
    truly = truly[:, 1:]  # column r - 1 is rank r; rank 0 (not retrieved) dropped
    chance = rng.random((regime.n, MAX_DEPTH))
    judged = np.where(truly, chance < sensitivity, chance < 1 - specificity)
    grades = 2 * judged + (rng.random((regime.n, MAX_DEPTH)) < 0.5)
    past = np.arange(1, MAX_DEPTH + 1)[None, :] > depth[:, None]
    return Draw(depth, relevant, ranks, np.where(past, -1, grades))


def pairs(d: Draw) -> tuple[np.ndarray, np.ndarray]:
    """Per question: the human recall@K and the judged recall@K (0 with nothing judged
    relevant), as ``judge.audit.chunk_agreement.recall_pairs`` computes them."""
    judged = d.grades >= 2
    in_pool = judged.sum(axis=1)
    top = judged[:, :K].sum(axis=1)
    predicted = np.where(in_pool > 0, top / np.maximum(in_pool, 1), 0.0)
    return _human_recall(d.relevant, d.ranks), predicted


def to_inputs(d: Draw) -> tuple[list[GoldenQuestion], list[GradedChunk]]:
    """The draw as the module's inputs (every question labelled), for the tests."""
    questions, graded = [], []
    for i in range(len(d.depth)):
        qid = f"q{i}"
        ranks = [int(r) for r in d.ranks[i][: d.relevant[i]]]
        relevant = tuple(f"{qid}-r{r}" if r else f"{qid}-missing{j}" for j, r in enumerate(ranks))
        questions.append(
            GoldenQuestion(
                id=qid, type="factual", question="?", relevant_chunks=relevant, answerable=True
            )
        )
        for rank in range(1, int(d.depth[i]) + 1):
            chunk = f"{qid}-r{rank}" if rank in ranks else f"{qid}-other{rank}"
            graded.append(GradedChunk(qid, chunk, rank, int(d.grades[i][rank - 1]), ""))
    return questions, graded


def measure(regime: Regime, draws: int, seed: int = 0) -> dict[str, Any]:
    """Coverage and mean width of the corrected and the labels-only interval."""
    rng = np.random.default_rng(zlib.crc32(f"{seed}:{tuple(regime)}".encode()))
    true = truth(regime.profile)
    labelled = max(1, round(regime.share * regime.n))
    covered = alone_covered = audit_covered = 0
    width = alone_width = audit_width = lam = 0.0
    for _ in range(draws):
        human, predicted = pairs(draw(regime, rng))
        y, p, u = human[:labelled].tolist(), predicted[:labelled].tolist(), predicted[labelled:]
        cell = corrected_cell(y, p, u.tolist())
        audit = ppi_mean(y, p, u.tolist(), bounds=RETRIEVAL_SCALE).shown
        assert cell.interval is not None and cell.labels_only is not None
        covered += cell.interval.low <= true <= cell.interval.high
        alone_covered += cell.labels_only.low <= true <= cell.labels_only.high
        audit_covered += audit.low <= true <= audit.high
        width += cell.interval.high - cell.interval.low
        alone_width += cell.labels_only.high - cell.labels_only.low
        audit_width += audit.high - audit.low
        lam += cell.lam or 0.0
    return {
        **regime._asdict(),
        "labelled": labelled,
        "truth": round(true, 4),
        "coverage": covered / draws,
        "labels_only_coverage": alone_covered / draws,
        "ppi_pp_coverage": audit_covered / draws,
        "width": width / draws,
        "labels_only_width": alone_width / draws,
        "ppi_pp_width": audit_width / draws,
        "lam": lam / draws,
    }


def _measure(job: tuple[Regime, int]) -> dict[str, Any]:
    return measure(*job)


def run(draws: int = 1000, quick: bool = False, workers: int = 1) -> dict[str, Any]:
    """Every regime; ``quick``: a tenth of the grid, 100 draws."""
    started = time.perf_counter()
    jobs = list(regimes())
    if quick:
        draws = min(draws, 100)
        jobs = jobs[::10]
    for profile in PROFILES:
        truth(profile)  # once, before any worker needs it
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            rows = list(pool.map(_measure, [(job, draws) for job in jobs], chunksize=4))
    else:
        rows = [measure(job, draws) for job in jobs]
    return {
        "draws": draws,
        "k": K,
        "truth": {profile: round(truth(profile), 4) for profile in PROFILES},
        "regimes": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _summary(rows: list[dict[str, Any]]) -> str:
    def mean(key: str) -> float:
        return sum(r[key] for r in rows) / len(rows)

    cov = [r["coverage"] for r in rows]
    return (
        f"{len(rows):>4}  {min(cov):>6.1%} {mean('coverage'):>6.1%} "
        f"{sum(c < TARGET for c in cov):>4}  {mean('width'):>5.3f}   "
        f"{min(r['ppi_pp_coverage'] for r in rows):>6.1%} {mean('ppi_pp_width'):>5.3f}   "
        f"{min(r['labels_only_coverage'] for r in rows):>6.1%} {mean('labels_only_width'):>5.3f}"
        f"   {mean('width') / mean('labels_only_width'):>5.2f} {mean('lam'):>4.2f}"
    )


def describe(results: dict[str, Any]) -> list[str]:
    rows = results["regimes"]
    lines = [
        f"corrected recall@{results['k']}, {results['draws']} draws per regime (target: >= "
        f"{TARGET:.0%} in every regime at the nominal 95 %; truth: "
        + ", ".join(f"{p} retrieval {t:.3f}" for p, t in results["truth"].items())
        + ")",
        f"  {'':<26}{'rows':>4}  {'shown: min':>6} {'mean':>6} {'<93%':>4}  {'width':>5}   "
        f"{'ppi++: min':>6} {'width':>5}   {'labels: min':>6} {'width':>5}   {'ratio':>5} "
        f"{'λ':>4}",
    ]
    groups: list[tuple[str, list[dict[str, Any]]]] = [("all regimes", rows)]
    for n in SIZES:
        groups.append((f"n = {n}", [r for r in rows if r["n"] == n]))
    for share in SHARES:
        groups.append((f"{share:.0%} labelled", [r for r in rows if r["share"] == share]))
    for judge, sensitivity, specificity in JUDGES:
        groups.append(
            (
                f"{judge} judge ({sensitivity:.0%}/{specificity:.0%})",
                [r for r in rows if r["judge"] == judge],
            )
        )
    for profile in PROFILES:
        groups.append((f"{profile} retrieval", [r for r in rows if r["profile"] == profile]))
    for label, group in groups:
        if group:
            lines.append(f"  {label:<26}" + _summary(group))
    worst = sorted(rows, key=lambda r: r["coverage"])[:3]
    lines.append(
        "  lowest coverage: "
        + "; ".join(
            f"{r['coverage']:.1%} (n {r['n']}, {r['share']:.0%} labelled, {r['judge']} judge, "
            f"{r['profile']} retrieval)"
            for r in worst
        )
    )
    lines.append(f"({results['seconds']} s)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 100 draws, 1/10 grid")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    args = parser.parse_args()
    results = run(args.draws, args.quick, args.jobs)
    print("\n".join(describe(results)))
    worst = min(r["coverage"] for r in results["regimes"])
    if not args.quick and (worst < TARGET or not math.isfinite(worst)):
        sys.exit(1)


if __name__ == "__main__":
    main()
