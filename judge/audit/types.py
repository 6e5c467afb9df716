"""The audit's public results: what the agreement with the humans and the corrected estimates
are, apart from how they are computed; and the constants the views print or write.

The views (``judge.report``) show these and the record (``judge.record``) keeps them; they must
not depend on the statistics, the sampling or the label files, so the types live here, in a
module with no logic of the audit's and no import of the rest of ``judge.audit``, of
``judge.judging`` (but its types, ``judge.judging.types``) or of ``judge.inputs``
(``tests/test_layering.py`` and ``.importlinter`` keep it so). What remains a method here is a
property of the data (``Agreement.coverage``, ``CorrectedCell.note``) that needs nothing but
the fields and the constants.

A disagreement holds the human label it disagrees with. The label's type, ``HumanLabel``, is
the labels file's (``judge.inputs.labels``), which this module may not import; the field is
typed by ``ShownLabel``, the part of a label a disagreement is shown with, which every
``HumanLabel`` is.
"""

from __future__ import annotations

from typing import Annotated, NamedTuple, Protocol

from pydantic import GetPydanticSchema
from pydantic_core import core_schema

from judge.axes import ScoredAxis
from judge.judging.types import Verdict
from judge.results.item_record import ItemRecord

# --- the constants the views print and the review page writes --------------------------------

LEVEL = 0.95
"""Confidence level of every corrected-estimate interval."""

MIN_LABELLED = 10
"""Labelled items (with an ok verdict) a type needs before its corrected estimate is shown.

Below 10, λ fitted on the labels is noise and a per-type interval from the plus-four variance
(module docstring) spans most of the scale; such types count in the pooled estimate
(``pooled_estimates``) instead. 10 still gives the shipped sample's factual type (12 items) a
figure. From 10 on, the interval shown covers at least 94 % in every simulated regime
(bench/ppi_sim.py; the normal interval covered 75–87 % at 10).
"""

PSEUDO_LABELS = 4
"""Values added to the rectifiers' variance, half at each end of their range (plus four)."""

MARKS_FORMAT = "judge-review-marks"
#: Bump when the file's fields change; a newer file than this is refused, not half-read.
MARKS_VERSION = 1
#: A comment is a short note, not an essay; the page stops typing at this length too.
COMMENT_MAX_CHARS = 500


# --- agreement with the humans ---------------------------------------------------------------


class Interval(NamedTuple):
    low: float
    high: float


class AxisStats(NamedTuple):
    n: int
    exact: float | None
    exact_ci: Interval | None
    within_one: float | None
    kappa: float | None
    kappa_ci: Interval | None
    confusion: list[list[int]]
    balanced_accuracy: float | None = None
    """Mean per-class recall over the human scores present."""
    majority_class: int | None = None
    """The human score most common on these labels."""
    majority_exact: float | None = None
    """Exact agreement of always answering ``majority_class``: the bar ``exact`` must clear."""


class ShownLabel(Protocol):
    """What a disagreement shows of the human label (``judge.inputs.labels.HumanLabel`` is one):
    a structural type, so that this module need not import the labels file's."""

    @property
    def labeller(self) -> str: ...
    @property
    def faithfulness(self) -> int: ...
    @property
    def relevance(self) -> int: ...
    @property
    def note(self) -> str: ...


#: Pydantic needs a schema for every field of a type a model holds, and a protocol has none: the
#: record keeps the audit's figures (``Record.audit``, ``AuditResult.figures``), never its
#: disagreements, so the label's schema is "any object", which is all that field ever needs.
_ANY_OBJECT = GetPydanticSchema(lambda _source, _handler: core_schema.any_schema())


class Disagreement(NamedTuple):
    item: ItemRecord
    label: Annotated[ShownLabel, _ANY_OBJECT]
    verdict: Verdict

    @property
    def gap(self) -> int:
        """Points apart, both axes together (0-4): larger gaps are listed first."""
        v, label = self.verdict, self.label
        return abs(label.faithfulness - (v.faithfulness or 0)) + abs(
            label.relevance - (v.relevance or 0)
        )


class Agreement(NamedTuple):
    """Agreement of one judge with the humans."""

    judge: str
    per_axis: dict[ScoredAxis, dict[str, AxisStats]]
    """axis → type (and "all") → statistics; ``correctness`` only where the run judged it and
    labels carry it."""
    both_exact: float | None
    both_exact_ci: Interval | None
    n: int
    """Labels scored: those of items the judge gave an ok verdict (for both the judge and the
    lexical baseline of one audit)."""
    disagreements: list[Disagreement]
    """Scored labels whose two scores are not both equal to the judge's, largest gap first."""
    labelled: int = 0
    """Every label of an answer in the run, whatever its verdict."""
    both_exact_all: float | None = None
    """Both scores exact over all ``labelled``, labels not scored (non-ok verdicts) counted as
    wrong."""
    not_ok: tuple[tuple[str, int], ...] = ()
    """(verdict status, labels) of the labelled items without an ok verdict."""

    @property
    def coverage(self) -> float | None:
        """Share of the labels that were scored (ok verdicts / labels); None with no labels."""
        return self.n / self.labelled if self.labelled else None


