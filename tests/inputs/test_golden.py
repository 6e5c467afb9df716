import copy
from collections.abc import Callable
from typing import Any

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.inputs.golden import find_leaks, load_golden
from tests.conftest import CORPUS, QUESTIONS

Tiny = Callable[..., Config]


def _questions(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    """QUESTIONS with per-id field changes, e.g. _questions(q1={"type": "x"})."""
    out = copy.deepcopy(QUESTIONS)
    for q in out:
        q.update(changes.get(q["id"], {}))
    return out


def _problems(config: Config) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_golden(config.data)
    return caught.value.problems


def test_tiny_set_loads(tiny: Tiny) -> None:
    golden = load_golden(tiny().data)
    assert [q.id for q in golden.questions] == ["q1", "q2", "q3", "q4"]
    assert set(golden.corpus) == {c["chunk_id"] for c in CORPUS}
    assert golden.questions_hash.startswith("h1:")


def test_duplicate_question_id(tiny: Tiny) -> None:
    questions = [*QUESTIONS, {**QUESTIONS[0]}]
    (problem,) = _problems(tiny(questions=questions))
    assert problem.endswith("questions.jsonl:5: duplicate question id 'q1' (first on line 1)")


def test_duplicate_chunk_id(tiny: Tiny) -> None:
    (problem,) = _problems(tiny(corpus=[*CORPUS, CORPUS[0]]))
    assert problem.endswith("corpus.jsonl:6: duplicate chunk_id 'pricing/plans' (first on line 1)")


def test_unknown_type_and_unknown_field_and_missing_field_all_reported(tiny: Tiny) -> None:
    questions = _questions(q1={"type": "trivia"}, q2={"colour": "red"})
    del questions[2]["question"]
    problems = _problems(tiny(questions=questions))
    assert len(problems) == 3
    # In file order, whichever check found them.
    assert problems[0].endswith(
        ":1: type: 'trivia' is not one of factual, procedural, negative, out_of_scope"
    )
    assert problems[1].endswith(":2: unknown field 'colour'")
    assert problems[2].endswith(":3: field 'question' missing")


def test_out_of_scope_rules(tiny: Tiny) -> None:
    questions = _questions(
        q4={"answerable": True, "relevant_chunks": ["pricing/plans"]},
        q1={"answerable": False},
        q3={"relevant_chunks": []},
    )
    problems = _problems(tiny(questions=questions))
    assert any(":1: answerable: false is only for out-of-scope types" in p for p in problems)
    assert any(
        ":1: relevant_chunks: must be empty for an unanswerable question" in p for p in problems
    )
    assert any(
        ":3: relevant_chunks: an answerable question needs at least one" in p for p in problems
    )
    assert any(":4: answerable: must be false for type 'out_of_scope'" in p for p in problems)


def test_relevant_chunk_must_exist(tiny: Tiny) -> None:
    (problem,) = _problems(tiny(questions=_questions(q1={"relevant_chunks": ["pricing/gone"]})))
    assert problem.endswith(
        ":1: relevant_chunks: not in the corpus: pricing/gone "
        "(a chunk id changed? ids must stay stable across re-chunking)"
    )


def test_empty_question_and_empty_chunk_text(tiny: Tiny) -> None:
    problems = _problems(tiny(questions=_questions(q2={"question": "  "})))
    assert problems == [p for p in problems if p.endswith(":2: question: must not be empty")]
    corpus = copy.deepcopy(CORPUS)
    corpus[1]["text"] = "\n"
    (problem,) = _problems(tiny(corpus=corpus))
    assert problem.endswith("corpus.jsonl:2: text: must not be empty")


def test_custom_question_types(tiny: Tiny) -> None:
    questions = _questions(q1={"type": "howto"})
    config = tiny(
        questions=questions,
        extra_toml='question_types = ["howto", "factual", "procedural", "negative", "out_of_scope"]',
    )
    assert load_golden(config.data).questions[0].type == "howto"


def test_leak_warning_needs_two_verbatim_questions(tiny: Tiny) -> None:
    corpus = copy.deepcopy(CORPUS)
    corpus[0]["text"] += " よくある質問：年額プランはいくらですか？"
    assert find_leaks(load_golden(tiny(corpus=corpus).data)) == []
    # A second question quoted with different spacing and width in another chunk of the doc.
    corpus[1]["text"] += "Ｑ．バックアップから戻す  手順を教えて"
    questions = _questions(q2={"relevant_chunks": ["backup/restore"]})
    (leak,) = find_leaks(load_golden(tiny(corpus=corpus, questions=questions).data))
    assert leak.doc == "pricing"
    assert leak.question_ids == ("q1", "q2")


def test_leak_check_ignores_short_questions(tiny: Tiny) -> None:
    questions = _questions(q1={"question": "年額は？"}, q3={"question": "iPad対応？"})
    corpus = copy.deepcopy(CORPUS)
    corpus[0]["text"] += "年額は？iPad対応？"
    assert find_leaks(load_golden(tiny(questions=questions, corpus=corpus).data)) == []


@pytest.mark.parametrize(
    ("where", "change", "said"),
    [
        ("questions", {"answerable": "yes"}, ':1: answerable: must be true or false, not "yes"'),
        ("questions", {"answerable": 1}, ":1: answerable: must be true or false, not 1"),
        ("questions", {"id": "q 1"}, ":1: id: contains U+0020 (a space) at character 2"),
        (
            "questions",
            {"relevant_chunks": ["pricing/\tplans"]},
            ":1: relevant_chunks.0: contains U+0009 (a tab)",
        ),
        ("corpus", {"chunk_id": "pricing/plans\n"}, ":1: chunk_id: contains U+000A (a line break)"),
        ("corpus", {"chunk_id": "pricing\u3000plans"}, ":1: chunk_id: contains U+3000"),
    ],
)
def test_bools_and_ids_are_read_strictly(
    tiny: Tiny, where: str, change: dict[str, Any], said: str
) -> None:
    records = copy.deepcopy(QUESTIONS if where == "questions" else CORPUS)
    records[0].update(change)
    config = tiny(**{where: records})
    path = config.data.questions if where == "questions" else config.data.corpus
    assert _problems(config)[0].startswith(f"{path}{said}")
