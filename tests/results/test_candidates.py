"""``judge.results.candidates``: each check rejects its case with its reason, in Japanese and in
English, and lets a good draft through; similarity and the lexical retriever."""

from __future__ import annotations

from typing import Any

import pytest

from judge.inputs.candidates import Candidate, rejection_counts
from judge.inputs.golden import Chunk, GoldenQuestion
from judge.results.candidates import (
    LEXICAL_ANSWERS,
    NEAR_DUPLICATE,
    LexicalIndex,
    grade_pairs,
    leaked_in,
    letters,
    similarity,
    verify,
)

TYPES = ("factual", "procedural", "negative", "out_of_scope")
OUT = ("out_of_scope",)

JA = {
    "pricing/yearly": Chunk(
        chunk_id="pricing/yearly",
        doc="pricing",
        text="年額プランの料金は年額3,800円（税込）です。月額プランより1,000円お得です。",
    ),
    "widgets/limits": Chunk(
        chunk_id="widgets/limits",
        doc="widgets",
        text="ウィジェットはiPadには対応していません。iPhoneとAndroidでご利用いただけます。",
    ),
}
EN = {
    "wifi/bands": Chunk(
        chunk_id="wifi/bands",
        doc="wifi",
        text="The AX1800 broadcasts on 2.4 GHz and 5 GHz. It does not support the 6 GHz band.",
    ),
    "warranty/coverage": Chunk(
        chunk_id="warranty/coverage",
        doc="warranty",
        text="The warranty lasts 2 years in the U.S. and Canada and 3 years in the U.K. and EU.",
    ),
}
GOLDEN_JA = (
    GoldenQuestion(
        id="q01",
        type="factual",
        question="年払いにしたらいくらになりますか？月払いより安くなるなら切り替えたいです",
        relevant_chunks=("pricing/yearly",),
        answerable=True,
    ),
)
GOLDEN_EN = (
    GoldenQuestion(
        id="q01",
        type="factual",
        question="How long is the warranty in the UK, and does it differ from the US?",
        relevant_chunks=("warranty/coverage",),
        answerable=True,
    ),
)


def draft(
    question: str, kind: str = "factual", chunk: str = "", span: str = "", **more: Any
) -> Candidate:
    unanswerable = kind == "out_of_scope"
    fields: dict[str, Any] = {
        "candidate_id": more.pop("cid", "c-" + str(abs(hash(question)) % 10**8)),
        "type": kind,
        "question": question,
        "relevant_chunks": () if unanswerable else (chunk,),
        "answerable": not unanswerable,
        "answer_span": span,
        "source": "corpus",
        **more,
    }
    return Candidate.model_validate(fields)


def reasons(
    c: Candidate, corpus: dict[str, Chunk], golden: tuple[GoldenQuestion, ...], grades: Any = None
) -> list[str]:
    (out,) = verify([c], corpus, golden, grades or {}, TYPES, OUT)
    return list(out.rejected)


def test_a_good_draft_passes_in_japanese_and_english() -> None:
    ja = draft(
        "年額プランは1年でいくら払えばいいの？",
        chunk="pricing/yearly",
        span="年額3,800円（税込）です。",
    )
    assert reasons(ja, JA, GOLDEN_JA) == []
    # normalised: full-width digits and other spacing are the same span
    ja = draft("年額はいくら？", chunk="pricing/yearly", span="年額３，８００円 （税込）です")
    assert reasons(ja, JA, GOLDEN_JA) == []
    en = draft(
        "what bands does my router use", chunk="wifi/bands", span="broadcasts on 2.4 GHz and 5 GHz"
    )
    assert reasons(en, EN, GOLDEN_EN) == []


@pytest.mark.parametrize(
    ("corpus", "golden", "question", "chunk", "span"),
    [
        (JA, GOLDEN_JA, "年額プランはいくら？", "pricing/yearly", "年額4,800円（税込）です。"),
        (EN, GOLDEN_EN, "Does it do 6 GHz?", "wifi/bands", "It supports the 6 GHz band fully."),
    ],
)
def test_a_span_absent_from_its_chunk_is_rejected_not_retyped(
    corpus: dict[str, Chunk], golden: Any, question: str, chunk: str, span: str
) -> None:
    (found,) = reasons(draft(question, chunk=chunk, span=span), corpus, golden)
    assert found.startswith(f"span_absent: the factual answer span is not in {chunk}")
    # a span too short to prove anything is absent too
    (short,) = reasons(draft(question, chunk=chunk, span="です"), corpus, golden)
    assert short.startswith("span_absent:") and "too_short" in short


