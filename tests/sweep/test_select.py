"""The selection rule of the sweep on hand-computed cases: the winner and its tie rule, the
leave-one-question-out picks, each guard failing on its own, the question-level changes, and
every refusal."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from judge.sweep.select import DEFAULT_RULE, MIN_QUESTIONS, Selection, SweepRule, select

GUARDS = ("differs", "gain", "significant", "stable", "secondary")


def _ids(n: int) -> list[str]:
    return [f"q{j}" for j in range(n)]


def _select(
    primary: Mapping[str, Sequence[float]],
    default: str = "A",
    mrr: Mapping[str, Sequence[float]] | None = None,
    rule: SweepRule = DEFAULT_RULE,
) -> Selection:
    """Settings in the order of ``primary``; ``mrr`` (when given) is the one secondary metric."""
    n = len(next(iter(primary.values())))
    values: dict[str, dict[str, Sequence[float]]] = {s: {"ndcg@5": v} for s, v in primary.items()}
    if mrr is not None:
        for setting, column in mrr.items():
            values[setting]["mrr"] = column
    secondary = ("mrr",) if mrr is not None else ()
    return select(_ids(n), values, default, "ndcg@5", secondary, rule)


def _guard(selection: Selection, name: str) -> bool:
    return next(g.passed for g in selection.guards if g.name == name)


def test_leave_one_out_picks_are_the_best_of_the_other_questions() -> None:
    # Fold sums (total minus the left-out value): A 3.5 everywhere; B [4,4,4,4,5,5,4.5,4.5];
    # C [5.5,5,5,5,4.5,4.5,4.5,4.5]. Folds 0-3 pick C, 4-5 pick B, 6-7 tie B = C (the default A
    # is not tied), so the earlier setting in grid order, B.
    selection = _select(
        {
            "A": [0.5] * 8,
            "B": [1, 1, 1, 1, 0, 0, 0.5, 0.5],
            "C": [0, 0.5, 0.5, 0.5, 1, 1, 1, 1],
        }
    )
    assert selection.winner == "C"  # means A 0.5, B 0.625, C 0.6875
    assert selection.means == pytest.approx({"A": 0.5, "B": 0.625, "C": 0.6875})
    assert selection.fold_winners == ("C", "C", "C", "C", "B", "B", "B", "B")
    assert selection.held_out_changes == pytest.approx((-0.5, 0, 0, 0, -0.5, -0.5, 0, 0))
    assert selection.held_out_gain == pytest.approx(-0.1875)
    expected_se = statistics.stdev(selection.held_out_changes) / math.sqrt(8)
    assert selection.held_out_se == pytest.approx(expected_se)
    assert selection.fold_picks == {"A": 0, "B": 4, "C": 4}
    assert (selection.stability_count, selection.stability) == (4, 0.5)
    assert selection.n == 8
    assert selection.decided_by == "gain"
    assert not selection.adopt


def test_an_in_sample_winner_whose_luck_does_not_carry_over_gains_nothing_held_out() -> None:
    # B and C tie at 3/8 against the default's 0: every fold picks the setting that did *not*
    # score on the left-out question, so each d_j is 0.
    selection = _select(
        {
            "A": [0] * 8,
            "B": [1, 1, 1, 0, 0, 0, 0, 0],
            "C": [0, 0, 0, 1, 1, 1, 0, 0],
        }
    )
    assert selection.winner == "B"  # tie with C: the earlier in grid order
    assert selection.fold_winners == ("C", "C", "C", "B", "B", "B", "B", "B")
    assert selection.held_out_changes == (0.0,) * 8
    assert selection.held_out_gain == 0.0
    assert selection.gain_over_se == 0.0
    assert selection.decided_by == "gain"


def test_a_tie_on_the_mean_goes_to_the_default_even_when_it_comes_later() -> None:
    selection = _select({"B": [0, 1] * 4, "A": [1, 0] * 4}, default="A")
    assert selection.winner == "A"
    assert selection.decided_by == "differs"
    # Each fold picks the setting that lost the left-out question: B only where A scored 1.
    assert selection.fold_winners == ("B", "A") * 4
    assert selection.held_out_changes == (-1.0, 0.0) * 4
    assert selection.fold_picks == {"B": 4, "A": 4}


def test_means_within_float_rounding_are_a_tie() -> None:
    above_by_rounding = [0.1 + 0.2] * 8  # 0.30000000000000004
    selection = _select({"A": [0.3] * 8, "B": above_by_rounding})
    assert selection.means["B"] > selection.means["A"]
    assert selection.winner == "A"
    assert selection.fold_picks == {"A": 8, "B": 0}


def test_every_guard_passes_and_the_winner_is_adopted() -> None:
    selection = _select(
        {"A": [0.5] * 8, "B": [0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9]},
        mrr={"A": [0.5] * 8, "B": [0.6] * 8},
    )
    assert selection.adopt
    assert selection.decided_by is None
    assert [g.name for g in selection.guards] == list(GUARDS)
    assert all(g.passed for g in selection.guards)
    assert selection.held_out_gain == pytest.approx(0.35)
    assert selection.stability == 1.0
    assert selection.secondary_changes == pytest.approx({"mrr": 0.1})


def test_differs_fails_when_the_default_is_best_and_is_reported_first() -> None:
    # With the default best in-sample, a fold can only leave it for a setting that lost the
    # left-out question, so gain fails too: decided_by names the first failure.
    selection = _select({"A": [1, 1, 0, 1, 1, 0, 1, 1], "B": [0, 1, 1, 0, 1, 1, 0, 1]})
    assert selection.winner == "A"
    assert selection.decided_by == "differs"
    assert not _guard(selection, "differs")
    assert "already has the best mean" in selection.guards[0].detail
    # The question-level lists compare the winner with the default: nothing moved.
    assert (selection.better, selection.worse, selection.equal) == (0, 0, 8)
    assert selection.losses == ()
    assert selection.secondary_changes == {}


def test_gain_alone_fails_when_the_held_out_gain_is_steady_but_small() -> None:
    selection = _select({"A": [0.5] * 8, "B": [0.51] * 8})
    assert selection.held_out_gain == pytest.approx(0.01)
    assert [g.name for g in selection.guards if not g.passed] == ["gain"]
    assert selection.decided_by == "gain"
    # With a larger rule minimum below the gain, the same data is adopted.
    assert _select({"A": [0.5] * 8, "B": [0.51] * 8}, rule=SweepRule(min_gain=0.005)).adopt


def test_significant_alone_fails_when_the_gain_is_within_three_standard_errors() -> None:
    # B wins 5 questions by 1 and loses 3 by 1; every fold picks B: d = [1]*5 + [-1]*3,
    # mean 0.25, SE = 1.035 / sqrt(8) = 0.366, so 0.68 standard errors.
    selection = _select({"A": [0, 0, 0, 0, 0, 1, 1, 1], "B": [1, 1, 1, 1, 1, 0, 0, 0]})
    assert selection.held_out_gain == pytest.approx(0.25)
    assert selection.held_out_se == pytest.approx(math.sqrt(15 / 14) / math.sqrt(8))
    assert selection.gain_over_se == pytest.approx(0.25 / selection.held_out_se)
    assert [g.name for g in selection.guards if not g.passed] == ["significant"]
    assert selection.decided_by == "significant"
    # The guard is what stops it: with no multiple of the SE required it is adopted.
    loose = _select(
        {"A": [0, 0, 0, 0, 0, 1, 1, 1], "B": [1, 1, 1, 1, 1, 0, 0, 0]},
        rule=SweepRule(se_multiple=0.5),
    )
    assert loose.adopt


def test_a_zero_standard_error_with_a_positive_gain_is_significant() -> None:
    selection = _select({"A": [0.2] * 8, "B": [0.7] * 8})
    assert selection.held_out_se == pytest.approx(0.0, abs=1e-15)
    assert _guard(selection, "significant")
    assert selection.adopt


def test_stable_alone_fails_when_the_folds_split_between_two_better_settings() -> None:
    # B and C tie (6.4 each; the winner is B by grid order); the folds that leave out one of
    # B's strong questions pick C, the others B: 4 of 8, not more than half. Every fold still
    # gains 0.6 over the default.
    selection = _select(
        {
            "A": [0] * 8,
            "B": [1, 1, 1, 1, 0.6, 0.6, 0.6, 0.6],
            "C": [0.6, 0.6, 0.6, 0.6, 1, 1, 1, 1],
        }
    )
    assert selection.winner == "B"
    assert selection.fold_picks == {"A": 0, "B": 4, "C": 4}
    assert selection.held_out_gain == pytest.approx(0.6)
    assert [g.name for g in selection.guards if not g.passed] == ["stable"]
    assert selection.decided_by == "stable"
    assert "4 of 8" in selection.guards[3].detail


def test_secondary_alone_blocks_when_a_secondary_metric_falls() -> None:
    primary = {"A": [0.5] * 8, "B": [0.6] * 8}
    falls = {"A": [0.5] * 8, "B": [0.5, 0.4] * 4}  # mean change -0.05
    selection = _select(primary, mrr=falls)
    assert selection.secondary_changes == pytest.approx({"mrr": -0.05})
    assert [g.name for g in selection.guards if not g.passed] == ["secondary"]
    assert selection.decided_by == "secondary"
    assert "mrr" in selection.guards[4].detail
    # A tolerance of exactly the fall lets it through (float sums compared with an epsilon) ...
    assert _select(primary, mrr=falls, rule=SweepRule(secondary_tolerance=0.05)).adopt
    # ... a smaller one does not.
    assert not _select(primary, mrr=falls, rule=SweepRule(secondary_tolerance=0.04)).adopt


def test_any_fall_blocks_at_the_default_tolerance() -> None:
    primary = {"A": [0.5] * 8, "B": [0.6] * 8}
    tiny = {"A": [0.5] * 8, "B": [0.5] * 7 + [0.49]}
    assert _select(primary, mrr=tiny).decided_by == "secondary"
    same = {"A": [0.5] * 8, "B": [0.5] * 8}
    assert _select(primary, mrr=same).adopt


def test_losses_list_the_questions_that_got_worse_most_lost_first() -> None:
    selection = _select({"A": [0.5] * 8, "B": [1, 0.2, 1, 0.5, 0, 1, 0.2, 1]})
    assert selection.winner == "B"
    assert (selection.better, selection.worse, selection.equal) == (4, 3, 1)
    assert [loss.question_id for loss in selection.losses] == ["q4", "q1", "q6"]
    assert [loss.change for loss in selection.losses] == pytest.approx([-0.5, -0.3, -0.3])


def _slow_select(
    scores: list[list[float]], default_index: int
) -> tuple[int, list[int], list[float]]:
    """The rule spelled out: every fold's means recomputed from scratch, ties by a loop."""

    def pick(means: list[float]) -> int:
        best = max(means)
        tied = [i for i, m in enumerate(means) if m >= best - 1e-12]
        return default_index if default_index in tied else tied[0]

    n = len(scores[0])
    winner = pick([statistics.fmean(row) for row in scores])
    picks = []
    for j in range(n):
        picks.append(pick([statistics.fmean(row[:j] + row[j + 1 :]) for row in scores]))
    d = [scores[p][j] - scores[default_index][j] for j, p in enumerate(picks)]
    return winner, picks, d


