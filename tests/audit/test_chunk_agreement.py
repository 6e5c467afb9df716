"""The judge's chunk grades against the golden labels (judge.audit.chunk_agreement): the
agreement per type by hand, the human and judged recall pairs, and the recall corrected with the
labels (prediction-powered, with the plus-four tuned λ)."""

from __future__ import annotations

import pytest

from judge.audit.chunk_agreement import (
    ChunkAgreement,
    CorrectedRecall,
    chunk_agreement,
    corrected_cell,
    corrected_recall,
    plus_tuned_lambda,
    recall_pairs,
)
from judge.audit.ppi import power_tuned_lambda, ppi_mean
from judge.inputs.golden import GoldenQuestion
from judge.results.chunk_grades import GradedChunk
from tests.results.helpers import TYPES, pool, question

# --- agreement with the human labels ----------------------------------------------------------


def _agreement_set() -> tuple[list[GoldenQuestion], list[GradedChunk]]:
    # 10 chunks over 3 labelled questions: TP 3, FN 1, FP 2, TN 4 (human, judge).
    questions = [
        question("q1", ("a", "b")),
        question("質問-2", ("規程/1", "規程/2"), "procedural"),
        question("q3", None),  # unlabelled: not compared
        question("o4", (), "out_of_scope"),
    ]
    graded = [
        *pool("q1", [("a", 3), ("b", 1), ("c", 2), ("d", None)]),  # TP, FN, FP; one ungraded
        *pool(
            "質問-2", [("規程/1", 2), ("規程/2", 3), ("規程/3", 0), ("規程/4", 1)]
        ),  # TP TP TN TN
        *pool("q3", [("e", 3)]),
        *pool("o4", [("f", 0), ("g", 2), ("h", 1)]),  # TN, FP, TN
    ]
    return questions, graded


def test_chunk_agreement_by_hand() -> None:
    questions, graded = _agreement_set()
    result = chunk_agreement(questions, graded, TYPES, resamples=500)
    assert isinstance(result, ChunkAgreement)
    assert list(result.types) == [*TYPES, "all"]
    cell = result.types["all"]
    assert (cell.chunks, cell.questions, cell.ungraded) == (10, 3, 1)
    assert cell.exact == pytest.approx(0.7)  # (3 + 4) / 10
    # Cohen's κ: p_o 0.7; p_e = 0.4·0.5 + 0.6·0.5 = 0.5; κ = (0.7 − 0.5) / 0.5.
    assert cell.kappa == pytest.approx(0.4)
    assert cell.balanced_accuracy == pytest.approx((3 / 4 + 4 / 6) / 2)
    assert cell.majority_class == 0 and cell.majority_exact == pytest.approx(0.6)
    # Grades (rows 0..3) × human (not listed, listed).
    assert cell.grades == [[2, 0], [2, 1], [2, 1], [0, 2]]
    for interval in (cell.exact_ci, cell.kappa_ci, cell.balanced_accuracy_ci):
        assert interval is not None and interval.low <= interval.high
    assert cell.exact_ci is not None and cell.exact_ci.low <= 0.7 <= cell.exact_ci.high
    procedural = result.types["procedural"]
    assert (procedural.chunks, procedural.questions, procedural.exact) == (4, 1, 1.0)
    assert procedural.exact_ci is None  # one question: nothing to resample
    negative = result.types["negative"]
    assert (negative.chunks, negative.exact, negative.kappa, negative.grades) == (
        0,
        None,
        None,
        [[0, 0]] * 4,
    )
    assert result.types["out_of_scope"].majority_class == 0
    assert result.types["factual"].ungraded == 1
    # report.json round trip.
    assert ChunkAgreement.model_validate_json(result.model_dump_json()) == result


def test_chunk_agreement_is_seeded() -> None:
    questions, graded = _agreement_set()
    a = chunk_agreement(questions, graded, TYPES, resamples=300, seed=1)
    assert a == chunk_agreement(questions, graded, TYPES, resamples=300, seed=1)


# --- corrected recall -------------------------------------------------------------------------