@pytest.mark.parametrize(
    ("corpus", "question", "chunk"),
    [
        (JA, "年額プランの料金は年額いくらですか？", "pricing/yearly"),
        (EN, "Does the AX1800 broadcasts on 6 GHz band?", "wifi/bands"),
    ],
)
def test_an_out_of_scope_draft_the_corpus_answers_is_rejected(
    corpus: dict[str, Chunk], question: str, chunk: str
) -> None:
    c = draft(question, kind="out_of_scope")
    index = LexicalIndex(corpus)
    assert index.top(question, 5)[0] == chunk
    assert grade_pairs([c], index, OUT)[0] == (question, chunk)
    graded = {(question, chunk): LEXICAL_ANSWERS}
    (found,) = reasons(c, corpus, (), graded)
    assert found == f"answered_by_corpus: {chunk} is graded {LEXICAL_ANSWERS} for the question"
    # graded 1 (related, not answering): it stays out of scope
    assert reasons(c, corpus, (), {(question, chunk): 1}) == []


def test_a_negative_drafts_limit_must_be_graded_relevant() -> None:
    question = "iPadにウィジェットを置けますか？"
    c = draft(
        question,
        kind="negative",
        chunk="widgets/limits",
        span="ウィジェットはiPadには対応していません。",
    )
    assert grade_pairs([c], LexicalIndex(JA), OUT) == [(question, "widgets/limits")]
    assert reasons(c, JA, (), {(question, "widgets/limits"): 3}) == []
    (found,) = reasons(c, JA, (), {(question, "widgets/limits"): 1})
    assert found.startswith("limit_not_relevant: the limiting chunk widgets/limits is graded 1")
    (missing,) = reasons(
        draft(question, kind="negative", chunk="widgets/nope", span="x" * 9), JA, ()
    )
    assert missing == "chunk_missing: 'widgets/nope' is not in the corpus"


@pytest.mark.parametrize(
    ("corpus", "golden", "copy"),
    [
        (
            JA,
            GOLDEN_JA,
            "年払いにしたらいくらになりますか。月払いより安くなるなら切り替えたいです！",
        ),
        (EN, GOLDEN_EN, "how long is the warranty in the UK and does it differ from the US"),
    ],
)
def test_near_duplicates_of_the_golden_set_and_of_each_other_are_dropped(
    corpus: dict[str, Chunk], golden: tuple[GoldenQuestion, ...], copy: str
) -> None:
    c = Candidate(
        candidate_id="c-1",
        type="factual",
        question=copy,
        relevant_chunks=None,
        answerable=True,
        source="questions",
    )
    (found,) = reasons(c, corpus, golden)
    assert (
        found.startswith("covered: golden q01 is ") and float(found.split()[-2]) >= NEAR_DUPLICATE
    )
    # two near-identical candidates: the first is kept, the second dropped naming it
    first = c.model_copy(update={"candidate_id": "c-a", "question": copy + " please"})
    second = c.model_copy(update={"candidate_id": "c-b", "question": copy + " please!!"})
    out = verify([first, second], corpus, (), {}, TYPES, OUT)
    assert out[0].rejected == ()
    assert out[1].rejected[0].startswith("duplicate: candidate c-a is 1.00 similar")
    assert rejection_counts(out) == {"duplicate": 1}


@pytest.mark.parametrize(
    ("corpus", "question", "chunk"),
    [
        (JA, "ウィジェットはiPadには対応していません", "widgets/limits"),
        (EN, "It does not support the 6 GHz band?", "wifi/bands"),
    ],
)
def test_a_question_copied_from_the_corpus_is_a_leak(
    corpus: dict[str, Chunk], question: str, chunk: str
) -> None:
    c = Candidate(
        candidate_id="c-1",
        type="factual",
        question=question,
        relevant_chunks=None,
        answerable=True,
        source="questions",
    )
    assert reasons(c, corpus, ()) == [f"leak: the question's text appears in {chunk}"]
    assert leaked_in("iPad?", {chunk: letters(corpus[chunk].text)}) is None  # too short to tell


def test_a_question_without_words_is_rejected() -> None:
    (found,) = reasons(draft("...", kind="out_of_scope"), JA, ())
    assert found == "no_question: '...' has fewer than 3 letters"


def test_types_that_contradict_their_fields_are_rejected() -> None:
    wrong = draft(
        "年額は？", kind="opinion", chunk="pricing/yearly", span="年額3,800円（税込）です。"
    )
    assert reasons(wrong, JA, ()) == [
        "type: 'opinion' is not one of factual, procedural, negative, out_of_scope"
    ]
    uncited = draft("年額は？", chunk="pricing/yearly").model_copy(update={"relevant_chunks": ()})
    assert reasons(uncited, JA, ()) == ["type: a drafted factual question cites its chunk"]


def test_similarity_is_the_same_for_both_scripts_and_ignores_punctuation() -> None:
    assert similarity("ＰＲＯの料金は？", "PROの料金は") == 1.0
    assert similarity("What's the price?", "whats the price") == 1.0
    assert similarity("年額プラン", "Wi-Fi bands") == 0.0
    assert similarity("", "x") == 0.0
