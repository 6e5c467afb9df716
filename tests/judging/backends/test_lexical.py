import json
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.judging.backends import JudgeRequest, open_backend
from judge.judging.backends.lexical import LexicalBackend, judge_lexically
from judge.judging.items import ContextChunk
from judge.judging.verdict import make_verdict

CONTEXT = [
    "ひとことPROの年額プランは3,800円（税込）です。月額プランは400円です。",
    "ウィジェットはiPadには対応していません。iPhoneとAndroidで使えます。",
]


def test_grounded_japanese_answer_scores_high_and_quotes_its_sentence() -> None:
    payload = judge_lexically(
        "年額プランはいくらですか", CONTEXT, "年額プランは3,800円（税込）です。"
    )
    assert (payload["faithfulness"], payload["relevance"]) == (2, 2)
    assert payload["evidence"] == "ひとことPROの年額プランは3,800円（税込）です。"


def test_invented_content_lowers_faithfulness() -> None:
    answer = (
        "年額プランは3,800円です。さらに家族全員が無料で使える特典と専用サポート窓口が付きます。"
    )
    payload = judge_lexically("年額プランはいくらですか", CONTEXT, answer)
    assert payload["faithfulness"] < 2


def test_off_topic_answer_is_not_relevant() -> None:
    payload = judge_lexically(
        "年額プランはいくらですか", CONTEXT, "ウィジェットはiPadには対応していません。"
    )
    assert payload["relevance"] == 0


def test_refusals() -> None:
    # The context says nothing about Windows: a refusal is right (2/2, no quote needed).
    payload = judge_lexically(
        "Windows版のアプリはありますか", CONTEXT, "ヘルプには記載がありません。"
    )
    assert (payload["faithfulness"], payload["relevance"], payload["evidence"]) == (2, 2, "")
    # The context answers the question: refusing is not relevant.
    payload = judge_lexically(
        "年額プランの料金はいくらですか", CONTEXT, "申し訳ありませんが、お答えできません。"
    )
    assert (payload["faithfulness"], payload["relevance"]) == (2, 0)


def test_english_works_too() -> None:
    context = ["The yearly plan costs 3,800 yen. Widgets do not support iPad."]
    payload = judge_lexically(
        "How much is the yearly plan?", context, "The yearly plan costs 3,800 yen."
    )
    assert (payload["faithfulness"], payload["relevance"]) == (2, 2)


def test_an_english_refusal_is_a_refusal() -> None:
    # Tried as a new user would: "the manual does not cover this" scored faithfulness 0.
    context = ["The yearly plan costs 3,800 yen. Widgets do not support iPad."]
    payload = judge_lexically(
        "Can I export my notes to Evernote?", context, "The manual does not cover this."
    )
    assert (payload["faithfulness"], payload["relevance"], payload["evidence"]) == (2, 2, "")


def test_an_abbreviation_does_not_cut_the_quoted_sentence() -> None:
    # "U.S." and "a.m." used to end sentences: the quote was a fragment of the context sentence.
    context = ["Our U.S. office is in Ohio and opens at 9 a.m. on weekdays."]
    answer = "Our U.S. office is in Ohio. It opens at 9 a.m. on weekdays."
    payload = judge_lexically("Where is the U.S. office?", context, answer)
    assert payload["evidence"] == context[0]
    assert payload["relevance"] == 2


def test_backend_reply_goes_through_the_same_verdict_path() -> None:
    chunks = [ContextChunk(i + 1, f"c/{i}", text) for i, text in enumerate(CONTEXT)]
    request = JudgeRequest(
        "(prompt ignored)",
        {},
        "年額プランはいくらですか",
        chunks,
        "年額プランは3,800円（税込）です。",
    )
    reply = LexicalBackend().complete(request)
    assert json.loads(reply.text)["faithfulness"] == 2
    verdict = make_verdict("q", "k", reply, chunks, True)
    assert verdict.status == "ok" and verdict.match is not None and verdict.match.kind == "exact"


def test_a_long_evidence_sentence_is_cut_to_the_schema_bound() -> None:
    sentence = "The yearly plan " + "really " * 40 + "costs 3,800 yen."
    payload = judge_lexically("How much is the yearly plan?", [sentence], sentence)
    assert len(payload["evidence"]) == 200 and sentence.startswith(payload["evidence"])
    chunks = [ContextChunk(1, "c/1", sentence)]
    reply = LexicalBackend().complete(JudgeRequest("", {}, "How much?", chunks, sentence))
    assert make_verdict("q", "k", reply, chunks, True).status == "ok"


def test_refusal_phrases_are_configurable_and_change_the_fingerprint(
    tiny: Callable[..., Config],
) -> None:
    context = ["The router has two bands."]
    answer = "Sorry, that's outside what the docs talk about."
    default = judge_lexically("Does it work with Starlink?", context, answer)
    assert not str(default["note"]).startswith("refusal")
    own = ["ＯＵＴＳＩＤＥ what the docs"]  # matched after NFKC and case folding
    payload = judge_lexically("Does it work with Starlink?", context, answer, own)
    assert str(payload["note"]).startswith("refusal")
    config = tiny(extra_toml='[judge.lexical]\nrefusal_phrases = ["outside what the docs"]\n')
    backend = open_backend(config.with_overrides(judge={"backend": "lexical"}).judge).backend
    assert backend.identity.options == {"refusal_phrases": ["outside what the docs"]}
    assert LexicalBackend().identity.options == {}  # the built-in list: caches stay valid
    with pytest.raises(ConfigError, match="empty phrase"):
        tiny(extra_toml='[judge.lexical]\nrefusal_phrases = ["  "]\n')


def test_the_baseline_says_what_its_quotes_are() -> None:
    about = LexicalBackend().identity.about or ""
    assert "copied, so it is always found" in about
    assert about in LexicalBackend().identity.describe()
