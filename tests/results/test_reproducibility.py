"""The RAG system's own reproducibility (issue 21 part 7): answers compared across asks
(``judge check --repeat``) and across nights (the nightly's note), normalised."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.inputs.golden import GoldenQuestion
from judge.inputs.runs import RetrievedChunk, Run, RunMeta, RunRecord
from judge.judging.types import ContextChunk
from judge.results.item_record import ItemRecord
from judge.results.reproducibility import (
    DOCS,
    Steady,
    repeated,
    same_answer,
    steady_inputs,
    steady_note,
)
from tests.conftest import RUN

Tiny = Callable[..., Config]


def test_answers_are_compared_normalised() -> None:
    assert same_answer("年額3,800円です。", "年額3,800円です。 ")  # a trailing space
    assert same_answer("Yes, it WORKS.", "yes, it works.\n")  # case, a line break
    assert same_answer("ＰＲＯプラン", "PROプラン")  # width (NFKC)
    assert not same_answer("年額3,800円です。", "年額3,900円です。")


# --- judge check --repeat: asks compared -----------------------------------------------------


def _question(qid: str, qtype: str) -> GoldenQuestion:
    return GoldenQuestion(
        id=qid, type=qtype, question=f"{qid}?", relevant_chunks=("a",), answerable=True
    )


def _run(answers: dict[str, tuple[list[str], str]], failed: dict[str, str] | None = None) -> Run:
    meta = RunMeta(adapter="rag:answer", created_at=datetime.now(UTC), failed=failed or {})
    records = {
        qid: RunRecord(
            id=qid, retrieved=tuple(RetrievedChunk(chunk_id=c) for c in ranked), answer=answer
        )
        for qid, (ranked, answer) in answers.items()
    }
    return Run(meta, records)


QUESTIONS = [
    _question("f1", "factual"),
    _question("f2", "factual"),
    _question("p1", "procedural"),
    _question("n1", "negative"),
]
FIRST = {
    "f1": (["a", "b"], "A."),
    "f2": (["a", "b"], "B."),
    "p1": (["b", "c"], "C."),
    "n1": (["c"], "D."),
}


def test_identical_asks_change_nothing() -> None:
    result = repeated(QUESTIONS, [_run(FIRST), _run(FIRST), _run(FIRST)], ["factual", "negative"])
    assert result.summary() == (
        "reproducibility over 3 asks: retrieval order changed for 0 of 4, answers changed for "
        "0 of 4"
    )
    # The given types first, then the others in golden-set order; none without questions.
    assert [(s.type, s.n, s.retrieval, s.answers) for s in result.per_type] == [
        ("factual", 2, 0, 0),
        ("negative", 1, 0, 0),
        ("procedural", 1, 0, 0),
    ]
    assert result.changed == [] and result.left_out == []
    assert not any(line.startswith("  changed:") for line in result.lines())


def test_a_question_changes_when_any_two_asks_differ() -> None:
    second = FIRST | {"f1": (["a", "b"], "A. "), "p1": (["c", "b"], "C.")}  # space; reordered
    third = FIRST | {"f2": (["a", "b"], "B, or not."), "p1": (["b", "c"], "C?")}
    result = repeated(QUESTIONS, [_run(FIRST), _run(second), _run(third)], ["factual"])
    # f1: only a trailing space: no change. f2: its third answer. p1: its order in the second
    # ask, its answer in the third. n1: the same three times.
    assert result.retrieval_changed == ["p1"]
    assert result.answers_changed == ["f2", "p1"]
    assert result.changed == ["f2", "p1"]
    assert result.summary() == (
        "reproducibility over 3 asks: retrieval order changed for 1 of 4, answers changed for "
        "2 of 4"
    )
    lines = result.lines()
    assert lines[1] == (
        "  retrieval order changed: factual 0 of 2, procedural 1 of 1, negative 0 of 1"
    )
    assert lines[2] == (
        "  answers changed:         factual 1 of 2, procedural 1 of 1, negative 0 of 1"
    )
    assert "so a trailing space is no change" in lines[3]
    assert lines[4] == "  changed: f2 (answer), p1 (retrieval order and answer)"
    assert lines[5].endswith(DOCS)


def test_a_question_without_an_answer_in_one_ask_is_left_out_not_counted() -> None:
    gone = {k: v for k, v in FIRST.items() if k != "n1"}
    result = repeated(QUESTIONS, [_run(FIRST), _run(gone, {"n1": "timed out"})])
    assert result.left_out == ["n1"]
    assert result.compared == 3
    assert result.summary().endswith(
        "retrieval order changed for 0 of 3, answers changed for 0 of 3"
    )
    assert result.lines()[-1] == "  not compared (1, no usable answer in every ask): n1"


def test_the_first_five_changed_questions_are_named() -> None:
    questions = [_question(f"q{i}", "factual") for i in range(1, 9)]
    first = {q.id: (["a"], "x") for q in questions}
    second = {q.id: (["a"], "y") for q in questions}
    (named,) = [
        line
        for line in repeated(questions, [_run(first), _run(second)]).lines()
        if "changed: q" in line
    ]
    assert named == (
        "  changed: q1 (answer), q2 (answer), q3 (answer), q4 (answer), q5 (answer) and 3 more"
    )


# --- the nightly: answers changed although their inputs did not -----------------------------


def _item(qid: str, answer: str, chunks: list[str], question: str | None = None) -> ItemRecord:
    return ItemRecord(
        question_id=qid,
        type="factual",
        split="",
        question=question or f"{qid}?",
        answer=answer,
        context=[ContextChunk(rank, c, f"text of {c}") for rank, c in enumerate(chunks, 1)],
        retrieval={},
        labels=[],
    )


EARLIER = [_item("q1", "A.", ["a", "b"]), _item("q2", "B.", ["b"]), _item("q3", "C.", ["c"])]


def test_only_answers_whose_question_and_chunks_stayed_are_counted() -> None:
    current = [
        _item("q1", "A, but different.", ["a", "b"]),  # same inputs, another answer: counted
        _item("q2", "B, but different.", ["a", "b"]),  # its retrieval changed too: not counted
        _item("q3", "C. ", ["c"]),  # a trailing space: no change
        _item("q4", "D.", ["d"]),  # not in the earlier run: not compared
    ]
    assert steady_inputs(EARLIER, current) == Steady(2, ["q1"])
    # The order of the chunks counts (the generator saw them in that order); the text does not.
    reordered = [_item("q1", "A, but different.", ["b", "a"])]
    assert steady_inputs(EARLIER, reordered) == Steady(0, [])
    # Another question text is another input.
    asked = [_item("q1", "A, but different.", ["a", "b"], question="q1, reworded?")]
    assert steady_inputs(EARLIER, asked) == Steady(0, [])


def test_the_note_counts_names_and_points_to_the_docs() -> None:
    assert steady_note(Steady(3, [])) is None
    assert steady_note(Steady(0, [])) is None
    assert steady_note(Steady(30, ["q01", "q04", "q07", "q08", "q09"])) == (
        "5 of 30 answers changed although their question and retrieved chunks did not (q01, "
        "q04, q07 and 2 more): the generator is not deterministic (temperature 0?) or was "
        f"changed; {DOCS}"
    )
    assert DOCS == "docs/gate.md#when-scores-wobble-is-the-rag-system-deterministic"


def _night(tiny: Tiny, capsys: pytest.CaptureFixture[str], run: list[dict[str, Any]]) -> str:
    config = tiny(run=run)
    assert config.source is not None
    code = main(["--config", str(config.source), "nightly", "--backend", "lexical"])
    first: str = capsys.readouterr().out.splitlines()[0]
    assert code in (0, 1), first
    return first


def test_the_nightly_first_line_says_when_answers_changed_with_the_same_retrieval(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _night(tiny, capsys, RUN).startswith("nightly: no compatible earlier run")
    # q1's answer reworded (the lexical judge scores it as before), its chunks the same.
    reworded = copy.deepcopy(RUN)
    reworded[1]["answer"] = "年額プランは3,800円です。"
    first = _night(tiny, capsys, reworded)
    assert first == (
        "nightly: ok: no regression; 1 of 4 answers changed although their question and "
        "retrieved chunks did not (q1): the generator is not deterministic (temperature 0?) or "
        f"was changed; {DOCS}"
    )
    # The same answers again: nothing changed, nothing said.
    assert _night(tiny, capsys, reworded) == "nightly: ok: no regression"


def test_the_nightly_says_nothing_when_the_retrieval_changed_too(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _night(tiny, capsys, RUN).startswith("nightly: no compatible earlier run")
    moved = copy.deepcopy(RUN)
    moved[1]["answer"] = "年額プランは3,800円です。"
    moved[1]["retrieved"] = list(reversed(moved[1]["retrieved"]))  # q1's chunks reordered
    moved[2]["answer"] += " "  # q2: a trailing space only
    first = _night(tiny, capsys, moved)
    assert "answers changed although" not in first
    assert first.startswith("nightly: ")


def test_the_nightly_leaves_a_named_generator_change_to_the_settings_note(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _night(tiny, capsys, RUN).startswith("nightly: no compatible earlier run")
    other = copy.deepcopy(RUN)
    other[0]["run_meta"]["generator_model"] = "gemma3:4b"
    other[1]["answer"] = "年額プランは3,800円です。"
    first = _night(tiny, capsys, other)
    assert "the generator model changed since the last compatible run" in first
    assert "answers changed although" not in first
