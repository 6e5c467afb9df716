"""``judge.audit.guard``: the paired sign test, the statistics with their intervals, and the
decision: adopt past both guards, else keep the current prompt naming the guard that decided."""

from __future__ import annotations

import math

import pytest

from judge.audit.guard import HeldOutLabel, compare, guard_decision, sign_test, variant_lines


def test_the_sign_test_is_exact_and_one_sided() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == pytest.approx(1 / 32)
    assert sign_test(0, 5) == 1.0
    assert sign_test(6, 2) == pytest.approx(sum(math.comb(8, i) for i in range(6, 9)) / 256)


def _rows(n: int, current_right: int, variant_right: int) -> list[HeldOutLabel]:
    """``n`` items with one label each; the current prompt right on the first
    ``current_right``, the variant on the first ``variant_right`` (else one point off)."""
    rows = []
    for i in range(n):
        human = (i % 3, (i + 1) % 3)
        off = ((human[0] + 1) % 3, (human[1] + 1) % 3)
        rows.append(
            HeldOutLabel(
                f"q{i}",
                human,
                human if i < current_right else off,
                human if i < variant_right else off,
            )
        )
    return rows


def test_a_clearly_better_variant_is_adopted() -> None:
    comparison = compare("k=2", _rows(30, 12, 27), resamples=300)
    assert (comparison.wins, comparison.losses) == (15, 0)
    assert comparison.value == pytest.approx(0.9)
    assert comparison.current == pytest.approx(0.4)
    assert comparison.value_ci is not None and comparison.value_ci.low > 0.7
    decision = guard_decision([comparison])
    assert decision.adopted is comparison
    assert decision.guard.startswith("adopt k=2")


def test_an_equal_variant_is_refused_by_the_primary_guard() -> None:
    comparison = compare("k=2", _rows(30, 15, 15), resamples=300)
    decision = guard_decision([comparison])
    assert decision.adopted is None
    assert "guard 1 (primary) decided" in decision.guard
    assert decision.guard.startswith("keep the current prompt")


def test_more_variants_raise_the_bar() -> None:
    # 6 wins and 0 losses: p = 1/64 ≈ 0.016, below 0.05 but not below 0.05 / 4.
    comparison = compare("k=2", _rows(20, 10, 16), resamples=200)
    assert comparison.p_value == pytest.approx(1 / 64)
    assert guard_decision([comparison]).adopted is comparison
    many = guard_decision(
        [comparison, *(compare(f"k={k}", _rows(20, 10, 10), 200) for k in (3, 4, 5))]
    )
    assert many.adopted is None
    assert many.threshold == pytest.approx(0.0125)
    assert "0.05 / 4 variant(s)" in many.guard


def test_a_variant_worse_on_another_statistic_is_refused_by_the_second_guard() -> None:
    # Faithfulness right everywhere with the variant; relevance right everywhere before and
    # wrong on a third of the items after: better on the primary, worse on relevance.
    rows = []
    for i in range(45):
        human = (i % 3, i % 3)
        current = ((human[0] + 1) % 3, human[1])
        variant = (human[0], human[1] if i % 3 else (human[1] + 2) % 3)
        rows.append(HeldOutLabel(f"q{i}", human, current, variant))
    comparison = compare("k=4", rows, resamples=300)
    assert comparison.gain > 0 and comparison.p_value < 0.05
    decision = guard_decision([comparison])
    assert decision.adopted is None
    assert "guard 2 (no worse) decided" in decision.guard
    assert "relevance" in decision.guard


def test_a_verdict_that_is_not_ok_counts_as_a_miss_in_exact_agreement() -> None:
    rows = [HeldOutLabel(f"q{i}", (2, 2), (2, 2), None if i < 5 else (2, 2)) for i in range(10)]
    comparison = compare("k=2", rows, resamples=200)
    exact = next(c for c in comparison.compared if c.statistic == "exact agreement")
    assert exact.variant == pytest.approx(0.5)
    assert comparison.losses == 5
    assert guard_decision([comparison]).adopted is None


def test_two_labellers_of_one_item_are_one_item_of_the_sign_test() -> None:
    rows = [HeldOutLabel("q1", (2, 2), (0, 0), (2, 2)), HeldOutLabel("q1", (2, 1), (0, 0), (2, 1))]
    comparison = compare("k=2", rows, resamples=100)
    assert (comparison.items, comparison.labels, comparison.wins) == (1, 2, 1)


def test_the_best_of_the_passing_variants_is_adopted() -> None:
    small = compare("k=2", _rows(40, 10, 25), resamples=200)
    large = compare("k=4", _rows(40, 10, 35), resamples=200)
    assert guard_decision([small, large]).adopted is large


def test_no_variant_keeps_the_current_prompt() -> None:
    decision = guard_decision([])
    assert decision.adopted is None and "no variant" in decision.guard


def test_the_lines_give_every_statistic_with_its_interval_and_n() -> None:
    lines = variant_lines(compare("k=2", _rows(30, 12, 27), resamples=200))
    assert lines[0].startswith("k=2: exact agreement (both axes) 0.90 [")
    assert "n = 30 labels on 30 held-out items" in lines[0]
    assert len(lines) == 1 + 2 * 3
    assert any(line.startswith("  relevance quadratic κ: ") for line in lines)
    assert all("[" in line and "vs current" in line for line in lines)