@pytest.mark.parametrize("seed", range(6))
def test_the_fast_leave_one_out_agrees_with_the_direct_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_settings, n = int(rng.integers(2, 7)), int(rng.integers(8, 30))
    # Discrete values, as retrieval metrics are: ties on means and in folds are frequent.
    grid = rng.choice([0.0, 0.25, 0.5, 0.63, 1.0], size=(n_settings, n)).tolist()
    names = [f"s{i}" for i in range(n_settings)]
    default_index = int(rng.integers(n_settings))
    selection = _select(dict(zip(names, grid, strict=True)), default=names[default_index])
    winner, picks, d = _slow_select(grid, default_index)
    assert selection.winner == names[winner]
    assert selection.fold_winners == tuple(names[p] for p in picks)
    assert selection.held_out_changes == pytest.approx(d)
    assert selection.held_out_gain == pytest.approx(statistics.fmean(d))
    assert selection.held_out_se == pytest.approx(statistics.stdev(d) / math.sqrt(n))
    assert selection.stability_count == picks.count(winner)


def _values(n: int, settings: Sequence[str] = ("A", "B")) -> dict[str, dict[str, list[float]]]:
    return {s: {"ndcg@5": [0.5] * n, "mrr": [0.5] * n} for s in settings}


def test_refuses_fewer_than_min_questions() -> None:
    n = MIN_QUESTIONS - 1
    with pytest.raises(ValueError, match=r"fewer than 8 tuning questions: got 7") as caught:
        select(_ids(n), _values(n), "A", "ndcg@5")
    assert "\n" not in str(caught.value)
    select(_ids(MIN_QUESTIONS), _values(MIN_QUESTIONS), "A", "ndcg@5")  # 8 is enough


