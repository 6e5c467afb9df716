"""Agreement statistics against hand-computed values and reference implementations."""

import random
import warnings

import pytest

from judge.audit.stats import (
    balanced_accuracy,
    bootstrap_ci,
    confusion,
    exact_agreement,
    krippendorff_alpha_ordinal,
    majority_class,
    quadratic_kappa,
    within_one,
)

PAIRS = [(2, 2), (2, 1), (1, 1), (0, 0), (0, 2)]


def test_hand_computed_values() -> None:
    assert confusion(PAIRS) == [[1, 0, 1], [0, 1, 0], [0, 1, 1]]
    assert exact_agreement(PAIRS) == 3 / 5
    assert within_one(PAIRS) == 4 / 5  # (0, 2) is two apart
    # Quadratic weights w = (i-j)^2 / 4: w(0,2) = 1, w(1,2) = 0.25.
    # observed disagreement = (1 * 1 + 0.25 * 1) / 5 = 0.25
    # marginals: human (0,1,2) = (2,1,2); judge = (1,2,2)
    # expected = sum w_ij * r_i * c_j / 25
    #          = [0.25*(2*2) + 1*(2*2) + 0.25*(1*1) + 0.25*(1*2) + 1*(2*1) + 0.25*(2*2)] / 25
    #          = [1 + 4 + 0.25 + 0.5 + 2 + 1] / 25 = 8.75 / 25 = 0.35
    # kappa = 1 - 0.25 / 0.35 = 0.285714...
    assert quadratic_kappa(PAIRS) == pytest.approx(1 - 0.25 / 0.35)


def test_degenerate_cases_are_defined() -> None:
    assert exact_agreement([]) is None and within_one([]) is None
    assert quadratic_kappa([]) is None
    # Everyone gave 2 to everything: no variation, kappa undefined (not NaN, not 1).
    assert quadratic_kappa([(2, 2)] * 10) is None
    assert exact_agreement([(2, 2)] * 10) == 1.0
    # One item: defined (observed = expected disagreement = 0.25, so kappa = 0), meaningless;
    # the audit report says how few items there are.
    assert quadratic_kappa([(1, 2)]) == 0.0
    assert bootstrap_ci([(1, 2)], quadratic_kappa) is None
    assert krippendorff_alpha_ordinal([]) is None
    assert krippendorff_alpha_ordinal([[2], [1]]) is None  # nothing pairable
    assert krippendorff_alpha_ordinal([[2, 2], [2, 2]]) is None  # no variation


def test_kappa_equals_scikit_learn_on_random_data() -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = random.Random(1)
    for trial in range(200):
        n = rng.randint(2, 60)
        pairs = [(rng.choice((0, 1, 2)), rng.choice((0, 1, 2))) for _ in range(n)]
        if trial % 3 == 0:  # correlated raters too
            pairs = [(h, min(2, max(0, h + rng.choice((-1, 0, 0, 1))))) for h, _ in pairs]
        ours = quadratic_kappa(pairs)
        human, judge = zip(*pairs, strict=True)
        reference = sklearn.cohen_kappa_score(human, judge, weights="quadratic", labels=[0, 1, 2])
        if ours is None:
            assert reference != reference or reference == 0  # NaN (0/0) in scikit-learn
        else:
            assert ours == pytest.approx(reference, abs=1e-9)


def test_alpha_equals_the_krippendorff_package_on_random_data() -> None:
    krippendorff = pytest.importorskip("krippendorff")
    np = pytest.importorskip("numpy")
    rng = random.Random(2)
    for _ in range(100):
        raters, items = rng.randint(2, 4), rng.randint(3, 40)
        table = [[rng.choice((0, 1, 2, None)) for _ in range(items)] for _ in range(raters)]
        units = [[row[i] for row in table if row[i] is not None] for i in range(items)]
        ours = krippendorff_alpha_ordinal(units)  # type: ignore[arg-type]
        data = np.array([[np.nan if v is None else v for v in row] for row in table], dtype=float)
        if sum(len(u) for u in units if len(u) >= 2) < 2 or ours is None:
            continue
        reference = krippendorff.alpha(
            reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2]
        )
        assert ours == pytest.approx(reference, abs=1e-9)


