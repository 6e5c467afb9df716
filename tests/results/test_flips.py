"""The verdicts that changed between two runs of the same items (``judge.results.flips``)."""

from __future__ import annotations

from judge.judging.types import Status, Verdict
from judge.results.flips import Flip, changed_verdicts


def _verdict(
    qid: str, f: int | None, r: int | None, status: Status = "ok", note: str = ""
) -> Verdict:
    return Verdict(
        question_id=qid, item_key=f"k-{qid}", status=status, faithfulness=f, relevance=r, note=note
    )


def test_a_changed_score_or_status_is_a_flip_in_the_new_runs_order() -> None:
    old = {
        "q1": _verdict("q1", 2, 2),
        "q2": _verdict("q2", 2, 2),
        "q3": _verdict("q3", 1, 2),
    }
    new = {
        "q3": _verdict("q3", None, None, status="parse_error"),
        "q2": _verdict("q2", 2, 1),
        "q1": _verdict("q1", 2, 2),
    }
    flips = changed_verdicts(old, new)
    assert [flip.question_id for flip in flips] == ["q3", "q2"]
    assert flips[1] == Flip("q2", old["q2"], new["q2"])


def test_the_same_scores_with_another_note_are_no_flip() -> None:
    old = {"q1": _verdict("q1", 2, 2, note="grounded in rank 1")}
    new = {"q1": _verdict("q1", 2, 2, note="the first chunk says so")}
    assert changed_verdicts(old, new) == []


def test_a_question_judged_in_one_run_only_is_no_flip() -> None:
    old = {"q1": _verdict("q1", 2, 2)}
    new = {"q2": _verdict("q2", 0, 0)}
    assert changed_verdicts(old, new) == []
    assert changed_verdicts(new, old) == []


def test_a_flip_describes_both_verdicts_scores_and_status() -> None:
    flip = Flip("q2", _verdict("q2", 2, 2), _verdict("q2", None, None, status="parse_error"))
    assert flip.describe() == "q2: F2 R2 (ok) → FNone RNone (parse_error)"
