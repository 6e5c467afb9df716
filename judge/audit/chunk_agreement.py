"""The judge's chunk grades against the human chunk labels: how good its labels are on this
golden set, and judged recall corrected with the human labels.

- **Agreement** (``chunk_agreement``): on labelled questions' graded chunks, the human label (the
  chunk is listed in ``relevant_chunks``) against the judge's binary grade (``RELEVANT_GRADE``):
  exact agreement, Cohen's κ (quadratic κ on two classes), balanced accuracy and the
  majority-class line per type, with intervals from a bootstrap that resamples *questions*
  (``judge.audit.stats.cluster_bootstrap_ci``: the chunks of one question share its difficulty, so resampling
  chunks would pretend to more information than there is); and the grade (0-3) × label table.
- **Judged recall corrected with the human labels** (``corrected_recall``): the mean human
  recall@k by prediction-powered inference (``judge.audit.ppi.ppi_mean``), the judged recall as
  the prediction; its coverage is measured in ``bench/chunk_ppi_sim.py`` (docs/judge.md,
  "Chunk grades: corrected recall, measured").

The judged values themselves and the possible missing labels are ``judge.results.chunk_grades``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.audit.ppi import ppi_mean
from judge.audit.stats import (
    Pairs,
    balanced_accuracy,
    cluster_bootstrap_ci,
    exact_agreement,
    majority_class,
    quadratic_kappa,
)
from judge.audit.types import LEVEL, Interval
from judge.grouped import ALL
from judge.grouped import type_order as type_order_of
from judge.inputs.golden import GoldenQuestion
from judge.metrics import RETRIEVAL_SCALE
from judge.results.chunk_grades import (
    GRADES,
    RELEVANT_GRADE,
    GradedChunk,
    graded_depth,
    pools_by_question,
)
from judge.retrieval import score_rankings

# --- the grades against the human labels ------------------------------------------------------


def _majority_exact(pairs: Pairs) -> float | None:
    majority = majority_class(pairs)
    return None if majority is None else majority[1]


class ChunkAgreementCell(BaseModel):
    """The judge's binary chunk grades against the human labels on one type (or all)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunks: int
    """Graded chunks compared (of labelled questions, with a grade)."""
    questions: int
    """Questions they belong to: the intervals resample these."""
    ungraded: int
    """Chunks of labelled questions the judge gave no grade: left out, counted here."""
    exact: float | None
    """Share of chunks where judge (grade ≥ 2) and label (listed) agree."""
    exact_ci: Interval | None
    kappa: float | None
    """Cohen's κ (the quadratic κ of ``judge.audit.stats`` on two classes is Cohen's)."""
    kappa_ci: Interval | None
    balanced_accuracy: float | None
    balanced_accuracy_ci: Interval | None
    majority_class: int | None
    """The human label most common here (1 listed, 0 not)."""
    majority_exact: float | None
    """Agreement of always answering ``majority_class``: the bar ``exact`` must clear."""
    majority_exact_ci: Interval | None
    grades: list[list[int]]
    """4×2 counts: row = the judge's grade 0..3, column = the human label (0 not listed, 1
    listed). How a 0–3 grade lines up with a yes/no label says more than the cut alone."""


