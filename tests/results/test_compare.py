"""Comparing two runs per type, question by question: pairs, margins per scale, the minimum
number of questions, the moved questions."""

from __future__ import annotations

import pytest

from judge.results.compare import Change, GateRule, QuestionValues, compare_values

RULE = GateRule(margin_share=0.05, margin_score=0.10)


def _ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(1, n + 1)]


def _values(per_type: dict[str, dict[str, float]], metric: str = "faithfulness") -> QuestionValues:
    """A judge section with one metric; ``per_type``: type → question id → value."""
    types = {qid: t for t, values in per_type.items() for qid in values}
    merged = {qid: v for values in per_type.values() for qid, v in values.items()}
    return QuestionValues(types, {"retrieval": {}, "judge": {metric: merged}})


def _by_type(changes: list[Change]) -> dict[str, Change]:
    return {c.type: c for c in changes}


def test_four_of_twelve_falling_a_point_are_listed_one_of_five_is_noise() -> None:
    factual, negative = _ids("f", 12), _ids("n", 5)
    old = _values(
        {"factual": dict.fromkeys(factual, 2.0), "negative": dict.fromkeys(negative, 2.0)}
    )
    new_factual = dict.fromkeys(factual, 2.0) | dict.fromkeys(factual[:4], 1.0)
    new_negative = dict.fromkeys(negative, 2.0) | {"n03": 0.0}
    new = _values({"factual": new_factual, "negative": new_negative})
    changes = compare_values("judge", old, new, RULE, ["factual", "procedural", "negative"])
    # Per type (no pooled row: nothing collapsed), in the given order.
    assert [c.type for c in changes] == ["factual", "negative"]
    by_type = _by_type(changes)

    # Four falls and no rise: the exact sign-flip p-value is 1/16, what two noisy nights show
    # now and then; beyond the margin, so listed, never a regression on one night (the season
    # sees it if it stays: tests/results/test_season.py).
    factual_change = by_type["factual"]
    assert factual_change.direction == "listed"
    assert (factual_change.n, factual_change.old, factual_change.new) == (
        12,
        2.0,
        pytest.approx(5 / 3),
    )
    assert factual_change.delta == pytest.approx(-1 / 3)
    assert (factual_change.p_fall, factual_change.p_rise) == (pytest.approx(1 / 16), 1.0)
    # The interval: see test_paired's binomial arithmetic, [-7/12, -1/12].
    assert factual_change.headline() == (
        "judge factual faithfulness -0.333 [-0.583, -0.083] over 12 questions"
    )
    assert [m.question_id for m in factual_change.moved] == ["f01", "f02", "f03", "f04"]
    assert factual_change.describe() == (
        "▽ factual faithfulness: 2.000 → 1.667 (-0.333 [-0.583, -0.083], 12 questions, "
        "p 0.0625), not shown to be more than noise; moved: f01 2→1, f02 2→1, f03 2→1, f04 2→1"
    )

    # One answer of a five-question type 2 -> 0: p = 1/2, noise.
    negative_change = by_type["negative"]
    assert negative_change.direction == "noise"
    assert negative_change.delta == pytest.approx(-0.4)
    assert negative_change.describe().startswith("· negative faithfulness: 2.000 → 1.600 (-0.400 [")
    assert negative_change.describe().endswith("5 questions, p 0.5); moved: n03 2→0")


def test_the_margin_follows_the_scale() -> None:
    # 150 questions, 10 fall by 1 and none rises: -0.067, p = 2^-10 < 0.001. Beyond the 0.05 of
    # a 0-1 metric, within the 0.10 of a 0-2 score.
    ids = _ids("q", 150)
    before = dict.fromkeys(ids, 1.0)
    after = before | dict.fromkeys(ids[:10], 0.0)
    for metric, expected in (("full_marks", "regressed"), ("faithfulness", "noise")):
        old, new = _values({"factual": before}, metric), _values({"factual": after}, metric)
        change = _by_type(compare_values("judge", old, new, RULE))["factual"]
        assert change.p_fall == pytest.approx(2**-10)
        assert (change.margin, change.direction) == (RULE.margin(metric), expected)


