"""How often ``judge align``'s guard adopts a prompt variant that is not better than the
current prompt (the false-adoption rate, target at most 5 %), and how often it adopts one that
is (power): simulated labels and judges whose agreement with the labels is known.

Each replication draws ``n`` labelled items, one label each, both axes scored 0-2 with the
shipped samples' mix (about 60 % twos, 20 % ones, 20 % zeros). The current prompt's judge is
right on each axis with probability ``p``; where it is wrong it gives one of the two other
scores. Every variant is the same model with exemplars added, so its errors are correlated with
the current prompt's: with probability ``shared`` it gives the current prompt's answer, else
its own draw, right with probability ``p`` (the null) or, for the last variant, ``p + effect``
(the alternative). The guard is the real one (``judge.audit.guard``): the held-out rows go
through ``compare`` and ``guard_decision``, as ``judge align``'s do. Cross-fitting is not
simulated: the rows are what the folds give, one held-out verdict per item and prompt.

    PYTHONPATH=. .venv/bin/python bench/align_sim.py [--reps 1000] [--power-reps 200] [--n 40 100]
        [--variants 2] [--effects 0 0.15 0.25] [--resamples 200]

prints one line per (n, variants, effect): the share of replications that adopted a variant,
with its 95 % Wilson interval. The numbers in docs/align.md came from this command.
"""

from __future__ import annotations

import argparse
import random

from judge.audit.guard import (
    GUARD_ALPHA,
    HeldOutLabel,
    compare,
    guard_decision,
    primary_test,
)
from judge.sweep.simulate import wilson

HUMAN_MIX = (0.2, 0.2, 0.6)


def _human(rng: random.Random) -> int:
    return rng.choices((0, 1, 2), HUMAN_MIX)[0]


def _judged(rng: random.Random, human: int, p: float) -> int:
    if rng.random() < p:
        return human
    return rng.choice([s for s in (0, 1, 2) if s != human])


def _rows(
    rng: random.Random, n: int, p: float, p_variant: float, shared: float
) -> list[HeldOutLabel]:
    rows = []
    for i in range(n):
        human = (_human(rng), _human(rng))
        current = tuple(_judged(rng, h, p) for h in human)
        variant = tuple(
            c if rng.random() < shared else _judged(rng, h, p_variant)
            for h, c in zip(human, current, strict=True)
        )
        rows.append(HeldOutLabel(f"q{i}", human, current, variant))
    return rows


def adopted(
    rng: random.Random,
    n: int,
    variants: int,
    p: float,
    effect: float,
    shared: float,
    resamples: int = 200,
) -> bool:
    """One replication: whether the guard adopted a variant. Variants that fail the primary
    guard are not bootstrapped (their intervals cannot change the decision)."""
    sets = [
        _rows(rng, n, p, p + (effect if v == variants - 1 else 0.0), shared)
        for v in range(variants)
    ]
    threshold = GUARD_ALPHA / variants
    passing = []
    for rows in sets:
        wins, losses, p_value = primary_test(rows)
        if wins > losses and p_value < threshold:
            passing.append(rows)
    if not passing:
        return False
    comparisons = [compare(f"v{i}", rows, resamples=resamples) for i, rows in enumerate(sets)]
    return guard_decision(comparisons).adopted is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="replications of the null")
    parser.add_argument(
        "--power-reps", type=int, default=200, help="replications of each alternative"
    )
    parser.add_argument("--n", type=int, nargs="+", default=[40, 100])
    parser.add_argument("--variants", type=int, nargs="+", default=[2])
    parser.add_argument("--effects", type=float, nargs="+", default=[0.0, 0.15, 0.25])
    parser.add_argument("--p", type=float, default=0.6, help="current prompt's agreement")
    parser.add_argument("--shared", type=float, default=0.5, help="answers the variant shares")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--resamples", type=int, default=200, help="bootstrap resamples of the no-worse guard"
    )
    args = parser.parse_args()
    print(f"p = {args.p}, shared = {args.shared}")
    for n in args.n:
        for variants in args.variants:
            for effect in args.effects:
                rng = random.Random(f"{args.seed}:{n}:{variants}:{effect}")
                reps = args.reps if effect == 0 else args.power_reps
                hits = sum(
                    adopted(rng, n, variants, args.p, effect, args.shared, args.resamples)
                    for _ in range(reps)
                )
                low, high = wilson(hits, reps)
                what = "false adoption" if effect == 0 else "power"
                print(
                    f"n = {n:4d}, variants = {variants}, effect = +{effect:.2f}: {what} "
                    f"{hits / reps:.3f} [{low:.3f}, {high:.3f}] ({reps} replications)"
                )


if __name__ == "__main__":
    main()
