"""Per-type means of per-question values, against hand-computed values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from judge.grouped import Group, grouped, type_order

TYPES = {"q1": "factual", "q2": "factual", "q3": "negative", "q4": "factual", "q5": "procedural"}


def test_per_type_mean_with_n_in_the_given_order_then_overall() -> None:
    values = {"q1": 2.0, "q2": 1.0, "q3": 0.0, "q4": 2.0, "q5": 1.0}
    groups = grouped(values, TYPES, ("factual", "procedural", "negative"), overall="all")
    assert list(groups) == ["factual", "procedural", "negative", "all"]
    # factual: (2 + 1 + 2) / 3 = 5/3; procedural: 1/1; negative: 0/1; all: 6/5 = 1.2.
    assert groups["factual"] == Group(3, 5.0, 5 / 3)
    assert groups["procedural"] == Group(1, 1.0, 1.0)
    assert groups["negative"] == Group(1, 0.0, 0.0)
    assert groups["all"] == Group(5, 6.0, 1.2)


def test_a_question_without_a_value_is_left_out_of_n_never_counted_as_zero() -> None:
    # q2 (not ok, say) has no value: factual is (2 + 2) / 2 = 2 over 2 questions, not 4/3.
    values = {"q1": 2.0, "q4": 2.0, "q3": 1.0}
    groups = grouped(values, TYPES, ("factual", "negative", "procedural"), overall="all")
    assert groups["factual"] == Group(2, 4.0, 2.0)
    # procedural has a question but no value: its row is there, n 0 and no mean (not 0, not NaN).
    assert groups["procedural"] == Group(0, 0.0, None)
    assert groups["all"] == Group(3, 5.0, 5 / 3)


def test_types_outside_the_order_follow_it_in_first_seen_order() -> None:
    types = {"a": "x", "b": "unlisted", "c": "other", "d": "x"}
    groups = grouped({"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.0}, types, ("y", "x"))
    # "y" has no question at all but is in the order: a row with n 0; no overall row.
    assert list(groups) == ["y", "x", "unlisted", "other"]
    assert groups["y"] == Group(0, 0.0, None)
    assert groups["x"] == Group(2, 1.0, 0.5)
    assert type_order(types, ("y", "x")) == ["y", "x", "unlisted", "other"]


def test_shares_of_zero_one_values_count_the_ones() -> None:
    # 0/1 outcomes: total is how many are 1, mean is the share (2 of 3 factual: 2/3).
    outcomes = {"q1": 1.0, "q2": 0.0, "q4": 1.0, "q3": 1.0}
    groups = grouped(outcomes, TYPES, ("factual", "negative"), overall="all")
    assert (groups["factual"].total, groups["factual"].n) == (2.0, 3)
    assert groups["factual"].mean == pytest.approx(2 / 3)
    assert groups["all"] == Group(4, 3.0, 0.75)


def test_the_mean_is_pythons_sum_in_the_mappings_order() -> None:
    # 0.1 + 0.2 + 0.3 in this order is 0.6000000000000001 in binary floats: the mean keeps
    # exactly what sum() gives, so figures computed here equal those computed by sum() before.
    values = {"q1": 0.1, "q2": 0.2, "q4": 0.3}
    group = grouped(values, TYPES, ("factual",))["factual"]
    assert group.total == sum([0.1, 0.2, 0.3])
    assert group.mean == sum([0.1, 0.2, 0.3]) / 3


def test_no_values_at_all() -> None:
    groups = grouped({}, {}, ("factual",), overall="all")
    assert groups == {"factual": Group(0, 0.0, None), "all": Group(0, 0.0, None)}


def test_a_value_without_a_type_and_an_overall_that_is_a_type_are_refused() -> None:
    with pytest.raises(ValueError, match="question 'q9' has a value but no type"):
        grouped({"q9": 1.0}, TYPES)
    with pytest.raises(ValueError, match="the overall row 'factual' is also a question type"):
        grouped({}, TYPES, overall="factual")


def test_it_is_pure_python() -> None:
    """A leaf-ish module: importing it loads neither pandas nor numpy."""
    code = (
        "import sys, judge.grouped\n"
        "heavy = [m for m in ('pandas', 'numpy') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])