def test_one_flip_in_twelve_on_a_share_is_noise() -> None:
    # -1/12 = -0.083 is beyond the 0.05 margin, but one change is a coin's toss: p = 1/2.
    ids = _ids("q", 12)
    old = _values({"factual": dict.fromkeys(ids, 1.0)}, "hit@5")
    new = _values({"factual": dict.fromkeys(ids, 1.0) | {"q05": 0.0}}, "hit@5")
    change = _by_type(compare_values("judge", old, new, RULE))["factual"]
    assert change.direction == "noise" and change.p_fall == 0.5 and change.high == 0.0


def test_improvements_are_symmetric_and_nothing_moved_is_noise() -> None:
    ids = _ids("q", 12)
    old = _values({"factual": dict.fromkeys(ids, 1.0)})
    new = _values({"factual": dict.fromkeys(ids, 2.0) | {"q12": 1.0}})
    change = _by_type(compare_values("judge", old, new, RULE))["factual"]
    assert change.p_rise == pytest.approx(2**-11)
    assert change.direction == "improved" and change.describe().startswith("▲ factual")
    same = _by_type(compare_values("judge", old, old, RULE))["factual"]
    assert (same.direction, same.delta, same.low, same.high, same.moved) == ("noise", 0, 0, 0, ())


def test_a_collapse_of_a_small_type_fails_whatever_its_size() -> None:
    # Four of five negative answers judged unfaithful (the article's incident), both answers of
    # a two-question type: a collapse, not a p-value (an exact test on four changes cannot go
    # below 1/16). Two of five is not most of the type.
    negative, tiny = _ids("n", 5), _ids("t", 2)
    old = _values({"negative": dict.fromkeys(negative, 2.0), "tiny": {"t01": 2.0, "t02": 1.0}})
    new = _values(
        {
            "negative": dict.fromkeys(negative, 0.0) | {"n05": 2.0},
            "tiny": dict.fromkeys(tiny, 0.0),
        }
    )
    by_type = _by_type(compare_values("judge", old, new, RULE))
    assert by_type["negative"].direction == "collapsed"
    assert by_type["tiny"].direction == "collapsed"
    assert by_type["negative"].describe().startswith("▼▼ negative faithfulness")
    assert "collapsed" in by_type["negative"].describe()
    two_of_five = _values({"negative": dict.fromkeys(negative, 2.0) | {"n01": 0.0, "n02": 0.0}})
    old_five = _values({"negative": dict.fromkeys(negative, 2.0)})
    assert _by_type(compare_values("judge", old_five, two_of_five, RULE))["negative"].direction != (
        "collapsed"
    )
    # Both answers of a two-question type from 1 to 0 is what a noisy night does now and then:
    # no collapse without one answer falling the whole range (2 -> 0).
    ones = _values({"tiny": dict.fromkeys(tiny, 1.0)})
    zeros = _values({"tiny": dict.fromkeys(tiny, 0.0)})
    assert _by_type(compare_values("judge", ones, zeros, RULE))["tiny"].direction != "collapsed"
    # Falling by a point is not falling to the floor: four of five 2 -> 1 is no collapse.
    four_points = _values({"negative": dict.fromkeys(negative, 1.0) | {"n05": 2.0}})
    assert _by_type(compare_values("judge", old_five, four_points, RULE))["negative"].direction != (
        "collapsed"
    )


def test_a_pooled_collapse_is_a_row_of_its_own() -> None:
    # Ten questions, 2-3 per type: every answer fell by 2 points. No type alone has the
    # questions to show a p-value, so the pooled row (type "all") collapses.
    per_type = {"factual": _ids("f", 3), "procedural": _ids("p", 3), "negative": _ids("n", 2)}
    old = _values({t: dict.fromkeys(ids, 2.0) for t, ids in per_type.items()})
    new = _values({t: dict.fromkeys(ids, 1.0) for t, ids in per_type.items()})
    changes = compare_values("judge", old, new, RULE)
    pooled = [c for c in changes if c.type == "all"]
    assert [(c.metric, c.direction, c.n) for c in pooled] == [("faithfulness", "collapsed", 8)]
    assert pooled[0].delta == pytest.approx(-1.0)
    # A fall of 0.5 needs four questions falling a point or more: two falls of two points do
    # not make a pooled collapse however few the questions.
    two = _values({"factual": {"f01": 0.0, "f02": 0.0, "f03": 2.0}})
    assert not [
        c
        for c in compare_values(
            "judge", _values({"factual": dict.fromkeys(_ids("f", 3), 2.0)}), two, RULE
        )
        if c.type == "all"
    ]


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