def test_recall_pairs_human_and_judged() -> None:
    questions = [
        question("q1", ("a", "z")),  # z never retrieved
        question("q2", None),
        question("q3", ("c",)),  # nothing judged relevant: predicted 0
        question("q4", None),  # ungraded chunk: left out
        question("o5", (), "out_of_scope"),
    ]
    graded = [
        *pool("q1", [("a", 3), ("b", 0), ("x", 2)]),
        *pool("q2", [("d", 2), ("e", 2), ("y", 0)]),
        *pool("q3", [("c", 1), ("w", 0), ("v", 0)]),
        *pool("q4", [("f", 3), ("g", None), ("u", 0)]),
        *pool("o5", [("h", 3), ("i", 0), ("t", 0)]),
    ]
    pairs, ungraded = recall_pairs(questions, graded, 2)
    assert pairs == {
        "q1": ("factual", 0.5, 0.5),  # human: a of {a, z}; judged: a of {a, x} in the top 2
        "q2": ("factual", None, 1.0),
        "q3": ("factual", 1.0, 0.0),
    }
    assert ungraded == {"factual": 1}
    # At the grading depth (the usual k: context_k) the prediction is the judged hit, 1 when the
    # judge found a relevant chunk, 0 when not, though the tables leave that recall out.
    deep, _ = recall_pairs(questions, graded, 3)
    assert deep == {
        "q1": ("factual", 0.5, 1.0),
        "q2": ("factual", None, 1.0),
        "q3": ("factual", 1.0, 0.0),
    }
    with pytest.raises(ValueError, match="graded 3"):
        recall_pairs(questions, graded, 5)


def test_corrected_cell_is_ppi_mean_on_the_zero_one_scale() -> None:
    human = [1.0, 0.5, 0.0, 1.0, 1.0]
    predicted = [1.0, 1.0, 0.0, 1.0, 0.5]
    unlabelled = [1.0, 0.0, 0.5, 1.0, 1.0, 1.0, 0.5]
    cell = corrected_cell(human, predicted, unlabelled, ungraded=2, rule="ppi++")
    fit = ppi_mean(human, predicted, unlabelled, bounds=(0.0, 1.0))
    alone = ppi_mean(human, predicted, [], lam=0.0, bounds=(0.0, 1.0))
    assert cell.estimate == fit.value and cell.interval == fit.shown and cell.lam == fit.lam
    assert cell.labels_only == alone.shown
    assert (cell.questions, cell.labelled, cell.unlabelled, cell.ungraded) == (12, 5, 7, 2)
    assert cell.labels_mean == pytest.approx(3.5 / 5)
    assert cell.judged_mean == pytest.approx((3.5 + 5.0) / 12)
    assert cell.interval is not None and 0.0 <= cell.interval.low <= cell.interval.high <= 1.0
    assert cell.note is None


def test_every_question_labelled_gives_the_labels_alone() -> None:
    human = [1.0, 0.5, 0.0, 1.0]
    cell = corrected_cell(human, [0.0, 1.0, 1.0, 0.5], [])
    # N = 0: λ = 0 and the estimate is the labels' mean with their own interval.
    assert cell.lam == 0.0
    assert cell.estimate == pytest.approx(0.625)
    assert cell.interval == cell.labels_only


def test_a_perfect_judge_narrows_the_interval() -> None:
    # 40 labels: with fewer, the plus-four pseudo-labels (judge.audit.ppi) cost a judge-weighted
    # interval more than they cost the labels alone (measured in bench/chunk_ppi_sim.py).
    human = [1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0] * 4
    unlabelled = [1.0, 0.5, 1.0, 0.0, 1.0, 1.0] * 40
    cell = corrected_cell(human, human, unlabelled, rule="ppi++")
    # λ by the PPI++ rule; the estimate λ·mean(unlabelled) + mean(Y − λ·Y).
    n, big_n = len(human), len(unlabelled)
    mean_h = sum(human) / n
    cov = sum((y - mean_h) ** 2 for y in human) / n
    everything = human + unlabelled
    mean_all = sum(everything) / len(everything)
    spread = sum((y - mean_all) ** 2 for y in everything) / (len(everything) - 1)
    lam = power_tuned_lambda(n, big_n, cov, spread)
    assert cell.lam == pytest.approx(lam)
    assert 0.8 < lam <= 1.0
    expected = lam * sum(unlabelled) / big_n + (1 - lam) * mean_h
    assert cell.estimate == pytest.approx(expected)
    assert cell.interval is not None and cell.labels_only is not None
    # 0.202 against 0.256 here: the pseudo-labels' share of the width does not shrink with N.
    assert cell.interval.high - cell.interval.low < 0.85 * (
        cell.labels_only.high - cell.labels_only.low
    )


