"""Simulated sweeps for `judge sweep`: how often the guards adopt a setting that is no better
than the default (the null), and how often they adopt the one that is (detection). Figures in
docs/sweep.md.

Each replication draws a synthetic golden set and every setting's rankings
(``judge.sweep.simulate``: 1-3 relevant chunks among 20 candidates, a per-question difficulty
shared by all settings, each setting's own noise), scores nDCG@5, recall@5 and MRR with
``judge.retrieval.score_rankings``, and runs ``judge.sweep.select.select`` with the default
rule (gain > 0.02, > 3 paired standard errors, > 50 % of the folds, no secondary fall). The
default is the first setting. Under the null every setting is equally good; under the
alternative the last one is better by about +0.10 mean nDCG@5 (the exact measured gain is
printed). Rates carry a 95 % Wilson interval.

- by questions and grid size, for settings of one retriever (``correlated``), and for
  near-identical (``similar``) and unrelated (``independent``) settings, which change the
  paired noise and so what can be detected;
- the significance guard's multiple (``se_multiple``) against the two rates;
- the time ``select`` takes on a 50 x 20 grid (1,000 settings) of 500 questions.

``python bench/sweep_sim.py [--replications N]`` (1,000 by default: about 3 minutes on one
core).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.sweep import simulate
from judge.sweep.select import SweepRule, select

#: (world, questions, settings) cells of the main table.
CELLS: tuple[tuple[str, int, int], ...] = (
    *(("correlated", n, k) for n in (12, 20, 40, 80) for k in (4, 9)),
    ("correlated", 160, 9),
    *(("similar", n, 9) for n in (12, 20, 40)),
    *(("independent", n, 9) for n in (20, 40, 80)),
)
#: The significance guard's multiple against the rates, at one cell.
SE_MULTIPLES = (0.0, 1.0, 2.0, 3.0)
SE_CELL = ("correlated", 40, 9)


def _seed(*parts: object) -> int:
    """A seed per cell: the same figures every run, independent draws across cells."""
    return zlib.crc32("-".join(map(str, parts)).encode("utf-8"))


def _rate(successes: int, trials: int) -> dict[str, Any]:
    low, high = simulate.wilson(successes, trials)
    return {"count": successes, "rate": successes / trials, "low": low, "high": high}


def cell(
    world_name: str, n_questions: int, n_settings: int, replications: int, rule: SweepRule
) -> dict[str, Any]:
    """Null adoption and detection for one (world, questions, settings)."""
    world = simulate.WORLDS[world_name]
    null = simulate.replicate(
        n_questions,
        n_settings,
        0.0,
        replications,
        _seed(world_name, n_questions, n_settings, "null", rule.se_multiple),
        rule,
        world,
    )
    alternative = simulate.replicate(
        n_questions,
        n_settings,
        simulate.ALTERNATIVE_EFFECT,
        replications,
        _seed(world_name, n_questions, n_settings, "alternative", rule.se_multiple),
        rule,
        world,
    )
    return {
        "world": world_name,
        "questions": n_questions,
        "settings": n_settings,
        "replications": replications,
        "null_adopted": _rate(null.adopted, replications),
        "detected": _rate(alternative.adopted_better, replications),
        "alternative_adopted_other": alternative.adopted - alternative.adopted_better,
        "null_decided_by": null.decided_by,
        "alternative_decided_by": alternative.decided_by,
    }


def world_profile(world_name: str, n_questions: int = 20_000) -> dict[str, Any]:
    """What a world looks like: mean nDCG@5, how two null settings agree per question, and the
    alternative's true gain per metric."""
    data = simulate.sweep_data(
        n_questions, 2, 0.0, np.random.default_rng(_seed(world_name)), simulate.WORLDS[world_name]
    )
    first, second = (np.array(data.values[s][simulate.PRIMARY]) for s in ("s0", "s1"))
    gains = simulate.expected_gain(
        simulate.ALTERNATIVE_EFFECT, simulate.WORLDS[world_name], n_questions
    )
    return {
        "mean_ndcg@5": round(float(first.mean()), 3),
        "correlation": round(float(np.corrcoef(first, second)[0, 1]), 2),
        "ties": round(float(np.mean(first == second)), 2),
        "gain": {metric: round(gain, 3) for metric, gain in gains.items()},
    }


def time_large_grid(
    n_settings: int = 1000, n_questions: int = 500, repeats: int = 5, seed: int = 5
) -> dict[str, Any]:
    """Seconds for one ``select`` on a 50 x 20 grid, two secondary metrics; median of
    ``repeats``."""
    rng = np.random.default_rng(seed)
    ids = [f"q{j}" for j in range(n_questions)]
    values = {
        f"s{i}": {
            metric: rng.choice([0.0, 0.5, 0.63, 1.0], size=n_questions).tolist()
            for metric in (simulate.PRIMARY, *simulate.SECONDARY)
        }
        for i in range(n_settings)
    }
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        select(ids, values, "s0", simulate.PRIMARY, simulate.SECONDARY)
        seconds.append(time.perf_counter() - start)
    return {
        "settings": n_settings,
        "questions": n_questions,
        "seconds": round(statistics.median(seconds), 3),
    }


