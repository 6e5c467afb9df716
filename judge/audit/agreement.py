"""The human-agreement audit: blind sampling, label import, agreement of judge and humans.

Pairs: every human label whose answer hash equals the judged answer's, against the judge's ok
verdict for that item (a label is valid only for the exact answer it was given for). With
several labellers an item contributes one pair per label, so the judge is measured against
each person; their agreement with each other is reported separately (Krippendorff's alpha).

Like with like: the lexical baseline is scored on exactly the labels the judge gave an ok
verdict for, so that an LLM judge that does not beat a model-free overlap score is visible and
the two figures differ only in the scorer. Coverage (ok verdicts / labels) and a second
headline over every label (non-ok verdicts counted as wrong) show what the first one leaves
out; the majority-class line and balanced accuracy show what a judge that always answers the
most common score would get.

The optional axis ``correctness`` (``judge.axes.OPTIONAL_AXES``) is audited where the run
judged it: its pairs are the labels that carry ``correctness`` against the judge's ok
correctness verdict for the same exact answer, with the same statistics per type and the
same corrected estimate (``corrected_axis``), as a third axis of ``per_axis``, ``humans`` and
``corrected``; absent otherwise. ``both_exact`` and the disagreements stay the answer's two
axes (a label without correctness is no less a label of those). The lexical baseline has no
correctness counterpart yet, so its ``per_axis`` has the two axes only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from judge.audit.ppi import corrected_axis, corrected_estimates, pooled_estimates

# AXES and Axis live in stats (ppi needs them and agreement imports ppi); re-exported here,
# where the rest of the package has always found them.
from judge.audit.stats import AXES as AXES
from judge.audit.stats import Axis as Axis
from judge.audit.stats import (
    Pairs,
    balanced_accuracy,
    bootstrap_ci,
    confusion,
    exact_agreement,
    krippendorff_alpha_ordinal,
    majority_class,
    quadratic_kappa,
    within_one,
)
from judge.audit.types import (
    LEVEL,
    MIN_LABELLED,
    PSEUDO_LABELS,
    Agreement,
    AuditResult,
    AxisStats,
    Corrected,
    CorrectedCell,
    Disagreement,
    PooledCell,
)
from judge.axes import SCORED_AXES, ScoredAxis
from judge.formatting import fmt_number, fmt_share
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.backends.lexical import judge_lexically
from judge.judging.types import CorrectnessVerdict, Verdict
from judge.results.item_record import ItemRecord


def lexical_scores(item: ItemRecord) -> tuple[int, int]:
    payload = judge_lexically(item.question, [c.text for c in item.context], item.answer)
    return int(payload["faithfulness"]), int(payload["relevance"])


def axis_stats(pairs: Pairs) -> AxisStats:
    majority = majority_class(pairs)
    return AxisStats(
        len(pairs),
        exact_agreement(pairs),
        bootstrap_ci(pairs, exact_agreement),
        within_one(pairs),
        quadratic_kappa(pairs),
        bootstrap_ci(pairs, quadratic_kappa),
        confusion(pairs),
        balanced_accuracy(pairs),
        None if majority is None else majority[0],
        None if majority is None else majority[1],
    )


def _labelled(
    items: dict[str, ItemRecord], labels: list[HumanLabel]
) -> list[tuple[ItemRecord, HumanLabel]]:
    """Every label given for the exact answer of an item of the run."""
    hashes = {qid: text_sha256(item.answer) for qid, item in items.items()}
    return [
        (items[label.question_id], label)
        for label in labels
        if label.question_id in items and hashes[label.question_id] == label.answer_sha256
    ]


def agreement(
    name: str,
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    score: Callable[[ItemRecord], tuple[int, int] | None],
    verdicts: dict[str, Verdict] | None = None,
    scored_on: Callable[[ItemRecord], bool] | None = None,
) -> Agreement:
    """Per axis, per type and overall agreement of ``score`` with the human labels.

    The figures are over the labels ``score`` gives scores for and ``scored_on`` (when given)
    accepts; ``both_exact_all`` is over every label, ``scored_on`` aside, labels ``score``
    gives no scores for counted as wrong.
    """
    labelled = _labelled(items, labels)
    scores_of: dict[str, tuple[int, int] | None] = {}
    for item, _ in labelled:
        if item.question_id not in scores_of:
            scores_of[item.question_id] = score(item)
    exact_all = sum(
        (label.faithfulness, label.relevance) == scores_of[item.question_id]
        for item, label in labelled
    )
    triples = [
        (item, label, scores)
        for item, label in labelled
        if (scores := scores_of[item.question_id]) is not None
        and (scored_on is None or scored_on(item))
    ]
    per_axis = _per_axis_stats(triples)
    both: list[tuple[int, int]] = [
        (1, int((label.faithfulness, label.relevance) == scores)) for _, label, scores in triples
    ]
    disagreements: list[Disagreement] = []
    not_ok: dict[str, int] = {}
    if verdicts is not None:
        disagreements = _disagreements(triples, verdicts)
        not_ok = _not_ok(labelled, scores_of, verdicts)
    return Agreement(
        name,
        per_axis,
        exact_agreement(both),
        bootstrap_ci(both, exact_agreement),
        len(both),
        disagreements,
        len(labelled),
        exact_all / len(labelled) if labelled else None,
        tuple(sorted(not_ok.items())),
    )


#: A labelled item, its label, and the (faithfulness, relevance) scores compared with it.
_Scored = tuple[ItemRecord, HumanLabel, tuple[int, int]]


def _per_axis_stats(triples: list[_Scored]) -> dict[ScoredAxis, dict[str, AxisStats]]:
    """Per axis, per question type and over every type (``all``): the agreement of the scores
    with the labels."""
    per_axis: dict[ScoredAxis, dict[str, AxisStats]] = {}
    for index, axis in enumerate(AXES):
        grouped: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for item, label, scores in triples:
            pair = (getattr(label, axis), scores[index])
            grouped[item.type].append(pair)
            grouped["all"].append(pair)
        per_axis[axis] = {t: axis_stats(p) for t, p in grouped.items()}
    return per_axis


def _disagreements(triples: list[_Scored], verdicts: dict[str, Verdict]) -> list[Disagreement]:
    """The labels whose scores differ from the ones compared, largest score gap first."""
    found = [
        Disagreement(item, label, verdicts[item.question_id])
        for item, label, scores in triples
        if (label.faithfulness, label.relevance) != scores
    ]
    found.sort(key=lambda d: (-d.gap, d.item.question_id, d.label.labeller))
    return found


def _not_ok(
    labelled: list[tuple[ItemRecord, HumanLabel]],
    scores_of: dict[str, tuple[int, int] | None],
    verdicts: dict[str, Verdict],
) -> dict[str, int]:
    """Per verdict status (``no verdict`` where there is none), how many labels fall on items
    that have no scores to compare (a verdict that is not ok)."""
    not_ok: dict[str, int] = defaultdict(int)
    for item, _ in labelled:
        if scores_of[item.question_id] is None:
            verdict = verdicts.get(item.question_id)
            not_ok["no verdict" if verdict is None else verdict.status] += 1
    return not_ok


def axis_agreement(
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    score: Callable[[ItemRecord], int | None],
    axis: ScoredAxis,
) -> dict[str, AxisStats]:
    """Per type and overall (``all``): the agreement on one axis of ``score`` with the labels
    that carry it (``getattr(label, axis)`` not None), over the items ``score`` scores. Empty
    when no such pair exists. What an optional axis adds to ``Agreement.per_axis``."""
    grouped: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for item, label in _labelled(items, labels):
        human = getattr(label, axis)
        judged = score(item) if human is not None else None
        if judged is None:
            continue
        grouped[item.type].append((human, judged))
        grouped["all"].append((human, judged))
    return {t: axis_stats(p) for t, p in grouped.items()}


def correctness_scores(
    correctness: Mapping[str, CorrectnessVerdict],
) -> Callable[[ItemRecord], int | None]:
    """The judge's correctness of an item: its ok correctness verdict's score, else None."""

    def score(item: ItemRecord) -> int | None:
        v = correctness.get(item.question_id)
        if v is None or v.status != "ok" or v.correctness is None:
            return None
        return v.correctness

    return score


def judge_scores(verdicts: dict[str, Verdict]) -> Callable[[ItemRecord], tuple[int, int] | None]:
    def score(item: ItemRecord) -> tuple[int, int] | None:
        v = verdicts.get(item.question_id)
        if v is None or v.status != "ok" or v.faithfulness is None or v.relevance is None:
            return None
        return v.faithfulness, v.relevance

    return score


def inter_annotator(
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    optional: Sequence[ScoredAxis] = (),
) -> dict[ScoredAxis, tuple[float | None, int]]:
    """Krippendorff's alpha (ordinal) among labellers, per axis: (alpha, items with 2+ labels);
    the axes of ``optional`` too, over the labels that carry them."""
    hashes = {qid: text_sha256(item.answer) for qid, item in items.items()}
    out: dict[ScoredAxis, tuple[float | None, int]] = {}
    for axis in (*AXES, *optional):
        units: dict[str, list[int]] = defaultdict(list)
        for label in labels:
            value = getattr(label, axis)
            if value is None or label.question_id not in hashes:
                continue
            if hashes[label.question_id] == label.answer_sha256:
                units[label.question_id].append(value)
        shared = [u for u in units.values() if len(u) >= 2]
        out[axis] = (krippendorff_alpha_ordinal(shared), len(shared))
    return out


def audit_items(
    folder_name: str,
    items: dict[str, ItemRecord],
    verdicts: dict[str, Verdict],
    labels: list[HumanLabel],
    type_order: Sequence[str] = (),
    correctness: Mapping[str, CorrectnessVerdict] | None = None,
) -> AuditResult:
    """The judge's verdicts and the lexical baseline, against the human labels; and the
    judge's means corrected with those labels (types in ``type_order``, then as found).

    ``correctness`` (question id → correctness verdict; empty or None: the axis is off) adds
    the correctness axis, over the items it was asked for, where labels carry it."""
    judged = judge_scores(verdicts)
    judge = agreement("judge", items, labels, judged, verdicts)
    # On the judge's labels; its both_exact_all is over every label (it scores every answer).
    lexical = agreement(
        "lexical baseline",
        items,
        labels,
        lexical_scores,
        scored_on=lambda item: judged(item) is not None,
    )
    corrected = corrected_estimates(items, labels, judged, type_order)
    optional: list[ScoredAxis] = []
    if correctness:
        asked = {qid: item for qid, item in items.items() if qid in correctness}
        correct = correctness_scores(correctness)
        stats = axis_agreement(asked, labels, correct, "correctness")
        if stats:  # some label carries correctness for an answer judged ok on it
            optional.append("correctness")
            judge = judge._replace(per_axis={**judge.per_axis, "correctness": stats})
            corrected["correctness"] = corrected_axis(
                asked, labels, correct, "correctness", type_order
            )
    return AuditResult(
        folder_name,
        judge,
        lexical,
        inter_annotator(items, labels, optional),
        sorted({label.labeller for label in labels}),
        corrected,
        pooled_estimates(corrected),
    )


def gate(result: AuditResult, min_kappa: float | None, min_agreement: float | None) -> list[str]:
    """Reasons the audit fails its bar (empty: it passes)."""
    failures = []
    # The optional axes too, where the audit has them (labels that carry them).
    for axis in (a for a in SCORED_AXES if a in AXES or a in result.judge.per_axis):
        overall = result.judge.per_axis.get(axis, {}).get("all")
        kappa = overall.kappa if overall else None
        exact = overall.exact if overall else None
        if min_kappa is not None and (kappa is None or kappa < min_kappa):
            failures.append(f"{axis} kappa {fmt_number(kappa)} < {min_kappa}")
        if min_agreement is not None and (exact is None or exact < min_agreement):
            failures.append(f"{axis} exact agreement {fmt_share(exact)} < {min_agreement:.0%}")
    return failures


def as_json(result: AuditResult) -> dict[str, Any]:
    def agreement_json(a: Agreement) -> dict[str, Any]:
        return {
            "both_exact": a.both_exact,
            "both_exact_ci": a.both_exact_ci._asdict() if a.both_exact_ci else None,
            "n": a.n,
            "labelled": a.labelled,
            "coverage": a.coverage,
            "both_exact_all": a.both_exact_all,
            "not_ok": dict(a.not_ok),
            "per_axis": {
                axis: {
                    t: {
                        **s._asdict(),
                        "exact_ci": s.exact_ci._asdict() if s.exact_ci else None,
                        "kappa_ci": s.kappa_ci._asdict() if s.kappa_ci else None,
                    }
                    for t, s in by_type.items()
                }
                for axis, by_type in a.per_axis.items()
            },
        }

    return {
        "judge": agreement_json(result.judge),
        "lexical": agreement_json(result.lexical),
        "humans": {
            axis: {"alpha": alpha, "items": n} for axis, (alpha, n) in result.humans.items()
        },
        "labellers": result.labellers,
        "corrected": corrected_json(result.corrected, result.pooled),
    }


def corrected_json(
    corrected: Corrected, pooled: dict[ScoredAxis, PooledCell] | None = None
) -> dict[str, Any]:
    """The corrected estimates for report.json: a missing number always comes with a note.

    ``estimate`` and ``interval`` are what the reports show (the estimate cut to the scale,
    the plus-four t interval); ``ppi_estimate`` and ``normal_interval`` are PPI++'s own
    figures, equal to ppi-python's, for a reader who wants to compare. ``pooled`` (computed
    from ``corrected`` when not given) is per axis, apart from the types, so that no type
    name can collide with it.
    """
    if pooled is None:
        pooled = pooled_estimates(corrected)

    return {
        "method": (
            "PPI++ (power-tuned prediction-powered inference); interval: plus-four variance "
            f"({PSEUDO_LABELS} pseudo-labels at the ends of the rectifier's range), Student's t "
            "with n - 1 degrees of freedom, cut to the scale"
        ),
        "level": LEVEL,
        "min_labelled": MIN_LABELLED,
        "per_axis": {
            axis: {name: _cell_json(cell) for name, cell in by_type.items()}
            for axis, by_type in corrected.items()
        },
        "pooled": {
            "method": (
                "stratified: the types' estimates weighted by their shares of the judged items"
            ),
            "per_axis": {axis: _pooled_json(cell) for axis, cell in pooled.items()},
        },
    }


def _cell_json(cell: CorrectedCell) -> dict[str, Any]:
    """One type's corrected estimate for report.json (``corrected_json``)."""
    e, halving = cell.estimate, cell.halving
    return {
        "items": cell.items,
        "judged": cell.judged,
        "judge_mean": cell.judge_mean,
        "labelled": cell.labelled,
        "labels": cell.labels,
        "unused_labels": cell.unused_labels,
        "review_labels_not_used": cell.chosen_labels,
        "unlabelled": None if e is None else e.unlabelled,
        "estimate": None if e is None else e.value,
        "interval": None if e is None else e.shown._asdict(),
        "ppi_estimate": None if e is None else e.estimate,
        "normal_interval": None if e is None else e.interval._asdict(),
        "lambda": None if e is None else e.lam,
        "matched": cell.matched,
        "note": cell.note,
        "remark": cell.remark,
        "labels_to_halve": None if halving is None else halving._asdict(),
    }


def _pooled_json(cell: PooledCell) -> dict[str, Any]:
    """One axis' pooled estimate for report.json (``corrected_json``)."""
    return {
        "types": list(cell.types),
        "weights": dict(zip(cell.types, cell.weights, strict=True)),
        "types_without_labels": list(cell.without_labels),
        "judged": cell.judged,
        "labelled": cell.labelled,
        "judge_mean": cell.judge_mean,
        "estimate": cell.estimate,
        "interval": None if cell.interval is None else cell.interval._asdict(),
        "note": cell.note,
    }