def test_corrected_recall_per_type_and_all() -> None:
    questions = [
        *(question(f"f{i}", ("a",)) for i in range(4)),
        *(question(f"u{i}", None) for i in range(6)),
        *(question(f"手順{i}", None, "procedural") for i in range(3)),  # no labelled question
        question("o", (), "out_of_scope"),
    ]
    graded = [
        *pool("f0", [("a", 3), ("b", 0)]),  # human 1, judged 1
        *pool("f1", [("b", 2), ("a", 0)]),  # human 0 at k = 1, judged 1
        *pool("f2", [("a", 2), ("b", 2)]),  # human 1, judged 1/2
        *pool("f3", [("c", 0), ("b", 0)]),  # human 0, judged 0 (nothing judged relevant)
        *(c for i in range(6) for c in pool(f"u{i}", [("a", 3 if i % 2 else 0), ("b", 2)])),
        *(c for i in range(3) for c in pool(f"手順{i}", [("a", 3), ("b", 0)])),
        *pool("o", [("a", 3), ("b", 0)]),
    ]
    cells = corrected_recall(questions, graded, 1, TYPES)
    assert list(cells) == [*TYPES, "all"]
    factual = cells["factual"]
    assert isinstance(factual, CorrectedRecall)
    assert (factual.questions, factual.labelled, factual.unlabelled) == (10, 4, 6)
    # u0, u2, u4: only b judged relevant, at rank 2 (0); u1, u3, u5: a and b (1/2).
    y, p, u = [1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.5, 0.0], [0.0, 0.5] * 3
    fit = ppi_mean(y, p, u, lam=plus_tuned_lambda(y, p, u), bounds=(0.0, 1.0))
    assert factual.estimate == fit.value and factual.interval == fit.shown
    procedural = cells["procedural"]
    assert procedural.estimate is None and procedural.interval is None
    assert procedural.note == "no labelled question: no corrected value"
    assert procedural.judged_mean == 1.0 and procedural.unlabelled == 3
    assert cells["out_of_scope"].questions == 0  # no recall exists for them
    everything = cells["all"]
    assert (everything.questions, everything.labelled, everything.unlabelled) == (13, 4, 9)
    assert everything.estimate is not None
    assert CorrectedRecall.model_validate_json(factual.model_dump_json()) == factual


def test_the_plus_tuned_lambda_minimises_the_shown_variance() -> None:
    human = [1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0] * 4
    predicted = [1.0, 0.5, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0, 1.0, 1.0] * 4
    unlabelled = [1.0, 0.5, 1.0, 0.0, 1.0, 1.0] * 40
    lam = plus_tuned_lambda(human, predicted, unlabelled)

    def plus(value: float) -> float:
        return ppi_mean(human, predicted, unlabelled, lam=value, bounds=(0.0, 1.0)).plus_variance

    # Against a fine grid: no λ in [0, 1] does better (the variance is quadratic in λ).
    assert 0.0 < lam < 1.0
    assert all(plus(lam) <= plus(g / 200) + 1e-15 for g in range(201))
    plus_cell = corrected_cell(human, predicted, unlabelled)
    audit_cell = corrected_cell(human, predicted, unlabelled, rule="ppi++")
    assert plus_cell.lam == lam
    assert plus_cell.interval is not None and plus_cell.labels_only is not None
    assert audit_cell.interval is not None
    width = plus_cell.interval.high - plus_cell.interval.low
    assert width <= audit_cell.interval.high - audit_cell.interval.low
    assert width < plus_cell.labels_only.high - plus_cell.labels_only.low


def test_the_plus_tuned_lambda_falls_back_to_the_labels() -> None:
    # No unlabelled question: λ = 0. A judge that says nothing: λ = 0 (the labels alone).
    assert plus_tuned_lambda([1.0, 0.0], [1.0, 0.0], []) == 0.0
    assert plus_tuned_lambda([1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.5, 0.5]) == 0.0
    cell = corrected_cell([1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.5, 0.5])
    assert cell.interval == cell.labels_only
