"""Corrected estimates: the mean human score of a question type, by prediction-powered inference.

The judge scores every item of a run; people label a few. The mean of the judge's scores is
biased wherever the judge is (a lenient judge inflates faithfulness); the mean of the human
labels alone is unbiased but, on a handful of labels, very uncertain. Prediction-powered
inference (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, *Science* 2023; the estimator ARES
uses for RAG) combines them: the judge's mean over the unlabelled items, corrected by the
judge's average error on the labelled ones (the *rectifier*)::

    θ̂ = λ · mean(Ŷ_unlabelled) + mean(Y − λ · Ŷ)          over the labelled items (Y, Ŷ)
    Var ≈ Var(Y − λ·Ŷ) / n + Var(λ·Ŷ_unlabelled) / N

with a normal (z) interval θ̂ ± z · √Var, the interval ``ppi_py.ppi_mean_ci`` computes
(population variances, ``numpy.std`` with ddof 0, through statsmodels' ``_zconfint_generic``).

**Power tuning (PPI++, Angelopoulos, Duchi and Zrnic 2023), not classical PPI (λ = 1).** λ is
chosen from the data to minimise the variance and clipped to [0, 1], exactly as
``ppi_mean_ci(..., lam=None)`` does: λ = Cov(Y, Ŷ) / ((1 + n/N) · Var(Ŷ, all items)). With
classical PPI a judge that agrees poorly with people *widens* the interval beyond what the
labels alone give (the rectifier then carries the judge's noise); with power tuning a useless
judge gets λ ≈ 0 and the estimate falls back to the mean of the labels, and a good judge gets
λ near 1. Our judges range from a model-free overlap score to a 270M model, so a useless judge
is a real case, not a corner. Both are asymptotic (normal) intervals; estimating λ on the same
labels costs a little coverage on few labels, which is one reason for ``MIN_LABELLED``.

Where ppi-python is undefined we take the limit and say so: with no unlabelled item (N = 0,
every judged item labelled; ppi-python divides by zero) or no spread in the judge's scores
(every item scored alike; ppi-python returns NaN) λ is 0 and the estimate is the labels' mean
with its classical interval, which is what every λ gives in the second case and what λ → 0
gives in the first.

**The interval shown is not ppi-python's.** ``PpiEstimate.interval`` is ppi-python's normal
interval (kept: the oracle tests pin it, and ``bench/ppi_sim.py`` measures it as "old");
``PpiEstimate.shown`` is the one the reports print. Measured by simulation (bench/ppi_sim.py,
docs/audit.md), the normal interval covers the true mean 75–87 % of the time at 10 labels and
stays below 93 % up to 40 in most regimes: scores are 0, 1 or 2, mostly 2, and the judge and
people rarely disagree, so the rectifiers Y − λ·Ŷ are mostly one value and a sample of 10 often
shows no disagreement at all; its variance is then near 0 exactly when the judge's bias is not
seen, and λ fitted on the same labels makes it smaller still. A t quantile alone does not
help (the variance, not the quantile, is what is missing: 0 × t is 0); Wilson with an
effective sample size of n + N fails the same way, and with n alone (the labels as if they
were 0/2 coin flips) covers but throws the judge away (twice today's width). What covers, and
is the simplest thing measured that does, is **plus four** (Agresti and Coull 1998, "add two
successes and two failures", carried to the rectifier): the rectifiers' variance is computed
with ``PSEUDO_LABELS`` = 4 extra values, two at each end of the range a rectifier can take
(−2λ, a label 0 the judge scored 2; and 2, a label 2 the judge scored 0), as if two more
labels of each worst kind had been seen::

    S  = Σ (r_i − r̄)² + 2 · ((−2λ − r̄)² + (2 − r̄)²)
    Var₊ = S / (n + 3) / (n + 4) + Var(λ·Ŷ_unlabelled) / N

and the interval is θ̂ ± t(n − 1) · √Var₊ (Student's t quantile with n − 1 degrees of
freedom), cut to the scale 0–2 (the true mean is on the scale, so cutting loses no coverage;
the estimate itself, which PPI++ can put past 2, is cut too). The pseudo-labels enter the
variance only: the point estimate stays PPI++'s (λ too), equal to ppi-python's. Measured over
312 regimes (n 10, 20, 40; N 0, 20, 200; 60–95 % of labels at 2; judge agreement 40–95 %;
neutral, lenient and harsh judges; 2,000 draws each) the worst coverage is 94.6 %, against
77.6 % for the normal interval (210 regimes below 94 %). The price is width: 0.56 on average
against 0.37 for the normal interval where it was shown, +35 % at 40 labels and +65 % at 10,
where the old interval was too narrow to be true. Two pseudo-labels (one at each end) leave a
few regimes at 93 %; three cover too, a few per cent narrower, but have no name a reader can
look up.

Types below ``MIN_LABELLED`` get no figure of their own; ``pooled_estimates`` combines every
type's PPI++ estimate, weighted by its share of the judged items (a stratified estimate: the
mean over all judged items by human standards, which a type's size is part of, and the weight
the run's own per-type table gives it), with Var = Σ w² · Var₊ and t(n − 1) over all n labels.
On golden sets of 10–100 questions with 2–12 labels per type it covers at least 95 % in the
simulation (bench/ppi_sim.py; 60 cases, worst 95.4 %).

Assumptions a reader must keep: the labelled items are a uniform random sample of the items
(``judge audit sample`` draws at random within each type; ``--oversample-uncertain`` does not
and biases this estimate); the interval is about the population of questions of the type that
the golden set samples, not about the few items it has.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import lru_cache
from statistics import NormalDist
from typing import NamedTuple

from judge.audit.stats import AXES
from judge.audit.types import (
    LEVEL,
    MIN_LABELLED,
    PSEUDO_LABELS,
    Corrected,
    CorrectedCell,
    Halving,
    Interval,
    Moments,
    PooledCell,
    PpiEstimate,
)
from judge.axes import SCALE, ScoredAxis
from judge.grouped import type_order as type_order_of
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.results.item_record import ItemRecord

SCALE_BOUNDS: tuple[float, float] = (float(min(SCALE)), float(max(SCALE)))
"""The scale the human scores are on: a mean and its interval are cut to it."""


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _covariance(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Population covariance (divides by n), as ppi-python's λ uses."""
    mx, my = _mean(xs), _mean(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / len(xs)


def _variance(values: Sequence[float]) -> float:
    """Population variance (ddof 0), as ``numpy.std`` in ``ppi_mean_ci``."""
    return _covariance(values, values)


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"ppi: the confidence level must be between 0 and 1, got {level}")
    return NormalDist().inv_cdf(1 - (1 - level) / 2)


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with an integer ``df`` ≥ 1, exactly (Abramowitz and Stegun
    26.7.3: a finite series in cos² of atan(t / √df))."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    total, term = 1.0, 1.0
    if df % 2:
        if df == 1:
            return 2 * theta / math.pi
        for k in range(1, (df - 1) // 2):
            term *= 2 * k / (2 * k + 1) * c2
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    for k in range(1, df // 2):
        term *= (2 * k - 1) / (2 * k) * c2
        total += term
    return math.sin(theta) * total


@lru_cache(maxsize=512)
def t_quantile(df: int, level: float = LEVEL) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom (inf
    for df < 1), by bisection on the exact distribution: the standard library has none, and
    the package does not depend on scipy."""
    if df < 1:
        return math.inf
    low, high = 0.0, 2.0
    while _t_two_sided(high, df) < level:
        low, high = high, high * 2
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if _t_two_sided(middle, df) < level:
            low = middle
        else:
            high = middle
    return high


def _clip(value: float, bounds: tuple[float, float]) -> float:
    return min(max(value, bounds[0]), bounds[1])


def power_tuned_lambda(
    n: int, unlabelled: int, covariance: float, prediction_spread: float
) -> float:
    """PPI++'s λ for a mean: Cov(Y, Ŷ) / ((1 + n/N) · Var(Ŷ)), clipped to [0, 1].

    0 when there are no unlabelled items or no spread in the predictions (see the module's
    docstring: ppi-python is undefined there, and 0 is the limit).
    """
    if unlabelled == 0 or prediction_spread == 0:
        return 0.0
    lam = covariance / ((1 + n / unlabelled) * prediction_spread)
    return min(max(lam, 0.0), 1.0)


def ppi_mean(
    human: Sequence[float],
    predicted: Sequence[float],
    unlabelled: Sequence[float],
    level: float = LEVEL,
    lam: float | None = None,
    bounds: tuple[float, float] = SCALE_BOUNDS,
) -> PpiEstimate:
    """The prediction-powered estimate of the mean human score, with its ``level`` interval.

    ``human`` and ``predicted`` are the human and judge scores of the labelled items, pairwise;
    ``unlabelled`` the judge's scores of the items without a label. ``lam`` None tunes λ
    (PPI++, what the audit uses); a number fixes it (1: classical PPI; 0: the labels alone).
    ``estimate`` and ``interval`` match ``ppi_py.ppi_mean_pointestimate`` and
    ``ppi_py.ppi_mean_ci(alpha=1 - level)``; ``value`` and ``shown`` are what the reports
    print: the plus-four t interval, cut to ``bounds`` (the module's docstring says why).
    """
    n, count = len(human), len(unlabelled)
    _check_sizes(n, len(predicted), count, lam)
    moments = _moments(human, predicted, unlabelled)
    if lam is None:
        lam = power_tuned_lambda(n, count, moments.covariance, moments.prediction_spread)
    rectifiers = [y - lam * p for y, p in zip(human, predicted, strict=True)]
    imputed = [lam * p for p in unlabelled]
    estimate = (_mean(imputed) if count else 0.0) + _mean(rectifiers)
    z = _z(level)
    rectifier_mean = _mean(rectifiers)
    rectifier_variance = _variance(rectifiers)
    imputed_variance = _variance(imputed) if count else 0.0
    plus = _plus_four(rectifier_mean, rectifier_variance, n, lam, bounds)
    plus_variance = plus + (imputed_variance / count if count else 0.0)
    t = t_quantile(n - 1, level)
    value = _clip(estimate, bounds)
    reach = t * math.sqrt(plus_variance)
    partial = PpiEstimate(
        estimate,
        Interval(estimate, estimate),
        lam,
        n,
        count,
        rectifier_variance,
        imputed_variance,
        z,
        moments,
        rectifier_mean,
        plus_variance,
        t,
        value,
        Interval(_clip(value - reach, bounds), _clip(value + reach, bounds)),
    )
    half = z * math.sqrt(partial.variance)
    return partial._replace(interval=Interval(estimate - half, estimate + half))


def _check_sizes(n: int, predicted: int, count: int, lam: float | None) -> None:
    """Refuse inputs that have no estimate: unpaired scores, no labelled item, a fixed λ other
    than 0 without unlabelled items."""
    if n != predicted:
        raise ValueError(
            f"ppi: {n} human scores but {predicted} judge scores; pass one of each per "
            "labelled item"
        )
    if n == 0:
        raise ValueError("ppi: no labelled items; a corrected estimate needs at least one")
    if lam is not None and lam != 0 and count == 0:
        raise ValueError(f"ppi: λ = {lam} needs unlabelled items; pass lam=0 or lam=None")


def _moments(
    human: Sequence[float], predicted: Sequence[float], unlabelled: Sequence[float]
) -> Moments:
    """The sample moments λ is tuned on; the last is the judge scores' variance over all items
    (labelled and not), with Bessel's correction (``prediction_spread``)."""
    n, count = len(human), len(unlabelled)
    everything = [*predicted, *unlabelled]
    spread = (
        _variance(everything) * len(everything) / (len(everything) - 1) if n + count > 1 else 0.0
    )
    return Moments(
        _variance(human),
        _covariance(human, predicted),
        _variance(predicted),
        _variance(unlabelled) if count else 0.0,
        spread,
    )


def _plus_four(
    rectifier_mean: float,
    rectifier_variance: float,
    n: int,
    lam: float,
    bounds: tuple[float, float],
) -> float:
    """The variance of the rectifiers' mean, plus four: their sum of squares with
    PSEUDO_LABELS / 2 values at each end of the range Y − λ·Ŷ can take (Y low, Ŷ high; Y high,
    Ŷ low), variance only."""
    low, high = bounds
    ends = (low - lam * high - rectifier_mean) ** 2 + (high - lam * low - rectifier_mean) ** 2
    squares = rectifier_variance * n + PSEUDO_LABELS / 2 * ends
    return squares / (n + PSEUDO_LABELS - 1) / (n + PSEUDO_LABELS)


def projected_variance(estimate: PpiEstimate, more: int) -> float:
    """The variance after labelling ``more`` of the unlabelled items (then new questions).

    The estimator's own formula with n + more labelled and max(N − more, 0) unlabelled items,
    λ re-tuned by the same rule, the variances and covariance as measured now.
    """
    m = estimate.moments
    n = estimate.labelled + more
    unlabelled = max(estimate.unlabelled - more, 0)
    lam = power_tuned_lambda(n, unlabelled, m.covariance, m.prediction_spread)
    rectifier = m.human_variance - 2 * lam * m.covariance + lam**2 * m.labelled_prediction_variance
    imputed = lam**2 * m.unlabelled_prediction_variance / unlabelled if unlabelled else 0.0
    return max(rectifier, 0.0) / n + imputed


def labels_to_halve(estimate: PpiEstimate) -> Halving | None:
    """The fewest more random labels that would make the interval half as wide; None when it
    has no width (every labelled item scored alike by people and judge: nothing to narrow).

    A planning figure: it assumes the new labels look like the present ones (the variances and
    the judge-human covariance stay as measured) and are drawn at random from the type's
    unlabelled judged items first. As labels come in, power tuning moves λ towards 0 (the
    unlabelled items weigh less), so, unlike with a fixed λ, more labels can always halve the
    interval: in the end all items are labelled and the interval is the labels' own, which
    halves with four times as many. What can run out is the items: past N, the figure counts
    new questions the golden set would need.
    """
    target = estimate.variance / 4
    if target == 0:
        return None
    tolerance = 1 + 1e-9  # the hand-computable cases land on the target exactly
    for more in range(1, estimate.unlabelled + 1):
        if projected_variance(estimate, more) <= target * tolerance:
            return Halving(more, more, 0)
    # Every item labelled: λ = 0 and the variance is Var(Y) / n', which falls with n'.
    needed = math.ceil(estimate.moments.human_variance / target / tolerance)
    more = max(needed - estimate.labelled, estimate.unlabelled + 1)
    return Halving(more, estimate.unlabelled, more - estimate.unlabelled)


class _Item(NamedTuple):
    type: str
    score: int | None
    """The judge's score on the axis (None: no ok verdict for it)."""
    labels: list[HumanLabel]
    """The item's labels that carry the axis (not review marks)."""
    chosen: int
    """Review-page labels of this item, left out (``CorrectedCell.chosen_labels``)."""


def _cell(rows: list[_Item], axis: ScoredAxis) -> CorrectedCell:
    predicted, human, unlabelled = [], [], []
    labels = unused = 0
    for row in rows:
        if row.score is None:
            unused += len(row.labels)
            continue
        score = float(row.score)
        labels += len(row.labels)
        if row.labels:
            values = [value for lab in row.labels if (value := getattr(lab, axis)) is not None]
            human.append(_mean(values))
            predicted.append(score)
        else:
            unlabelled.append(score)
    fit = ppi_mean(human, predicted, unlabelled) if human else None
    estimate = fit if len(human) >= MIN_LABELLED else None
    judged = [*predicted, *unlabelled]
    return CorrectedCell(
        items=len(rows),
        judged=len(judged),
        judge_mean=_mean(judged) if judged else None,
        labelled=len(human),
        labels=labels,
        unused_labels=unused,
        chosen_labels=sum(row.chosen for row in rows),
        estimate=estimate,
        halving=labels_to_halve(estimate) if estimate is not None else None,
        fit=fit,
        matched=sum(y == p for y, p in zip(human, predicted, strict=True)),
    )


def corrected_estimates(
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    score: Callable[[ItemRecord], tuple[int, int] | None],
    type_order: Sequence[str] = (),
) -> Corrected:
    """Per axis, per type and over all types: the corrected estimate of the mean human score.

    ``score`` gives the judge's (faithfulness, relevance) for an item with an ok verdict, None
    otherwise. A label counts only for the exact answer it was given for (its answer hash).
    The types with items come in the order of every per-type table (``judge.grouped
    .type_order``: those of ``type_order``, the configured ``data.question_types``, then any
    other in the items' order), "all" last; "all" pools every item (so it assumes the labels
    are spread over the types like the items, as the stratified sampler draws them). Labels
    from review.html marks are left out (counted in ``chosen_labels``): a reviewer picks what
    to open. An optional axis is added by ``corrected_axis`` (``judge.audit.agreement``).
    """

    def on(index: int) -> Callable[[ItemRecord], int | None]:
        def axis_score(item: ItemRecord) -> int | None:
            scores = score(item)
            return None if scores is None else scores[index]

        return axis_score

    corrected: Corrected = {}
    for index, axis in enumerate(AXES):
        corrected[axis] = corrected_axis(items, labels, on(index), axis, type_order)
    return corrected


def corrected_axis(
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    score: Callable[[ItemRecord], int | None],
    axis: ScoredAxis,
    type_order: Sequence[str] = (),
) -> dict[str, CorrectedCell]:
    """One axis of ``corrected_estimates``: per type and over all types, from the labels that
    carry the axis. ``score``: the judge's score of an item on it (None: no ok verdict). For
    an optional axis ``items`` are those it was asked for (``correctness``: the questions with
    a correctness verdict); a label without the axis (None) is no label for it."""
    hashes = {qid: text_sha256(item.answer) for qid, item in items.items()}
    matching: dict[str, list[HumanLabel]] = defaultdict(list)
    chosen: dict[str, int] = defaultdict(int)
    for label in labels:
        if hashes.get(label.question_id) != label.answer_sha256:
            continue
        if getattr(label, axis) is None:
            continue
        if label.source == "review":
            chosen[label.question_id] += 1
        else:
            matching[label.question_id].append(label)
    rows = [
        _Item(item.type, score(item), matching.get(qid, []), chosen[qid])
        for qid, item in items.items()
    ]
    groups: dict[str, list[_Item]] = defaultdict(list)
    for row in rows:
        groups[row.type].append(row)
    types = {qid: item.type for qid, item in items.items()}
    ordered = [*(t for t in type_order_of(types, type_order) if t in groups), "all"]
    groups["all"] = rows
    return {name: _cell(groups[name], axis) for name in ordered}


def pooled_estimates(corrected: Corrected, level: float = LEVEL) -> dict[ScoredAxis, PooledCell]:
    """Per axis, the stratified estimate over the types (not "all"), from the types' fits.

    Var = Σ w² · Var₊ (the types are independent samples) and the interval is
    estimate ± t(n − 1) · √Var, n every label pooled, cut to the scale; measured in
    bench/ppi_sim.py. The weights are the judged items' shares, as the run's per-type table
    counts them: the figure is then the mean human score over the run's judged items.
    """
    pooled: dict[ScoredAxis, PooledCell] = {}
    for axis, cells in corrected.items():
        types = [name for name in cells if name != "all"]
        fits = [(name, cells[name]) for name in types if cells[name].fit is not None]
        without = tuple(name for name in types if cells[name].fit is None and cells[name].judged)
        judged = sum(cell.judged for _, cell in fits)
        labelled = sum(cell.labelled for _, cell in fits)
        weights = tuple(cell.judged / judged for _, cell in fits) if judged else ()
        judge_mean = (
            math.fsum(
                w * (cell.judge_mean or 0.0) for w, (_, cell) in zip(weights, fits, strict=True)
            )
            if judged
            else None
        )
        estimate = interval = variance = None
        if labelled >= MIN_LABELLED:
            estimates = [cell.fit for _, cell in fits if cell.fit is not None]
            estimate = _clip(
                math.fsum(w * e.value for w, e in zip(weights, estimates, strict=True)),
                SCALE_BOUNDS,
            )
            variance = math.fsum(
                w * w * e.plus_variance for w, e in zip(weights, estimates, strict=True)
            )
            reach = t_quantile(labelled - 1, level) * math.sqrt(variance)
            interval = Interval(
                _clip(estimate - reach, SCALE_BOUNDS), _clip(estimate + reach, SCALE_BOUNDS)
            )
        pooled[axis] = PooledCell(
            tuple(name for name, _ in fits),
            without,
            judged,
            labelled,
            judge_mean,
            estimate,
            interval,
            variance,
            weights,
        )
    return pooled
