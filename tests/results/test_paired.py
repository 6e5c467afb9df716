"""The statistics of the paired gate: the exact sign-flip test against counting and against
scipy's permutation test, Holm's rule against statsmodels', the bootstrap interval against
scipy's, its determinism and memory bound, and the rule that calls a change."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import bootstrap, norm, permutation_test
from statsmodels.stats.multitest import multipletests

import judge.results.paired as paired
from judge.results.paired import bootstrap_interval, classify, holm, seed_for, sign_flip_tails


def _cases() -> list[np.ndarray]:
    """Random changes of the three kinds the gate sees: 0-2 scores, 0/1 metrics, and metrics
    with many distinct values (mrr, ndcg); small and large n, mostly unchanged questions."""
    rng = np.random.default_rng(20261130)
    cases = []
    for i in range(45):
        n = int(rng.integers(5, 120)) if i % 5 else int(rng.integers(400, 1500))
        kind = i % 3
        if kind == 0:
            d = rng.choice([-2.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0], size=n)
        elif kind == 1:
            d = rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0], size=n)
        else:
            d = rng.normal(-0.05, 0.3, size=n).round(3)
        if np.all(d == d[0]):
            d[0] += 1.0
        cases.append(d)
    return cases


@pytest.mark.parametrize("d", _cases(), ids=lambda d: f"n{d.size}")
def test_the_interval_agrees_with_scipys_percentile_bootstrap(d: np.ndarray) -> None:
    low, high = bootstrap_interval(d, seed_for("retrieval", "factual", "mrr"))
    reference = bootstrap(
        (d,),
        np.mean,
        method="percentile",
        confidence_level=0.95,
        n_resamples=20000,
        rng=np.random.default_rng(1),
    ).confidence_interval
    # Two Monte Carlo estimates of the same percentiles (2,000 resamples here, 20,000 there):
    # they differ by a fraction of the standard error of the mean (measured: at most 0.36 on
    # 200 such cases, for small n where the bootstrap distribution moves in steps of 1/n).
    standard_error = d.std() / np.sqrt(d.size)
    assert abs(low - reference.low) <= 0.5 * standard_error
    assert abs(high - reference.high) <= 0.5 * standard_error


def test_the_interval_is_the_same_every_time_and_differs_by_name() -> None:
    d = np.random.default_rng(3).choice([-1.0, 0.0, 1.0], size=40)
    first = bootstrap_interval(d, seed_for("judge", "factual", "faithfulness"))
    assert bootstrap_interval(d, seed_for("judge", "factual", "faithfulness")) == first
    assert seed_for("judge", "factual", "faithfulness") != seed_for("judge", "factual", "relevance")
    # The seed joins names with a separator: ("ab", "c") is not ("a", "bc").
    assert seed_for("ab", "c") != seed_for("a", "bc")


def test_constant_changes_give_a_point_interval() -> None:
    assert bootstrap_interval([0.0] * 12, 1) == (0.0, 0.0)
    assert bootstrap_interval([-0.8], 1) == (-0.8, -0.8)
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_interval([], 1)


def test_four_falls_in_twelve_give_the_binomial_interval() -> None:
    # d = four -1 and eight 0: a resample's mean is -k/12 with k ~ Binomial(12, 1/3).
    # P(k <= 0) = (2/3)^12 = 0.008 and P(k <= 1) = 0.054, so the 2.5th percentile of k is 1;
    # P(k <= 6) = 0.934 and P(k <= 7) = 0.981, so its 97.5th percentile is 7:
    # the interval of the mean change is [-7/12, -1/12] = [-0.583, -0.083]. The percentiles are
    # a Monte Carlo estimate: P(k >= 8) = 0.019 is close to 0.025, and about 3 seeds in 100
    # draw 50 or more such resamples of 2,000 and give -8/12; this is the seed the gate uses.
    d = [-1.0] * 4 + [0.0] * 8
    low, high = bootstrap_interval(d, seed_for("judge", "factual", "faithfulness"))
    assert (low, high) == (pytest.approx(-7 / 12), pytest.approx(-1 / 12))


def test_blocks_bound_memory_without_changing_the_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    d = np.random.default_rng(5).normal(size=3000)  # many distinct values: index resampling
    whole = bootstrap_interval(d, 11)
    monkeypatch.setattr(paired, "BLOCK_VALUES", 3000 * 7)  # 7 resamples per block
    assert bootstrap_interval(d, 11) == whole


def test_few_distinct_changes_resample_counts_like_indices() -> None:
    # 600 changes of three values: drawn as multinomial counts; the same distribution as
    # resampling indices (checked against scipy above), here against the normal approximation.
    d = np.array([-1.0] * 60 + [1.0] * 30 + [0.0] * 510)
    low, high = bootstrap_interval(d, 2)
    se = d.std() / np.sqrt(d.size)
    assert low == pytest.approx(d.mean() - 1.96 * se, abs=0.25 * se)
    assert high == pytest.approx(d.mean() + 1.96 * se, abs=0.25 * se)


@pytest.mark.parametrize(
    ("delta", "p_fall", "p_rise", "margin", "expected"),
    [
        (-0.333, 0.0005, 1.0, 0.10, "regressed"),  # shown, beyond the margin
        (0.333, 1.0, 0.0005, 0.10, "improved"),
        (-0.333, 0.0625, 1.0, 0.10, "listed"),  # 4 of 12 fell: p = 1/16, listed
        (-0.4, 0.5, 1.0, 0.10, "noise"),  # one answer of five 2 -> 0: p = 1/2
        (-0.08, 0.0001, 1.0, 0.10, "noise"),  # shown, but within a score's margin
        (-0.08, 0.0001, 1.0, 0.05, "regressed"),  # the same on a 0-1 metric's margin
        (-0.05, 0.0001, 1.0, 0.05, "noise"),  # exactly the margin is not beyond it
        (-0.2, 0.1, 1.0, 0.05, "listed"),  # the listing level is inclusive
        (-0.2, 0.1001, 1.0, 0.05, "noise"),
    ],
)
def test_the_rule(delta: float, p_fall: float, p_rise: float, margin: float, expected: str) -> None:
    assert classify(delta, p_fall, p_rise, margin, level=0.001) == expected


def _brute_force(d: np.ndarray) -> tuple[float, float]:
    """Every one of the 2^n sign patterns, counted."""
    observed = d.sum()
    sums = np.array(
        [(np.array(signs) * d).sum() for signs in itertools.product((-1, 1), repeat=d.size)]
    )
    return float(np.mean(sums <= observed + 1e-9)), float(np.mean(sums >= observed - 1e-9))


@pytest.mark.parametrize("seed", range(12))
def test_sign_flip_tails_are_exact(seed: int) -> None:
    # Against counting all 2^n sign patterns, and against scipy's permutation test (a single
    # sample: the null distribution flips each observation's sign), on changes of the three
    # kinds the gate sees (0-2 scores, 0/1 metrics, mrr-like fractions), zeros included.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    kind = seed % 3
    if kind == 0:
        d = rng.choice([-2.0, -1.0, 0.0, 0.0, 1.0, 2.0], size=n)
    elif kind == 1:
        d = rng.choice([-1.0, 0.0, 0.0, 1.0], size=n)
    else:
        d = rng.choice([-1.0, -0.5, -1 / 3, 0.0, 0.25, 0.5], size=n)
    low, high = sign_flip_tails(d)
    assert (low, high) == (pytest.approx(_brute_force(d)[0]), pytest.approx(_brute_force(d)[1]))
    if np.any(d != 0):
        for alternative, ours in (("less", low), ("greater", high)):
            reference = permutation_test(
                (d,),
                np.sum,
                permutation_type="samples",
                alternative=alternative,
                n_resamples=np.inf,
            )
            assert ours == pytest.approx(reference.pvalue)


def test_sign_flip_tails_of_the_worked_examples() -> None:
    # Four falls of a point among twelve: every sign pattern of the four is as likely; all four
    # negative is 1 in 16, whatever the eight zeros. That is what one night can show.
    assert sign_flip_tails([-1.0] * 4 + [0.0] * 8) == (pytest.approx(1 / 16), 1.0)
    # Twelve falls and no rise: 1 in 4096.
    assert sign_flip_tails([-1.0] * 12) == (pytest.approx(1 / 4096), 1.0)
    assert sign_flip_tails([0.0] * 5) == (1.0, 1.0)


def test_sign_flip_tails_do_not_depend_on_order_and_scale_to_large_runs() -> None:
    rng = np.random.default_rng(5)
    d = rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0], size=5000)
    assert sign_flip_tails(d) == sign_flip_tails(rng.permutation(d))
    # Many distinct sizes: the normal approximation, still a function of the changes alone.
    mrr = rng.normal(-0.01, 0.3, size=5000).round(4)
    low, high = sign_flip_tails(mrr)
    z = mrr.sum() / np.sqrt((mrr**2).sum())
    assert low == pytest.approx(norm.cdf(z)) and high == pytest.approx(1 - norm.cdf(z))


@pytest.mark.parametrize("seed", range(8))
def test_holm_agrees_with_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.05, size=int(rng.integers(1, 40))) ** rng.uniform(1, 3)
    expected, *_ = multipletests(p, alpha=0.01, method="holm")
    assert holm(p.tolist(), 0.01) == expected.tolist()
