"""Comparing two runs per type, question by question: pairs, margins per scale, the minimum
number of questions, the moved questions."""

from __future__ import annotations

import pytest

from judge.results.compare import Change, GateRule, QuestionValues, compare_values

RULE = GateRule(margin_share=0.05, margin_score=0.10, min_questions=8)


def _ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(1, n + 1)]


def _values(per_type: dict[str, dict[str, float]], metric: str = "faithfulness") -> QuestionValues:
    """A judge section with one metric; ``per_type``: type → question id → value."""
    types = {qid: t for t, values in per_type.items() for qid in values}
    merged = {qid: v for values in per_type.values() for qid, v in values.items()}
    return QuestionValues(types, {"retrieval": {}, "judge": {metric: merged}})


def _by_type(changes: list[Change]) -> dict[str, Change]:
    return {c.type: c for c in changes}


def test_four_of_twelve_falling_a_point_regress_one_of_five_is_listed() -> None:
    factual, negative = _ids("f", 12), _ids("n", 5)
    old = _values(
        {"factual": dict.fromkeys(factual, 2.0), "negative": dict.fromkeys(negative, 2.0)}
    )
    new_factual = dict.fromkeys(factual, 2.0) | dict.fromkeys(factual[:4], 1.0)
    new_negative = dict.fromkeys(negative, 2.0) | {"n03": 0.0}
    new = _values({"factual": new_factual, "negative": new_negative})
    changes = compare_values("judge", old, new, RULE, ["factual", "procedural", "negative"])
    # Per type only (no pooled row: it added false alarms, docs/gate.md), in the given order.
    assert [c.type for c in changes] == ["factual", "negative"]
    by_type = _by_type(changes)

    factual_change = by_type["factual"]
    assert factual_change.direction == "regressed"
    assert (factual_change.n, factual_change.old, factual_change.new) == (
        12,
        2.0,
        pytest.approx(5 / 3),
    )
    assert factual_change.delta == pytest.approx(-1 / 3)
    # The interval: see test_paired's binomial arithmetic, [-7/12, -1/12].
    assert factual_change.headline() == (
        "judge factual faithfulness -0.333 [-0.583, -0.083] over 12 questions"
    )
    assert [m.question_id for m in factual_change.moved] == ["f01", "f02", "f03", "f04"]
    assert factual_change.describe() == (
        "▼ factual faithfulness: 2.000 → 1.667 (-0.333 [-0.583, -0.083], 12 questions); "
        "moved: f01 2→1, f02 2→1, f03 2→1, f04 2→1"
    )

    # One verdict of a five-question type: beyond the margin, but listed, never a regression.
    negative_change = by_type["negative"]
    assert negative_change.direction == "too_few"
    assert negative_change.delta == pytest.approx(-0.4)
    assert negative_change.describe().startswith("▽ negative faithfulness: 2.000 → 1.600 (-0.400 [")
    assert negative_change.describe().endswith(
        "5 questions), too few questions to call; moved: n03 2→0"
    )


def test_the_margin_follows_the_scale() -> None:
    # 50 questions, 4 fall by 1: -0.08, and the interval lies below 0 (P(no fall drawn) =
    # 0.92^50 = 0.016 < 0.025). Beyond the 0.05 of a 0-1 metric, within the 0.10 of a 0-2 score.
    ids = _ids("q", 50)
    before = dict.fromkeys(ids, 1.0)
    after = before | dict.fromkeys(ids[:4], 0.0)
    for metric, expected in (("full_marks", "regressed"), ("faithfulness", "noise")):
        old, new = _values({"factual": before}, metric), _values({"factual": after}, metric)
        change = _by_type(compare_values("judge", old, new, RULE))["factual"]
        assert change.high < 0
        assert (change.margin, change.direction) == (RULE.margin(metric), expected)


def test_one_flip_in_twelve_on_a_share_is_noise_the_interval_holds_zero() -> None:
    # -1/12 = -0.083 is beyond the 0.05 margin, but a resample misses the one flip with
    # probability (11/12)^12 = 0.35: the interval reaches 0.
    ids = _ids("q", 12)
    old = _values({"factual": dict.fromkeys(ids, 1.0)}, "hit@5")
    new = _values({"factual": dict.fromkeys(ids, 1.0) | {"q05": 0.0}}, "hit@5")
    change = _by_type(compare_values("judge", old, new, RULE))["factual"]
    assert change.direction == "noise" and change.high == 0.0


def test_improvements_are_symmetric_and_nothing_moved_is_noise() -> None:
    ids = _ids("q", 12)
    old = _values({"factual": dict.fromkeys(ids, 1.0)})
    new = _values({"factual": dict.fromkeys(ids, 1.0) | dict.fromkeys(ids[:4], 2.0)})
    change = _by_type(compare_values("judge", old, new, RULE))["factual"]
    assert change.direction == "improved" and change.describe().startswith("▲ factual")
    same = _by_type(compare_values("judge", old, old, RULE))["factual"]
    assert (same.direction, same.delta, same.low, same.high, same.moved) == ("noise", 0, 0, 0, ())


def test_only_pairs_count() -> None:
    # q03 has no value now (its verdict failed: the gate's own check), q04 none before.
    old = _values({"factual": {"q01": 2.0, "q02": 2.0, "q03": 0.0}})
    new = _values({"factual": {"q01": 2.0, "q02": 1.0, "q04": 0.0}})
    change = _by_type(compare_values("judge", old, new, RULE))["factual"]
    assert (change.n, change.old, change.new) == (2, 2.0, 1.5)
    # A metric without values before is not compared at all.
    assert compare_values("judge", _values({}, "relevance"), new, RULE) == []


def test_the_comparison_is_the_same_every_time() -> None:
    ids = _ids("q", 30)
    old = _values({"factual": {q: float(i % 3) for i, q in enumerate(ids)}})
    new = _values({"factual": {q: float((i * 7) % 3) for i, q in enumerate(ids)}})
    assert compare_values("judge", old, new, RULE) == compare_values("judge", old, new, RULE)
