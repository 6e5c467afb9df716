"""``judge.results.propose``: types guessed from the question and the answer, chunks proposed
from the judge's grades or from the answer, candidates ranked by what they add."""

from __future__ import annotations

from judge.inputs.candidates import UserQuestion
from judge.inputs.golden import Chunk, GoldenQuestion
from judge.inputs.runs import RunRecord
from judge.results.propose import (
    ADDS,
    answer_support,
    candidate_id,
    from_questions,
    guess_type,
    relevant_of,
    under_mix,
)
from judge.textnorm import REFUSAL_MARKERS

CORPUS = {
    "p/yearly": Chunk(chunk_id="p/yearly", doc="pricing", text="年額プランは3,800円（税込）です。"),
    "w/limits": Chunk(
        chunk_id="w/limits", doc="widgets", text="Widgets are not supported on iPad."
    ),
}


def record(qid: str, answer: str, *chunks: str) -> RunRecord:
    return RunRecord.model_validate(
        {"id": qid, "retrieved": [{"chunk_id": c} for c in chunks], "answer": answer}
    )


def test_types_are_guessed_from_the_question_and_the_answer() -> None:
    refusals = REFUSAL_MARKERS
    assert (
        guess_type(
            "Windows版はありますか？", "ヘルプに記載がなく、お答えできません。", False, refusals
        )
        == "out_of_scope"
    )
    assert guess_type("How do I pair it?", "Press Pair.", True, refusals) == "procedural"
    assert (
        guess_type("通知が来ない", "1. 設定を開きます。\n2. オンにします。", True, refusals)
        == "procedural"
    )
    assert (
        guess_type("iPadで使えますか？", "iPadには対応していません。", True, refusals) == "negative"
    )
    assert (
        guess_type("Can I use it on iPad?", "No, it is not supported on iPad.", True, refusals)
        == "negative"
    )
    assert guess_type("年額はいくら？", "3,800円です。", True, refusals) == "factual"


def test_chunks_come_from_the_grades_or_else_from_the_chunk_the_answer_was_written_from() -> None:
    r = record("u1", "年額プランは3,800円（税込）です。", "w/limits", "p/yearly")
    assert relevant_of("年額は？", r, None, 5, CORPUS, REFUSAL_MARKERS) == ("p/yearly",)
    assert answer_support(r.answer, CORPUS["p/yearly"].text) == 1.0
    grades = {("年額は？", "p/yearly"): 2, ("年額は？", "w/limits"): 3}
    assert relevant_of("年額は？", r, grades, 5, CORPUS, REFUSAL_MARKERS) == (
        "w/limits",
        "p/yearly",
    )
    assert relevant_of("年額は？", r, grades, 1, CORPUS, REFUSAL_MARKERS) == ("w/limits",)
    refused = record("u1", "I don't know.", "p/yearly")
    assert relevant_of("x", refused, None, 5, CORPUS, REFUSAL_MARKERS) == ()
    assert relevant_of("x", None, None, 5, CORPUS, REFUSAL_MARKERS) == ()


def test_candidates_are_ranked_by_what_they_add() -> None:
    golden = [
        GoldenQuestion(
            id=f"q{n}",
            type="factual",
            question=f"q{n}",
            relevant_chunks=("p/yearly",),
            answerable=True,
        )
        for n in range(12)
    ]
    assert under_mix(golden) == {"procedural", "negative", "out_of_scope"}
    questions = [
        UserQuestion("u1", "年額はいくら？", None),
        UserQuestion("u2", "Can I put widgets on my iPad?", None),
        UserQuestion("u3", "Is there a Windows app?", None),
    ]
    records = {
        "u1": record("u1", "年額プランは3,800円（税込）です。", "p/yearly"),
        "u2": record("u2", "No. Widgets are not supported on iPad.", "w/limits"),
        "u3": record("u3", "The help does not cover this.", "w/limits"),
    }
    out = from_questions(
        questions, records, {"u1"}, None, golden, CORPUS, 5, ["out_of_scope"], REFUSAL_MARKERS
    )
    assert [c.source_id for c in out] == ["u2", "u3", "u1"]
    u2, u3, u1 = out
    assert u2.type == "negative" and u2.relevant_chunks == ("w/limits",) and u2.tags == ("widgets",)
    assert u2.score == ADDS["type"] + ADDS["topic"]
    assert u3.type == "out_of_scope" and u3.relevant_chunks == () and not u3.answerable
    assert u3.score == ADDS["type"] + ADDS["refused"]
    assert u1.score == ADDS["weak"] and "weak: the judge found the answer weak" in u1.adds
    assert u1.candidate_id == candidate_id("questions", "u1", "年額はいくら？") != u2.candidate_id
    assert candidate_id("questions", "u9", "年額はいくら？") != u1.candidate_id  # asked twice