# --- corrected estimates ---------------------------------------------------------------------


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
    rectifier_mean: float
    """mean(Y − λ·Ŷ) over the labelled items."""
    plus_variance: float
    """The estimator's variance with the rectifiers' spread taken with ``PSEUDO_LABELS``
    pseudo-values (module docstring): what ``shown`` is computed from."""
    t: float
    """Student's t quantile with n − 1 degrees of freedom (inf for n = 1)."""
    value: float
    """The estimate cut to the scale (PPI++ can put it past an end): the number shown."""
    shown: Interval
    """value ± t · √plus_variance, cut to the scale: the interval the reports print."""

    @property
    def variance(self) -> float:
        """The estimator's variance (the interval is ``estimate ± z · √variance``)."""
        unlabelled = self.prediction_variance / self.unlabelled if self.unlabelled else 0.0
        return self.rectifier_variance / self.labelled + unlabelled

    @property
    def half_width(self) -> float:
        return (self.interval.high - self.interval.low) / 2


class Halving(NamedTuple):
    """How many more labelled items would halve the interval, and where they would come from."""

    more: int
    """Items to label beyond the present ones."""
    from_run: int
    """Of those, the type's judged items that have no label yet (at most N)."""
    new_questions: int
    """The rest: the type has not enough unlabelled items, so the golden set needs new
    questions (labelled) to get there."""


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
    """None below the minimum, and where the normal variance is 0 (nothing to halve)."""
    fit: PpiEstimate | None = None
    """The estimate from any number of labels (None without any): what the pooled estimate
    combines; shown only from ``MIN_LABELLED`` on (``estimate``)."""
    matched: int = 0
    """Labelled items whose human score the judge gave exactly."""

    @property
    def note(self) -> str | None:
        """Why the cell shows no number; None when it shows one (with its interval)."""
        if self.estimate is None:
            return f"too few labels ({self.labelled} of {MIN_LABELLED})"
        return None

    @property
    def remark(self) -> str | None:
        """What a reader of a shown interval must know when the labels show no disagreement
        to measure (every correction Y − λ·Ŷ alike): the width then comes from the
        pseudo-labels alone (module docstring), not from the labels. None otherwise."""
        e = self.estimate
        if e is None or e.rectifier_variance > 0:
            return None
        if self.matched == self.labelled:
            return f"the judge matched all {self.labelled} labels; width from the pseudo-labels"
        if e.moments.human_variance == 0:
            return f"all {self.labelled} labels alike; width from the pseudo-labels"
        return "every correction alike; width from the pseudo-labels"


Corrected = dict[ScoredAxis, dict[str, CorrectedCell]]
"""axis → type (and "all") → cell; the optional axes (``judge.axes.OPTIONAL_AXES``) only where
the run judged them."""


class PooledCell(NamedTuple):
    """One axis over every type with labels: the types' corrected estimates, each weighted by
    its share of the judged items (stratified), so that a golden set whose types each have
    fewer than ``MIN_LABELLED`` labels still gets a corrected figure."""

    types: tuple[str, ...]
    """The types pooled: those with at least one labelled item judged ok."""
    without_labels: tuple[str, ...]
    """Types with judged items and no label: they cannot be corrected and are left out (the
    pooled figure is then about the other types only)."""
    judged: int
    """Judged items of the pooled types."""
    labelled: int
    judge_mean: float | None
    """The judge's mean over the pooled types' judged items."""
    estimate: float | None
    """Σ w · (type's estimate, cut to the scale), w = the type's judged items / ``judged``;
    None below ``MIN_LABELLED`` labels in all."""
    interval: Interval | None
    variance: float | None
    """Σ w² · the type's plus-four variance."""
    weights: tuple[float, ...] = ()
    """One per type of ``types``."""

    @property
    def note(self) -> str | None:
        """Why there is no pooled number; None when there is one."""
        if self.estimate is None:
            return f"too few labels ({self.labelled} of {MIN_LABELLED})"
        return None


# --- the audit -------------------------------------------------------------------------------


class AuditResult(NamedTuple):
    folder: str
    judge: Agreement
    lexical: Agreement
    humans: dict[ScoredAxis, tuple[float | None, int]]
    labellers: list[str]
    corrected: Corrected
    """Per axis and type: the judge's mean and the mean human score estimated from the labels
    and the judge's scores together (``judge.audit.ppi``)."""
    pooled: dict[ScoredAxis, PooledCell]
    """Per axis: the types' corrected estimates pooled, each weighted by its share of the
    judged items (``judge.audit.ppi.pooled_estimates``): computed here, once, so that no view
    computes a statistic."""

    def figures(self) -> AuditResult:
        """What the run record keeps (``judge.record.model.Record.audit``): every figure a view shows
        (report.md, the console summary), without the disagreements (``judge audit`` lists them
        with the labels they disagree with, read from the labels file) and without each cell's
        ``fit`` (what ``pooled`` was computed from; a fit of one label has an infinite t, which
        JSON cannot hold)."""
        corrected: Corrected = {
            axis: {name: cell._replace(fit=None) for name, cell in cells.items()}
            for axis, cells in self.corrected.items()
        }
        return self._replace(
            judge=self.judge._replace(disagreements=[]),
            lexical=self.lexical._replace(disagreements=[]),
            corrected=corrected,
        )