def test_krippendorff_hand_computed() -> None:
    # Two raters, three items: (0,0), (1,2), (2,2). Pairable values n = 6.
    # Coincidences: o00=2, o12=o21=1, o22=2; totals n0=2, n1=1, n2=3.
    # delta^2 ordinal: d(1,2) = (n1+n2 - (n1+n2)/2)^2 = (4 - 2)^2 = 4; d(0,1) = (3-1.5)^2 = 2.25;
    # d(0,2) = (6 - 2.5)^2 = 12.25
    # D_o = 2 * 4 / 6 = 1.3333; D_e = 2*(n0 n1 d01 + n0 n2 d02 + n1 n2 d12) / (6*5)
    #     = 2*(2*1*2.25 + 2*3*12.25 + 1*3*4) / 30 = 2*(4.5 + 73.5 + 12) / 30 = 6.0
    # alpha = 1 - 1.3333 / 6 = 0.77778
    assert krippendorff_alpha_ordinal([[0, 0], [1, 2], [2, 2]]) == pytest.approx(1 - (8 / 6) / 6)


def test_bootstrap_interval_contains_the_estimate_and_is_repeatable() -> None:
    rng = random.Random(5)
    pairs = [
        (h, min(2, max(0, h + rng.choice((-1, 0, 0, 0, 1)))))
        for h in (rng.choice((0, 1, 2)) for _ in range(30))
    ]
    ci = bootstrap_ci(pairs, exact_agreement)
    estimate = exact_agreement(pairs)
    assert ci is not None and estimate is not None
    assert ci.low <= estimate <= ci.high
    assert ci.high - ci.low > 0.15  # 30 items: a wide interval, honestly
    assert bootstrap_ci(pairs, exact_agreement) == ci


def test_majority_class_and_balanced_accuracy_hand_counted() -> None:
    # PAIRS humans: 2 2 1 0 0 → 2 and 0 tie at 2 of 5; the tie goes to the higher score.
    assert majority_class(PAIRS) == (2, 2 / 5)
    assert majority_class([(1, 0), (1, 2), (0, 0)]) == (1, 2 / 3)
    # recall: human 0 → 1/2 ((0,0) right, (0,2) wrong), human 1 → 1/1, human 2 → 1/2
    assert balanced_accuracy(PAIRS) == pytest.approx((0.5 + 1 + 0.5) / 3)
    # Always answering the majority: exact agreement 0.9, balanced accuracy 1/2.
    lopsided = [(2, 2)] * 9 + [(1, 2)]
    assert exact_agreement(lopsided) == pytest.approx(0.9)
    majority = majority_class(lopsided)
    assert majority is not None and majority[0] == 2 and majority[1] == pytest.approx(0.9)
    assert balanced_accuracy(lopsided) == pytest.approx(0.5)


def test_trivial_baselines_degenerate_cases_are_none() -> None:
    assert majority_class([]) is None and balanced_accuracy([]) is None
    # One human class only: defined, the recall on it.
    assert balanced_accuracy([(2, 2), (2, 1)]) == 0.5


def test_balanced_accuracy_equals_scikit_learn_on_random_data() -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    for trial in range(200):
        n = rng.randint(1, 60)
        pairs = [(rng.choice((0, 1, 2)), rng.choice((0, 1, 2))) for _ in range(n)]
        if trial % 3 == 0:  # correlated raters too
            pairs = [(h, min(2, max(0, h + rng.choice((-1, 0, 0, 1))))) for h, _ in pairs]
        if trial % 5 == 0:  # lopsided labels, one human class missing
            pairs = [(rng.choice((1, 2, 2, 2)), j) for _, j in pairs]
        human, judge = zip(*pairs, strict=True)
        with warnings.catch_warnings():
            # "y_pred contains classes not in y_true": those classes are left out, as ours does.
            warnings.simplefilter("ignore", UserWarning)
            reference = sklearn.balanced_accuracy_score(human, judge)
        assert balanced_accuracy(pairs) == pytest.approx(reference, abs=1e-9)