@pytest.mark.parametrize(
    ("values", "default", "secondary", "message"),
    [
        (_values(8, ("A",)), "A", (), "at least 2 settings"),
        (_values(8), "Z", (), "'Z' is not among the settings"),
        ({"A": {"ndcg@5": [0.5] * 8}, "B": {"mrr": [0.5] * 8}}, "A", (), "primary metric"),
        (_values(8), "A", ("recall@5",), "secondary metric 'recall@5'"),
        ({"A": {"ndcg@5": [0.5] * 8}, "B": {"ndcg@5": [0.5] * 9}}, "A", (), "9 values for 8"),
        ({"A": {"ndcg@5": [0.5] * 8}, "B": {"ndcg@5": [0.5] * 7 + [math.nan]}}, "A", (), "NaN"),
        (
            {"A": {"ndcg@5": [0.5] * 8, "mrr": [math.nan] * 8}, "B": _values(8)["B"]},
            "A",
            ("mrr",),
            "question 'q0'",
        ),
    ],
)
def test_refuses_input_it_cannot_judge(
    values: dict[str, dict[str, list[float]]],
    default: str,
    secondary: tuple[str, ...],
    message: str,
) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        select(_ids(8), values, default, "ndcg@5", secondary)
    assert "\n" not in str(caught.value)


def test_refuses_repeated_question_ids() -> None:
    with pytest.raises(ValueError, match="unique, repeated: q1"):
        select([*_ids(7), "q1"], _values(8), "A", "ndcg@5")
