"""``judge.judging.panel``: the median vote with ties to the lower score, a failed member's
vote marked with how many voted, and the flags for 2 points apart or split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judge.judging.panel import panel_vote, panel_votes, split, vote
from judge.judging.types import Verdict


def verdict(faithfulness: int, relevance: int, qid: str = "q1") -> Verdict:
    return Verdict(
        question_id=qid, item_key="k", status="ok", faithfulness=faithfulness, relevance=relevance
    )


FAILED = Verdict(question_id="q1", item_key="k", status="parse_error", error="not JSON")


def test_the_vote_is_the_median_and_a_tie_goes_to_the_lower_score() -> None:
    assert vote([2, 0, 1]) == 1
    assert vote([2, 1]) == 1
    assert vote([2, 2, 1, 1]) == 1
    assert vote([0, 2]) == 0
    assert vote([2]) == 2
    with pytest.raises(ValueError):
        vote([])


@given(st.lists(st.integers(0, 2), min_size=1, max_size=7))
def test_the_vote_is_a_score_some_member_gave_and_never_above_the_upper_median(
    scores: list[int],
) -> None:
    voted = vote(scores)
    assert voted in scores
    assert sum(s <= voted for s in scores) * 2 >= len(scores)


def test_split_means_no_score_has_more_than_half() -> None:
    assert split([1, 2])
    assert split([0, 1, 2])
    assert not split([2, 2, 1])
    assert not split([2])
    assert split([2, 2, 1, 1])


def test_agreeing_members_give_a_full_unflagged_vote() -> None:
    voted = panel_vote("q1", {"a": verdict(2, 1), "b": verdict(2, 1), "c": verdict(2, 0)})
    assert voted.scores == (2, 1)
    assert (voted.voters, voted.members, voted.full) == (3, 3, True)
    assert voted.flags == ()
    assert not voted.disputed


def test_two_points_apart_and_split_are_flagged() -> None:
    apart = panel_vote("q1", {"a": verdict(0, 2), "b": verdict(2, 2), "c": verdict(2, 2)})
    assert apart.scores == (2, 2)
    assert apart.flags == ("faithfulness 2 points apart",)
    assert apart.disputed
    two = panel_vote("q1", {"a": verdict(2, 1), "b": verdict(2, 2)})
    assert two.scores == (2, 1)
    assert two.flags == ("relevance split",)


def test_a_failed_member_leaves_the_others_vote_marked() -> None:
    voted = panel_vote("q1", {"a": verdict(2, 2), "b": FAILED, "c": verdict(1, 2)})
    assert voted.scores == (1, 2)
    assert (voted.voters, voted.members, voted.full) == (2, 3, False)
    assert voted.by_member["b"] is None
    assert "2 of 3 voted" in voted.flags
    assert "faithfulness split" in voted.flags
    lone = panel_vote("q1", {"a": verdict(2, 2), "b": None})
    assert lone.scores == (2, 2) and lone.flags == ("1 of 2 voted",) and not lone.disputed


def test_no_member_voting_gives_no_verdict() -> None:
    voted = panel_vote("q1", {"a": FAILED, "b": None})
    assert voted.scores is None and voted.voters == 0
    assert voted.flags == ("0 of 2 voted",)


def test_votes_follow_the_question_order() -> None:
    members = {
        "a": {"q1": verdict(2, 2, "q1"), "q2": verdict(0, 0, "q2")},
        "b": {"q2": verdict(0, 1, "q2")},
    }
    votes = panel_votes(members, ["q2", "q1"])
    assert [v.question_id for v in votes] == ["q2", "q1"]
    assert votes[0].scores == (0, 0) and votes[1].voters == 1