#: Detection against the size of the gain: the quality lifts giving about +0.10, +0.18, +0.24
#: and +0.30 mean nDCG@5 (``expected_gain`` measures each), on grids the size of the demo's.
POWER_EFFECTS = (0.52, 1.0, 1.5, 2.5)
POWER_CELLS = (("correlated", 20, 6), ("correlated", 40, 6))


def power(replications: int, rule: SweepRule) -> list[dict[str, Any]]:
    rows = []
    for effect in POWER_EFFECTS:
        gain = simulate.expected_gain(effect, simulate.WORLDS["correlated"], 4000)
        for world, n, k in POWER_CELLS:
            rates = simulate.replicate(
                n,
                k,
                effect,
                replications,
                _seed("power", effect, n, k),
                rule,
                simulate.WORLDS[world],
            )
            rows.append(
                {
                    "gain": round(gain[simulate.PRIMARY], 3),
                    "world": world,
                    "questions": n,
                    "settings": k,
                    "detected": _rate(rates.adopted_better, replications),
                }
            )
    return rows


def run(replications: int = 1000) -> dict[str, Any]:
    started = time.perf_counter()
    rule = SweepRule()
    results: dict[str, Any] = {
        "replications": replications,
        "rule": rule._asdict(),
        "worlds": {name: world_profile(name) for name in simulate.WORLDS},
        "cells": [cell(w, n, k, replications, rule) for w, n, k in CELLS],
        "se_multiples": [
            {"se_multiple": m, **cell(*SE_CELL, replications, SweepRule(se_multiple=m))}
            for m in SE_MULTIPLES
        ],
        "power": power(replications, rule),
        "large_grid": time_large_grid(),
    }
    results["seconds"] = round(time.perf_counter() - started, 1)
    return results


def _cell_text(rate: dict[str, Any]) -> str:
    return f"{rate['rate']:5.1%} ({rate['low']:.1%}-{rate['high']:.1%})"


def describe(results: dict[str, Any]) -> list[str]:
    rule = results["rule"]
    lines = [
        f"default rule: gain > {rule['min_gain']:g}, > {rule['se_multiple']:g} SE, stability > "
        f"{rule['min_stability']:.0%}, secondary tolerance {rule['secondary_tolerance']:g}; "
        f"{results['replications']:,} replications per rate, 95 % Wilson intervals",
        "",
        "| world | mean nDCG@5 | two null settings: correlation, tied questions | "
        "alternative's true gain (nDCG@5, recall@5, MRR) |",
        "|---|---|---|---|",
    ]
    for name, world in results["worlds"].items():
        gain = world["gain"]
        lines.append(
            f"| {name} | {world['mean_ndcg@5']:.3f} | {world['correlation']:.2f}, "
            f"{world['ties']:.0%} | +{gain[simulate.PRIMARY]:.3f}, "
            f"+{gain['recall@5']:.3f}, +{gain['mrr']:.3f} |"
        )
    lines += [
        "",
        "| world | questions | settings | null: adopted | +0.10: adopted the better | "
        "replications |",
        "|---|---:|---:|---|---|---:|",
    ]
    for c in results["cells"]:
        lines.append(
            f"| {c['world']} | {c['questions']} | {c['settings']} | "
            f"{_cell_text(c['null_adopted'])} | {_cell_text(c['detected'])} | "
            f"{c['replications']:,} |"
        )
    world, n, k = SE_CELL
    lines += [
        "",
        f"significance guard ({world}, {n} questions, {k} settings):",
        "",
        "| se_multiple | null: adopted | +0.10: adopted the better |",
        "|---:|---|---|",
    ]
    for c in results["se_multiples"]:
        lines.append(
            f"| {c['se_multiple']:g} | {_cell_text(c['null_adopted'])} | "
            f"{_cell_text(c['detected'])} |"
        )
    lines += [
        "",
        "detection against the size of the gain (correlated, 6 settings):",
        "",
        "| true gain in nDCG@5 | questions | adopted the better |",
        "|---:|---:|---|",
    ]
    for c in results["power"]:
        lines.append(f"| +{c['gain']:.2f} | {c['questions']} | {_cell_text(c['detected'])} |")
    wrong = sum(c["alternative_adopted_other"] for c in results["cells"])
    trials = sum(c["replications"] for c in results["cells"])
    large = results["large_grid"]
    lines += [
        "",
        f"under the alternative a null setting was adopted in {wrong} of {trials:,} sweeps",
        f"select on {large['settings']:,} settings x {large['questions']} questions: "
        f"{large['seconds']} s; the whole simulation {results['seconds']} s",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000, help="synthetic sweeps per rate")
    args = parser.parse_args()
    print("\n".join(describe(run(args.replications))))


if __name__ == "__main__":
    main()
