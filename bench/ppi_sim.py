"""Coverage of the corrected estimates' intervals, old beside new (issue 19, part 6).

A type's population: human scores 0/1/2 with ``top`` of them 2 and the rest split 35 : 65
between 0 and 1; a judge that gives the human score with probability ``agreement`` overall
and otherwise

- ``neutral``: one of the two other scores, at random;
- ``lenient``: one point more, and only on labels below 2 (a regime exists only when
  agreement ≥ top: a lenient judge cannot disagree more often than there are labels below 2);
- ``harsh``: one point less, and only on labels above 0.

Each draw takes ``n`` labelled items (human and judge score) and ``N`` unlabelled ones (judge
score only) from the population and asks ``judge.audit.ppi.ppi_mean`` for its estimate; the
truth is the population's mean human score. For each regime: the share of draws whose interval
contains the truth, and the mean width, for

- old: ppi-python's normal interval, counted only where the old reports showed one (they
  hid it when the labels' corrections had no spread: "no spread in 10 labels: no interval");
- new: the interval the reports show now (``PpiEstimate.shown``: plus-four variance, t
  quantile, cut to 0–2), shown for every cell.

With N = 0 (every judged item labelled) λ is 0 and the judge plays no part, so those regimes
vary only the labels. The pooled (stratified) estimate is measured apart, on golden sets whose
types each have fewer than ``MIN_LABELLED`` labels.

``python bench/ppi_sim.py`` (about a minute on 2 cores; ``--quick`` for a smoke run,
``--draws`` to change the 2,000 draws per regime); ``make bench`` runs it.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.audit.ppi import pooled_estimates, ppi_mean
from judge.audit.types import MIN_LABELLED, CorrectedCell

TOPS = (0.6, 0.75, 0.9, 0.95)
AGREEMENTS = (0.4, 0.6, 0.8, 0.9, 0.95)
JUDGES = ("neutral", "lenient", "harsh")
LABELLED = (10, 20, 40)
UNLABELLED = (0, 20, 200)
TARGET = 0.94


class Regime(NamedTuple):
    top: float
    agreement: float
    judge: str
    n: int
    big_n: int


def human_shares(top: float) -> tuple[float, float, float]:
    rest = 1 - top
    return (rest * 0.35, rest * 0.65, top)


def joint(top: float, agreement: float, judge: str) -> list[list[float]] | None:
    """P(human = y, judge = j) as a 3×3 list; None where the judge cannot be that biased."""
    py = human_shares(top)
    rows = []
    for y in range(3):
        row = [0.0, 0.0, 0.0]
        if judge == "neutral":
            row = [(1 - agreement) / 2] * 3
            row[y] = agreement
        elif judge == "lenient":
            d = (1 - agreement) / (1 - top)
            if d > 1 + 1e-12:
                return None
            row[y] = 1.0
            if y < 2:
                row[y], row[y + 1] = 1 - d, d
        else:
            d = (1 - agreement) / (py[1] + py[2])
            if d > 1 + 1e-12:
                return None
            row[y] = 1.0
            if y > 0:
                row[y], row[y - 1] = 1 - d, d
        rows.append([py[y] * p for p in row])
    return rows


def regimes() -> Iterator[Regime]:
    for top in TOPS:
        for n in LABELLED:
            for big_n in UNLABELLED:
                if big_n == 0:
                    yield Regime(top, 1.0, "any", n, 0)
                    continue
                for judge in JUDGES:
                    for agreement in AGREEMENTS:
                        if joint(top, agreement, judge) is not None:
                            yield Regime(top, agreement, judge, n, big_n)


class _Population(NamedTuple):
    cells: list[tuple[float, float]]
    """(human, judge) of each of the 9 cells."""
    weights: list[float]
    judge_weights: list[float]
    truth: float


def _population(top: float, agreement: float, judge: str) -> _Population:
    table = joint(top, agreement, judge) if judge != "any" else joint(top, 1.0, "neutral")
    assert table is not None
    cells = [(float(y), float(j)) for y in range(3) for j in range(3)]
    weights = [table[y][j] for y in range(3) for j in range(3)]
    judge_weights = [sum(table[y][j] for y in range(3)) for j in range(3)]
    truth = sum(y * sum(table[y]) for y in range(3))
    return _Population(cells, weights, judge_weights, truth)


def _draw(
    population: _Population, n: int, big_n: int, rng: random.Random
) -> tuple[list[float], list[float], list[float]]:
    labelled = rng.choices(population.cells, population.weights, k=n)
    unlabelled = rng.choices((0.0, 1.0, 2.0), population.judge_weights, k=big_n)
    return [y for y, _ in labelled], [j for _, j in labelled], unlabelled


def measure(regime: Regime, draws: int, seed: int = 0) -> dict[str, Any]:
    """Coverage and mean width of the old and the new interval over ``draws`` draws."""
    population = _population(regime.top, regime.agreement, regime.judge)
    rng = random.Random(f"{seed}:{regime}")
    old_shown = old_covered = new_covered = 0
    old_width = new_width = 0.0
    inside = True
    for _ in range(draws):
        e = ppi_mean(*_draw(population, regime.n, regime.big_n, rng))
        truth = population.truth
        if e.rectifier_variance > 0:
            old_shown += 1
            old_covered += e.interval.low <= truth <= e.interval.high
            old_width += e.interval.high - e.interval.low
        new_covered += e.shown.low <= truth <= e.shown.high
        new_width += e.shown.high - e.shown.low
        inside = inside and 0 <= e.shown.low <= e.value <= e.shown.high <= 2
    return {
        **regime._asdict(),
        "truth": population.truth,
        "old_shown": old_shown / draws,
        "old_coverage": old_covered / old_shown if old_shown else None,
        "old_width": old_width / old_shown if old_shown else None,
        "new_coverage": new_covered / draws,
        "new_width": new_width / draws,
        "inside_scale": inside,
    }


# --- the pooled estimate ---------------------------------------------------------------------

#: (name, [(labelled, unlabelled) per type]).
DESIGNS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("10 questions 3/3/2/2, all labelled", ((3, 0), (3, 0), (2, 0), (2, 0))),
    ("sample 12/8/5/5, all labelled", ((12, 0), (8, 0), (5, 0), (5, 0))),
    ("sample 12/8/5/5, 15 labelled", ((6, 6), (4, 4), (3, 2), (2, 3))),
    ("100 questions, 3/3/2/2 labelled", ((3, 27), (3, 27), (2, 18), (2, 18))),
    ("100 questions, 5 labelled per type", ((5, 25), (5, 25), (5, 20), (5, 15))),
)
#: Top-score shares of the four types, one tuple per mix.
MIXES = ((0.6, 0.9, 0.95, 0.75), (0.9, 0.9, 0.95, 0.95), (0.6, 0.6, 0.7, 0.6))
POOLED_JUDGES = (("neutral", 0.7), ("neutral", 0.95), ("lenient", 0.95), ("harsh", 0.8))


def _pooled_cell(human: list[float], predicted: list[float], unlabelled: list[float]) -> Any:
    fit = ppi_mean(human, predicted, unlabelled)
    judged = len(human) + len(unlabelled)
    return CorrectedCell(judged, judged, None, len(human), len(human), 0, 0, None, None, fit)


def measure_pooled(
    design: tuple[tuple[int, int], ...],
    mix: Sequence[float],
    judge: str,
    agreement: float,
    draws: int,
    seed: int = 0,
) -> dict[str, Any]:
    populations = []
    for top in mix:
        # A lenient judge at this agreement may be impossible for a type with many 2s: that
        # type's judge is then lenient at the lowest agreement it can have.
        feasible = joint(top, agreement, judge) is not None
        populations.append(_population(top, agreement if feasible else top, judge))
    sizes = [n + big_n for n, big_n in design]
    truth = sum(p.truth * s for p, s in zip(populations, sizes, strict=True)) / sum(sizes)
    rng = random.Random(f"{seed}:{design}:{mix}:{judge}:{agreement}")
    covered = 0
    width = 0.0
    for _ in range(draws):
        cells = {
            f"t{index}": _pooled_cell(*_draw(population, n, big_n, rng))
            for index, (population, (n, big_n)) in enumerate(zip(populations, design, strict=True))
        }
        pooled = pooled_estimates({"faithfulness": cells})["faithfulness"]
        assert pooled.interval is not None
        covered += pooled.interval.low <= truth <= pooled.interval.high
        width += pooled.interval.high - pooled.interval.low
    return {"coverage": covered / draws, "width": width / draws}


# --- running and describing ------------------------------------------------------------------


def _measure(job: tuple[Regime, int]) -> dict[str, Any]:
    return measure(*job)


def _measure_pooled(job: tuple[Any, ...]) -> dict[str, Any]:
    name, design, mix, judge, agreement, draws = job
    return {
        "design": name,
        "mix": list(mix),
        "judge": judge,
        "agreement": agreement,
        **measure_pooled(design, mix, judge, agreement, draws),
    }


def run(draws: int = 2000, quick: bool = False, workers: int = 2) -> dict[str, Any]:
    """Every regime and every pooled design; ``quick``: a tenth of each grid, 200 draws."""
    started = time.perf_counter()
    jobs = list(regimes())
    pooled_jobs = [
        (name, design, mix, judge, agreement)
        for name, design in DESIGNS
        for mix in MIXES
        for judge, agreement in POOLED_JUDGES
    ]
    if quick:
        draws = min(draws, 200)
        jobs, pooled_jobs = jobs[::10], pooled_jobs[::10]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        rows = list(pool.map(_measure, [(job, draws) for job in jobs], chunksize=4))
        pooled = list(pool.map(_measure_pooled, [(*job, draws) for job in pooled_jobs]))
    return {
        "draws": draws,
        "regimes": rows,
        "pooled": pooled,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _summary(rows: list[dict[str, Any]]) -> str:
    old = [r["old_coverage"] for r in rows if r["old_coverage"] is not None]
    new = [r["new_coverage"] for r in rows]
    old_w = [r["old_width"] for r in rows if r["old_width"] is not None]
    new_w = [r["new_width"] for r in rows]
    shown = sum(r["old_shown"] for r in rows) / len(rows)
    return (
        f"{len(rows):>4}  {min(old):>6.1%} {sum(old) / len(old):>6.1%} "
        f"{sum(c < TARGET for c in old):>4}  {sum(old_w) / len(old_w):>5.2f} {shown:>6.0%}   "
        f"{min(new):>6.1%} {sum(new) / len(new):>6.1%} {sum(c < TARGET for c in new):>4}  "
        f"{sum(new_w) / len(new_w):>5.2f}"
    )


def describe(results: dict[str, Any]) -> list[str]:
    rows = results["regimes"]
    head = (
        f"  {'':<22}{'rows':>4}  {'old: min':>6} {'mean':>6} {'<94%':>4}  {'width':>5} "
        f"{'shown':>6}   {'new: min':>6} {'mean':>6} {'<94%':>4}  {'width':>5}"
    )
    lines = [
        f"corrected-estimate intervals, {results['draws']} draws per regime "
        f"(target: >= {TARGET:.0%} in every regime; old = ppi-python's normal interval where "
        "it was shown, new = plus four, t, cut to 0-2)",
        head,
    ]
    groups: list[tuple[str, list[dict[str, Any]]]] = [("all regimes", rows)]
    for n in LABELLED:
        for label, test in (
            ("N = 0", lambda r: r["big_n"] == 0),
            ("N > 0", lambda r: r["big_n"] > 0),
        ):
            groups.append((f"n = {n}, {label}", [r for r in rows if r["n"] == n and test(r)]))
    for top in TOPS:
        groups.append((f"{top:.0%} of labels 2", [r for r in rows if r["top"] == top]))
    for judge in JUDGES:
        groups.append((f"{judge} judge", [r for r in rows if r["judge"] == judge]))
    for agreement in AGREEMENTS:
        groups.append(
            (f"agreement {agreement:.0%}", [r for r in rows if r["agreement"] == agreement])
        )
    for label, group in groups:
        if group and any(r["old_coverage"] is not None for r in group):
            lines.append(f"  {label:<22}" + _summary(group))
    worst = sorted(rows, key=lambda r: r["new_coverage"])[:3]
    lines.append(
        "  lowest new coverage: "
        + "; ".join(
            f"{r['new_coverage']:.1%} (n {r['n']}, N {r['big_n']}, {r['top']:.0%} at 2, "
            f"{r['judge']} judge, agreement {r['agreement']:.0%})"
            for r in worst
        )
    )
    lines.append(f"  every new interval inside 0-2: {all(r['inside_scale'] for r in rows)}")
    pooled = results["pooled"]
    if pooled:
        lines.append(
            f"pooled (stratified) estimate, types below {MIN_LABELLED} labels: coverage min "
            f"{min(p['coverage'] for p in pooled):.1%}, mean "
            f"{sum(p['coverage'] for p in pooled) / len(pooled):.1%}, mean width "
            f"{sum(p['width'] for p in pooled) / len(pooled):.2f} over {len(pooled)} cases"
        )
        for name, _ in DESIGNS:
            mine = [p for p in pooled if p["design"] == name]
            if mine:
                lines.append(
                    f"  {name:<38} coverage min {min(p['coverage'] for p in mine):.1%}, "
                    f"mean width {sum(p['width'] for p in mine) / len(mine):.2f}"
                )
    lines.append(f"({results['seconds']} s)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 draws, 1/10 grid")
    args = parser.parse_args()
    results = run(args.draws, args.quick)
    print("\n".join(describe(results)))
    worst = min(r["new_coverage"] for r in results["regimes"])
    if not args.quick and (worst < TARGET or not math.isfinite(worst)):
        sys.exit(1)


if __name__ == "__main__":
    main()