class ChunkAgreement(BaseModel):
    """Per type (the configured order) then ``all``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    relevant_grade: int = RELEVANT_GRADE
    types: dict[str, ChunkAgreementCell]


def _agreement_cell(
    clusters: list[list[tuple[int, int, int]]], ungraded: int, resamples: int, seed: int
) -> ChunkAgreementCell:
    """``clusters``: per question, (human, judge binary, grade) of each graded chunk."""
    pairs = [(h, j) for cluster in clusters for h, j, _ in cluster]
    pair_clusters = [[(h, j) for h, j, _ in cluster] for cluster in clusters]
    grades = [[0, 0] for _ in GRADES]
    for cluster in clusters:
        for human, _, grade in cluster:
            grades[grade][human] += 1

    def ci(statistic: Callable[[Pairs], float | None]) -> Interval | None:
        return cluster_bootstrap_ci(pair_clusters, statistic, resamples, LEVEL, seed)

    majority = majority_class(pairs)
    return ChunkAgreementCell(
        chunks=len(pairs),
        questions=len(clusters),
        ungraded=ungraded,
        exact=exact_agreement(pairs),
        exact_ci=ci(exact_agreement),
        kappa=quadratic_kappa(pairs),
        kappa_ci=ci(quadratic_kappa),
        balanced_accuracy=balanced_accuracy(pairs),
        balanced_accuracy_ci=ci(balanced_accuracy),
        majority_class=None if majority is None else majority[0],
        majority_exact=None if majority is None else majority[1],
        majority_exact_ci=ci(_majority_exact),
        grades=grades,
    )


def chunk_agreement(
    questions: Sequence[GoldenQuestion],
    graded: Iterable[GradedChunk],
    type_order: Sequence[str] = (),
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> ChunkAgreement:
    """The judge's chunk grades against the golden labels, per type and over all.

    On the labelled questions' graded chunks (out-of-scope questions included: every chunk of
    theirs is labelled not relevant): human = 1 if ``relevant_chunks`` lists the chunk, judge =
    1 if its grade is ≥ ``RELEVANT_GRADE``. Chunks without a grade are left out and counted.
    Intervals: ``cluster_bootstrap_ci`` over questions. Every type of ``type_order`` (then any
    other the questions have) gets a row, even without a labelled chunk (n 0, values None).
    """
    pools = pools_by_question(questions, graded)
    per_type: dict[str, list[list[tuple[int, int, int]]]] = defaultdict(list)
    ungraded: dict[str, int] = defaultdict(int)
    for q in questions:
        pool = pools.get(q.id)
        if q.relevant_chunks is None or pool is None:
            continue
        listed = set(q.relevant_chunks)
        cluster = []
        for c in pool:
            if c.grade is None:
                ungraded[q.type] += 1
                continue
            cluster.append((int(c.chunk_id in listed), int(c.grade >= RELEVANT_GRADE), c.grade))
        if cluster:
            per_type[q.type].append(cluster)
    order = type_order_of({q.id: q.type for q in questions}, type_order)
    cells = {
        name: _agreement_cell(per_type.get(name, []), ungraded.get(name, 0), resamples, seed)
        for name in order
    }
    everything = [cluster for name in order for cluster in per_type.get(name, [])]
    cells[ALL] = _agreement_cell(everything, sum(ungraded.values()), resamples, seed)
    return ChunkAgreement(types=cells)


# --- judged recall corrected with the human labels --------------------------------------------


class RecallPair(NamedTuple):
    """One answerable question's recall@k: by the human labels and by the judge's grades."""

    type: str
    human: float | None
    """Recall@k by ``relevant_chunks`` (``judge.retrieval``'s); None for an unlabelled question."""
    judged: float
    """The prediction: ``judged_recall@k``, or 0 when no graded chunk is judged relevant (the
    judge then says nothing relevant was retrieved; ``judged_values`` leaves it undefined, but
    a prediction must exist for every question, and leaving those out would bias the target)."""


def recall_pairs(
    questions: Sequence[GoldenQuestion],
    graded: Iterable[GradedChunk],
    k: int,
    *,
    depth: int | None = None,
) -> tuple[dict[str, RecallPair], dict[str, int]]:
    """Per answerable question with a fully graded pool: its ``RecallPair`` at ``k``; and per
    type, the questions left out because a chunk has no grade (no honest prediction).

    The human recall@k is read from the graded pool's ranking, which is the run's top
    ``depth``: exact for k ≤ depth, which is why a deeper k is refused (ValueError).
    """
    pools = pools_by_question(questions, graded)
    depth = graded_depth(pools, depth)
    if k > depth:
        raise ValueError(f"recall@{k} needs grades {k} deep; the judge graded {depth}")
    pairs: dict[str, RecallPair] = {}
    ungraded: dict[str, int] = {}
    for q in questions:
        pool = pools.get(q.id)
        if not q.answerable or pool is None:
            continue
        if any(c.grade is None for c in pool):
            ungraded[q.type] = ungraded.get(q.type, 0) + 1
            continue
        # The prediction: judged recall relative to the graded pool, at every k (at the depth
        # itself it is 1 whenever the judge found a relevant chunk, i.e. the judged hit; the
        # tables leave that one out as uninformative, the correction needs it), 0 when the
        # judge found none.
        found = [c.rank for c in pool if (c.grade or 0) >= RELEVANT_GRADE]
        predicted = sum(rank <= k for rank in found) / len(found) if found else 0.0
        human = None
        if q.relevant_chunks is not None:
            ranking = [c.chunk_id for c in pool]
            human = score_rankings([ranking], [frozenset(q.relevant_chunks)], [k])[f"recall@{k}"][0]
        pairs[q.id] = RecallPair(q.type, human, predicted)
    return pairs, ungraded


class CorrectedRecall(BaseModel):
    """The mean human recall@k of one type (or all), corrected from the judged recall."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: int
    """Answerable questions with a fully graded pool: the population estimated."""
    labelled: int
    """n: of those, with chunk labels (a human recall and a judged one)."""
    unlabelled: int
    """N: with the judged recall only."""
    ungraded: int
    """Answerable questions left out: a chunk without a grade."""
    judged_mean: float | None
    """The judge's mean (the prediction) over all ``questions``."""
    labels_mean: float | None
    """The mean human recall over the ``labelled`` ones."""
    estimate: float | None
    """The corrected mean (PPI++, cut to 0–1); None without a labelled question."""
    interval: Interval | None
    """The interval the reports show (``PpiEstimate.shown``: plus four, t, cut to 0–1)."""
    labels_only: Interval | None
    """The same interval from the labels alone (λ = 0, the judge ignored): what the grades buy
    is the difference in width."""
    lam: float | None
    """Weight of the judged recall (0: labels only)."""

    @property
    def note(self) -> str | None:
        """Why there is no corrected value; None when there is one."""
        if self.estimate is None:
            return "no labelled question: no corrected value"
        return None


LambdaRule = Literal["plus", "ppi++"]
"""How λ is chosen: ``plus`` minimises the variance the shown interval is computed from (the
default here); ``ppi++`` is the answer audit's rule (``judge.audit.ppi.power_tuned_lambda``)."""


def plus_tuned_lambda(
    human: Sequence[float], predicted: Sequence[float], unlabelled: Sequence[float]
) -> float:
    """The λ in [0, 1] that minimises ``PpiEstimate.plus_variance`` on the scale 0–1.

    PPI++ tunes λ for the normal variance, but the interval shown is computed from the
    plus-four variance, whose pseudo-labels sit at the ends of the rectifiers' range (−λ and
    1 for recall): with λ near 1 they cost more than with λ = 0, so the PPI++ λ can give an
    interval *wider* than the labels alone (bench/chunk_ppi_sim.py measured 3 % wider on
    average). The plus-four variance is exactly quadratic in λ (every term is a variance or a
    square of a mean that is linear in λ), so three evaluations find its minimum; λ = 0 is a
    candidate, so the interval is never wider than the labels' own (before the cut to 0–1,
    which, around another centre, can leave it a hair wider). Chosen from the data like
    PPI++'s λ; its coverage is measured in the simulation.
    """
    if not unlabelled:
        return 0.0

    def f(lam: float) -> float:
        fit = ppi_mean(
            list(human), list(predicted), list(unlabelled), lam=lam, bounds=RETRIEVAL_SCALE
        )
        return fit.plus_variance

    f0, f_half, f1 = f(0.0), f(0.5), f(1.0)
    a = 2 * (f1 - 2 * f_half + f0)
    b = f1 - f0 - a
    candidates = [0.0, 1.0]
    if a > 0:
        candidates.append(min(max(-b / (2 * a), 0.0), 1.0))
    return min(candidates, key=lambda lam: a * lam * lam + b * lam)


def corrected_cell(
    human: Sequence[float],
    predicted: Sequence[float],
    unlabelled: Sequence[float],
    ungraded: int = 0,
    *,
    rule: LambdaRule = "plus",
) -> CorrectedRecall:
    """One type's (or all's) corrected recall from its (human, judged) pairs and the judged
    recall of its unlabelled questions: ``judge.audit.ppi.ppi_mean`` on the scale 0–1, the
    estimator the answer audit uses (plus-four t interval), with λ by ``rule``."""
    judged = [*predicted, *unlabelled]
    fit = alone = None
    if human:
        lam = plus_tuned_lambda(human, predicted, unlabelled) if rule == "plus" else None
        fit = ppi_mean(
            list(human), list(predicted), list(unlabelled), lam=lam, bounds=RETRIEVAL_SCALE
        )
        alone = ppi_mean(list(human), list(predicted), [], lam=0.0, bounds=RETRIEVAL_SCALE)
    return CorrectedRecall(
        questions=len(judged),
        labelled=len(human),
        unlabelled=len(unlabelled),
        ungraded=ungraded,
        judged_mean=math.fsum(judged) / len(judged) if judged else None,
        labels_mean=math.fsum(human) / len(human) if human else None,
        estimate=None if fit is None else fit.value,
        interval=None if fit is None else fit.shown,
        labels_only=None if alone is None else alone.shown,
        lam=None if fit is None else fit.lam,
    )


def corrected_recall(
    questions: Sequence[GoldenQuestion],
    graded: Iterable[GradedChunk],
    k: int,
    type_order: Sequence[str] = (),
    *,
    depth: int | None = None,
) -> dict[str, CorrectedRecall]:
    """Per type (the configured order, then any other), then ``all``: the mean human-label
    recall@k over the answerable questions, by prediction-powered inference.

    The labelled questions give (human recall@k, judged recall@k), the unlabelled ones the
    judged recall@k alone (``recall_pairs``). A type without a labelled question gets no
    corrected value (``CorrectedRecall.note`` says so), never a guess. ``all`` pools every
    question in one estimate, as the answer audit's ``all`` does (so it assumes the labels are
    spread over the types like the questions). ``judge.audit.ppi.pooled_estimates`` (the
    stratified one, for types with few labels) is not used: it takes the answer axes' cells
    and cuts to their 0–2 scale.

    Assumption: the labelled questions are a random sample of the answerable ones (who labels a
    question must not depend on how well it was retrieved).
    """
    pairs, ungraded = recall_pairs(questions, graded, k, depth=depth)
    order = type_order_of({q.id: q.type for q in questions}, type_order)
    rows: dict[str, list[RecallPair]] = {name: [] for name in order}
    for pair in pairs.values():
        rows[pair.type].append(pair)
    rows[ALL] = list(pairs.values())
    ungraded[ALL] = sum(ungraded.values())

    def cell(name: str) -> CorrectedRecall:
        labelled = [p for p in rows[name] if p.human is not None]
        return corrected_cell(
            [p.human for p in labelled if p.human is not None],
            [p.judged for p in labelled],
            [p.judged for p in rows[name] if p.human is None],
            ungraded.get(name, 0),
        )

    return {name: cell(name) for name in [*order, ALL]}
