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

Assumptions a reader must keep: the labelled items are a uniform random sample of the items
(``judge audit sample`` draws at random within each type; ``--oversample-uncertain`` does not
and biases this estimate); the interval is about the population of questions of the type that
the golden set samples, not about the few items it has.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import NamedTuple

from judge.audit.stats import AXES, Axis, Interval
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.results.item_record import ItemRecord

LEVEL = 0.95
"""Confidence level of every corrected-estimate interval."""

MIN_LABELLED = 10
"""Labelled items (with an ok verdict) a type needs before its corrected estimate is shown.

The interval is a normal approximation whose spread is estimated from the n labelled items,
and λ from the same items. Measured by simulation (``test_coverage_of_the_intervals_shown`` in
tests/audit/test_ppi.py, figures in docs/audit.md), among the intervals shown the nominal 95 %
covers the true mean 86–97 % of the time at n = 10 and 88–91 % at n = 20, and nears 95 % only
from about 100. Below 10 the estimate of λ is noise and most intervals are not shown anyway
(next paragraph); 10 still gives the shipped sample's factual type (12 items) a figure.

Scores are 0, 1 or 2 and often mostly 2: labels that are all alike give a rectifier variance
of 0 and an interval of no width that claims a certainty the data do not have (with 90 % of
labels 2, ten items are all 2 35 % of the time, and such an interval never covers the truth).
A cell whose labels show no spread gives the estimate without an interval and says why.
"""


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _covariance(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Population covariance (divides by n), as ppi-python's λ uses."""
    mx, my = _mean(xs), _mean(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / len(xs)


def _variance(values: Sequence[float]) -> float:
    """Population variance (ddof 0), as ``numpy.std`` in ``ppi_mean_ci``."""
    return _covariance(values, values)


class Moments(NamedTuple):
    """What the variance of the estimator depends on, to project it to more labels."""

    human_variance: float
    """Var(Y) over the labelled items."""
    covariance: float
    """Cov(Y, Ŷ) over the labelled items."""
    labelled_prediction_variance: float
    """Var(Ŷ) over the labelled items."""
    unlabelled_prediction_variance: float
    """Var(Ŷ) over the unlabelled items (0 when there are none)."""
    prediction_spread: float
    """Var(Ŷ) over every judged item, sample variance (ddof 1), as in ppi-python's λ."""


class PpiEstimate(NamedTuple):
    """The corrected mean of one axis over one type (or all types), with its interval."""

    estimate: float
    interval: Interval
    lam: float
    """Weight of the judge's scores (0: labels only; 1: classical PPI)."""
    labelled: int
    """n: items with a human score and a judge score."""
    unlabelled: int
    """N: items with a judge score and no human score."""
    rectifier_variance: float
    """Var(Y − λ·Ŷ) over the labelled items: enters the variance divided by n."""
    prediction_variance: float
    """Var(λ·Ŷ) over the unlabelled items: enters the variance divided by N."""
    z: float
    moments: Moments

    @property
    def variance(self) -> float:
        """The estimator's variance (the interval is ``estimate ± z · √variance``)."""
        unlabelled = self.prediction_variance / self.unlabelled if self.unlabelled else 0.0
        return self.rectifier_variance / self.labelled + unlabelled

    @property
    def half_width(self) -> float:
        return (self.interval.high - self.interval.low) / 2


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"ppi: the confidence level must be between 0 and 1, got {level}")
    return NormalDist().inv_cdf(1 - (1 - level) / 2)


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
) -> PpiEstimate:
    """The prediction-powered estimate of the mean human score, with its ``level`` interval.

    ``human`` and ``predicted`` are the human and judge scores of the labelled items, pairwise;
    ``unlabelled`` the judge's scores of the items without a label. ``lam`` None tunes λ
    (PPI++, what the audit uses); a number fixes it (1: classical PPI; 0: the labels alone).
    Matches ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci(alpha=1 - level)``.
    """
    n, count = len(human), len(unlabelled)
    if n != len(predicted):
        raise ValueError(
            f"ppi: {n} human scores but {len(predicted)} judge scores; pass one of each per "
            "labelled item"
        )
    if n == 0:
        raise ValueError("ppi: no labelled items; a corrected estimate needs at least one")
    if lam is not None and lam != 0 and count == 0:
        raise ValueError(f"ppi: λ = {lam} needs unlabelled items; pass lam=0 or lam=None")
    everything = [*predicted, *unlabelled]
    spread = (
        _variance(everything) * len(everything) / (len(everything) - 1) if n + count > 1 else 0.0
    )
    moments = Moments(
        _variance(human),
        _covariance(human, predicted),
        _variance(predicted),
        _variance(unlabelled) if count else 0.0,
        spread,
    )
    if lam is None:
        lam = power_tuned_lambda(n, count, moments.covariance, spread)
    rectifiers = [y - lam * p for y, p in zip(human, predicted, strict=True)]
    imputed = [lam * p for p in unlabelled]
    estimate = (_mean(imputed) if count else 0.0) + _mean(rectifiers)
    z = _z(level)
    partial = PpiEstimate(
        estimate,
        Interval(estimate, estimate),
        lam,
        n,
        count,
        _variance(rectifiers),
        _variance(imputed) if count else 0.0,
        z,
        moments,
    )
    half = z * math.sqrt(partial.variance)
    return partial._replace(interval=Interval(estimate - half, estimate + half))


