"""The model-free baseline's chunk grade and correctness (judge.judging.backends.lexical), on
Japanese and English examples from the two shipped samples, and its rules on both samples."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from judge.config import load_config
from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.lexical import (
    CHUNK_VERSION,
    CORRECTNESS_VERSION,
    VERSION,
    LexicalBackend,
    corpus_weights,
    correctness_lexically,
    grade_chunk_lexically,
)
from judge.judging.tasks.chunk import ChunkItem, build_chunk_items, chunk_key, chunk_request
from judge.judging.tasks.correctness import CorrectnessItem, correctness_key, correctness_request
from judge.judging.tasks.registry import TASKS, load_task_prompt
from judge.judging.types import ContextChunk
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO

JA_QUESTION = "年払いにしたらいくらになりますか？月払いより安くなるなら切り替えたいです"
JA_REFERENCE = "年額プランは3,800円（税込）です。月額プランを12か月続けた場合（4,800円）より1,000円安くなります。"
EN_QUESTION = "Whats the max number of mesh satellites I can add to one router? House is 3 floors"
EN_REFERENCE = "Up to 4 satellites per router, with no more than 2 in a chain."
CHUNK_PROMPT = load_task_prompt(REPO / "prompts" / "chunk.v1.md", TASKS["chunk"])
CORRECTNESS_PROMPT = load_task_prompt(REPO / "prompts" / "correctness.v1.md", TASKS["correctness"])


def test_a_chunk_holding_the_questions_words_grades_high_and_an_unrelated_one_zero() -> None:
    on_topic = "メッシュ サテライト: one router supports up to 4 mesh satellites, max 2 in a chain."
    assert (
        grade_chunk_lexically(
            EN_QUESTION,
            "The max number of mesh satellites per router is 4, I can add them to one router.",
        )["grade"]
        == 3
    )
    assert grade_chunk_lexically(EN_QUESTION, on_topic)["grade"] >= 1
    assert (
        grade_chunk_lexically(EN_QUESTION, "Parental controls block websites by category.")["grade"]
        == 0
    )
    payload = grade_chunk_lexically(
        JA_QUESTION, "月払いと年払いの料金: 年払いは3,800円で、月払いより安くなります。"
    )
    assert payload["grade"] >= 2 and "question's tokens" in payload["reason"]
    assert (
        grade_chunk_lexically(JA_QUESTION, "ウィジェットは小・中・大の3サイズです。")["grade"] == 0
    )


def test_correctness_follows_the_reference_and_a_refusal_is_right_only_out_of_scope() -> None:
    repeat = "年額プランは3,800円（税込）で、月額プランを12か月続けた場合の4,800円より1,000円安くなります。"
    assert correctness_lexically(repeat, JA_REFERENCE, True)["correctness"] == 2
    assert (
        correctness_lexically("ウィジェットは3サイズです。", JA_REFERENCE, True)["correctness"] == 0
    )
    assert (
        correctness_lexically("One router supports up to 4 satellites.", EN_REFERENCE, True)[
            "correctness"
        ]
        == 1
    )
    refusal = "ご質問の内容はヘルプに記載がありません。"
    assert correctness_lexically(refusal, JA_REFERENCE, True)["correctness"] == 0
    assert correctness_lexically(refusal, None, False)["correctness"] == 2
    assert (
        correctness_lexically("The manual does not cover this.", "Not covered.", False)[
            "correctness"
        ]
        == 2
    )
    invented = "Yes, it works with Starlink out of the box."
    assert (
        correctness_lexically(invented, "The help centre does not say.", False)["correctness"] == 0
    )


def test_the_configured_refusal_phrases_decide_a_refusal() -> None:
    answer = "That is outside what the FAQ covers."
    assert correctness_lexically(answer, None, False)["correctness"] == 0
    backend = LexicalBackend(["outside what the faq covers"])
    item = CorrectnessItem(
        "q1", "q", None, False, answer, correctness_key("q", None, False, answer)
    )
    request = correctness_request(CORRECTNESS_PROMPT, item)
    assert json.loads(backend.complete(request).text)["correctness"] == 2


def test_the_backend_answers_each_task_in_its_shape() -> None:
    backend = LexicalBackend()
    chunk = chunk_request(
        CHUNK_PROMPT,
        ChunkItem("q", EN_QUESTION, "mesh/limits", 1, EN_REFERENCE, chunk_key("q", "m", "t")),
    )
    assert set(json.loads(backend.complete(chunk).text)) == {"grade", "reason"}
    correctness = correctness_request(
        CORRECTNESS_PROMPT,
        CorrectnessItem("q", EN_QUESTION, EN_REFERENCE, True, "Up to 4.", "k"),
    )
    assert set(json.loads(backend.complete(correctness).text)) == {"correctness", "reason"}
    answer = JudgeRequest("", {}, EN_QUESTION, [ContextChunk(1, "c", EN_REFERENCE)], "Up to 4.")
    assert "faithfulness" in json.loads(backend.complete(answer).text)
    # Their rules have versions of their own: the answer's VERSION did not move for them.
    assert (VERSION, CHUNK_VERSION, CORRECTNESS_VERSION) == (
        "lexical-v6",
        "lexical-chunk-v2",
        "lexical-correctness-v2",
    )


@pytest.mark.parametrize(
    ("config", "relevant_high", "others_low"),
    [("judge.toml", (15, 23), (94, 127)), ("golden/sample-en/judge.toml", (12, 17), (65, 83))],
)
def test_on_both_samples_labelled_chunks_mostly_grade_2_and_most_others_less(
    config: str, relevant_high: tuple[int, int], others_low: tuple[int, int]
) -> None:
    """The confusion module docstring and docs/judge.md give: the top 5 chunks of every
    labelled question, the baseline's grade (its tokens weighed by the corpus, as the chunk
    task asks) against the golden labels."""
    loaded = load_config(REPO / config)
    inputs = load_inputs(loaded, None, with_labels=False)
    by_id = inputs.golden.by_id()
    confusion: Counter[tuple[bool, bool]] = Counter()
    for item in build_chunk_items(inputs.golden, inputs.run, loaded.retrieval.context_k):
        listed = by_id[item.question_id].relevant_chunks
        if listed is None:
            continue
        assert item.weights is not None
        weights = item.weights.get()
        high = grade_chunk_lexically(item.question, item.text, weights)["grade"] >= 2
        confusion[(item.chunk_id in listed, high)] += 1
    relevant = confusion[(True, True)] + confusion[(True, False)]
    others = confusion[(False, True)] + confusion[(False, False)]
    assert (confusion[(True, True)], relevant) == relevant_high
    assert (confusion[(False, False)], others) == others_low
    assert relevant_high[0] / relevant_high[1] > 0.5 and others_low[0] / others_low[1] > 0.5


def test_a_word_in_every_chunk_counts_for_nothing_in_a_chunk_grade() -> None:
    """Issue 33: the product's name in every chunk made most chunks "possible missing labels"."""
    corpus = [
        "Velo Day Pass: unlimited 30-minute rides for 24 hours.",
        "Velo e-bikes cost a surcharge of 1 euro per ride.",
        "Velo stations open at 6 a.m.",
    ]
    weights = corpus_weights(corpus)
    assert weights["velo"] == 0.0
    assert weights["surcharge"] == weights["day"] > 0  # each in one chunk of three
    question = "Velo opening hours?"
    # Without weights "velo" alone is a third of the question's tokens; with them, nothing.
    assert grade_chunk_lexically(question, corpus[1])["grade"] == 3
    assert grade_chunk_lexically(question, corpus[1], weights)["grade"] == 0
    assert grade_chunk_lexically(question, corpus[1], weights)["reason"] == (
        "the chunk holds 0.00 of the question's weight (IDF)"
    )
    # Japanese: bigrams weighed the same way.
    ja = ["ひとこと日記の年額プランは3,800円です。", "ひとこと日記のテーマは20種類です。"]
    ja_weights = corpus_weights(ja)
    assert ja_weights["日記"] == 0.0
    assert grade_chunk_lexically("ひとこと日記のテーマは何種類？", ja[0], ja_weights)["grade"] == 0
    assert grade_chunk_lexically("ひとこと日記のテーマは何種類？", ja[1], ja_weights)["grade"] == 3