class Halving(NamedTuple):
    """How many more labelled items would halve the interval, and where they would come from."""

    more: int
    """Items to label beyond the present ones."""
    from_run: int
    """Of those, the type's judged items that have no label yet (at most N)."""
    new_questions: int
    """The rest: the type has not enough unlabelled items, so the golden set needs new
    questions (labelled) to get there."""


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


class CorrectedCell(NamedTuple):
    """One type (or "all") on one axis: the judge's mean next to the corrected estimate."""

    items: int
    """Items of the type in the run (answered questions, whatever their verdict)."""
    judged: int
    """Of those, with an ok verdict: the judge's mean is over these."""
    judge_mean: float | None
    labelled: int
    """n: judged items with at least one matching human label."""
    labels: int
    """Labels on those items (more than ``labelled`` where several people labelled one item;
    their mean is the item's human score)."""
    unused_labels: int
    """Labels on items without an ok verdict: no judge score to correct, so not used."""
    chosen_labels: int
    """Labels from review.html marks (``source == "review"``) on the type's items: the reviewer
    chose those items, so they are not the random sample the estimate assumes; not used."""
    estimate: PpiEstimate | None
    """None below ``MIN_LABELLED`` labelled items."""
    halving: Halving | None
    """None where the cell shows no interval (``note``)."""

    @property
    def note(self) -> str | None:
        """Why the cell shows no interval (and, below the minimum, no number); None when it
        shows both."""
        if self.estimate is None:
            return f"too few labels ({self.labelled} of {MIN_LABELLED})"
        if self.estimate.rectifier_variance == 0:
            return f"no spread in {self.labelled} labels: no interval"
        return None


Corrected = dict[Axis, dict[str, CorrectedCell]]
"""axis → type (and "all") → cell."""


class _Item(NamedTuple):
    type: str
    scores: tuple[int, int] | None
    labels: list[HumanLabel]
    chosen: int
    """Review-page labels of this item, left out (``CorrectedCell.chosen_labels``)."""


def _cell(rows: list[_Item], axis_index: int) -> CorrectedCell:
    predicted, human, unlabelled = [], [], []
    labels = unused = 0
    for row in rows:
        if row.scores is None:
            unused += len(row.labels)
            continue
        score = float(row.scores[axis_index])
        labels += len(row.labels)
        if row.labels:
            values = [(lab.faithfulness, lab.relevance)[axis_index] for lab in row.labels]
            human.append(_mean(values))
            predicted.append(score)
        else:
            unlabelled.append(score)
    estimate = ppi_mean(human, predicted, unlabelled) if len(human) >= MIN_LABELLED else None
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
        halving=(
            labels_to_halve(estimate)
            if estimate is not None and estimate.rectifier_variance > 0
            else None
        ),
    )


def corrected_estimates(
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    score: Callable[[ItemRecord], tuple[int, int] | None],
) -> Corrected:
    """Per axis, per type and over all types: the corrected estimate of the mean human score.

    ``score`` gives the judge's (faithfulness, relevance) for an item with an ok verdict, None
    otherwise. A label counts only for the exact answer it was given for (its answer hash);
    types are sorted, "all" pools every item (so it assumes the labels are spread over the
    types like the items, as the stratified sampler draws them). Labels from review.html marks
    are left out (counted in ``chosen_labels``): a reviewer picks what to open.
    """
    hashes = {qid: text_sha256(item.answer) for qid, item in items.items()}
    matching: dict[str, list[HumanLabel]] = defaultdict(list)
    chosen: dict[str, int] = defaultdict(int)
    for label in labels:
        if hashes.get(label.question_id) != label.answer_sha256:
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
    ordered = [*sorted(groups), "all"]
    groups["all"] = rows
    return {
        axis: {name: _cell(groups[name], index) for name in ordered}
        for index, axis in enumerate(AXES)
    }
