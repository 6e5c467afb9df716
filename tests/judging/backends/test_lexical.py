import json
from collections.abc import Callable

import pytest

from judge.config import Config, load_config
from judge.errors import ConfigError
from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.lexical import (
    LexicalBackend,
    judge_cited,
    judge_lexically,
    judge_sentences,
)
from judge.judging.backends.registry import open_backend
from judge.judging.evidence import answer_sentences
from judge.judging.items import JudgeItem, build_items
from judge.judging.tasks.answer import verdict_for
from judge.judging.types import ContextChunk, Mode, Verdict
from judge.judging.verdict import NO_CHECKABLE_SENTENCE, make_verdict, request_schema
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO

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


# --- the cited and sentences modes -----------------------------------------------------------


def _sample_items(config_path: str) -> list[JudgeItem]:
    config = load_config(REPO / config_path)
    inputs = load_inputs(config)
    return build_items(inputs.golden, inputs.run, config.retrieval.context_k)


def _lexical_verdict(item: JudgeItem, mode: Mode) -> Verdict:
    request = JudgeRequest(
        "",
        request_schema(mode, item.record.answer),
        item.question.question,
        item.context,
        item.record.answer,
        mode,
    )
    reply = LexicalBackend().complete(request)
    return verdict_for(item, reply, cached=False, mode=mode)


@pytest.mark.parametrize("config_path", ["judge.toml", "golden/sample-en/judge.toml"])
def test_every_mode_gives_ok_verdicts_on_both_samples(config_path: str) -> None:
    items = _sample_items(config_path)
    assert len(items) >= 20
    for item in items:
        quoted = _lexical_verdict(item, "quote")
        cited = _lexical_verdict(item, "cited")
        by_sentence = _lexical_verdict(item, "sentences")
        assert quoted.status == cited.status == by_sentence.status == "ok"
        # cited: the same scores, and the number of the very sentence it would quote.
        assert (cited.faithfulness, cited.relevance) == (quoted.faithfulness, quoted.relevance)
        assert quoted.evidence.startswith(cited.evidence) and bool(cited.evidence) == bool(
            quoted.evidence
        )
        assert cited.match is not None
        assert cited.match.kind == ("cited" if cited.evidence else "empty")
        # sentences: one check per answer sentence, and the same relevance.
        assert by_sentence.sentences is not None
        assert len(by_sentence.sentences) == len(answer_sentences(item.record.answer))
        assert by_sentence.relevance == quoted.relevance
        for check in by_sentence.sentences:
            assert (check.evidence is not None) == (check.verdict == "supported")


def test_sentences_mode_judges_each_sentence_in_japanese() -> None:
    chunks = [ContextChunk(i + 1, f"c/{i}", text) for i, text in enumerate(CONTEXT)]
    answer = (
        "年額プランは3,800円（税込）です。"
        "さらに家族全員が無料で使える特典と専用サポート窓口が付きます。"
        "詳しくはヘルプに記載がありません。"
    )
    payload = judge_sentences("年額プランはいくらですか", chunks, answer)
    assert [(e["n"], e["verdict"], e["evidence_sentence"]) for e in payload["sentences"]] == [
        (1, "supported", 1),
        (2, "unsupported", 0),
        (3, "no_claim", 0),
    ]
    # Relevance is the holistic rule's. The phrase closes a third sentence after two claims:
    # the answer answers (issue 33: a refusal phrase counts where a refusal stands), so 2; the
    # same phrase where a refusal stands, although the context answers the question, is 0.
    assert payload["relevance"] == 2
    refused = judge_sentences("年額プランはいくらですか", chunks, "ヘルプに記載がありません。")
    assert refused["relevance"] == 0
    assert (
        payload["note"]
        == "1 of 2 checkable sentences share >= 0.6 of their tokens with the context"
    )
    reply = LexicalBackend().complete(
        JudgeRequest("", {}, "年額プランはいくらですか", chunks, answer, "sentences")
    )
    verdict = make_verdict("q", "k", reply, chunks, True, answer=answer, mode="sentences")
    assert verdict.faithfulness == 1 and verdict.sentences is not None
    assert verdict.evidence == "ひとことPROの年額プランは3,800円（税込）です。"


def test_sentences_and_cited_modes_in_english() -> None:
    chunks = [
        ContextChunk(1, "plans", "The yearly plan costs 3,800 yen. Widgets do not support iPad."),
        ContextChunk(2, "office", "Our U.S. office is in Ohio and opens at 9 a.m. on weekdays."),
    ]
    answer = "The U.S. office is in Ohio. It also sells pizza on Sundays. The manual does not cover parking."
    payload = judge_sentences("Where is the U.S. office?", chunks, answer)
    assert [(e["verdict"], e["evidence_sentence"]) for e in payload["sentences"]] == [
        ("supported", 3),
        ("unsupported", 0),
        ("no_claim", 0),
    ]
    cited = judge_cited("Where is the U.S. office?", chunks, "The office is in Ohio.")
    assert cited["evidence_sentence"] == 3
    # A correct refusal cites nothing, as its quote would be empty.
    refusal = judge_cited("Can I export to Evernote?", chunks, "The manual does not cover this.")
    assert (refusal["evidence_sentence"], refusal["faithfulness"], refusal["relevance"]) == (
        0,
        2,
        2,
    )


def test_an_answer_of_refusals_only_is_faithful_by_rule() -> None:
    chunks = [ContextChunk(1, "plans", "The yearly plan costs 3,800 yen.")]
    answer = "I don't know. The manual does not cover this."
    reply = LexicalBackend().complete(
        JudgeRequest("", {}, "Can I export to Evernote?", chunks, answer, "sentences")
    )
    verdict = make_verdict("q", "k", reply, chunks, False, answer=answer, mode="sentences")
    assert verdict.status == "ok" and (verdict.faithfulness, verdict.relevance) == (2, 2)
    assert verdict.review == (NO_CHECKABLE_SENTENCE,)


def test_a_refusal_is_relevant_unless_one_chunk_holds_the_question() -> None:
    """Issue 33: the five chunks of an out-of-scope question together share its words (the
    product's name, "router", "satellite"), but no one chunk answers it: a refusal is right.
    One chunk that holds the question makes the same refusal irrelevant."""
    question = "Does the Kestrel router work with Starlink satellite internet?"
    spread = [
        "The Kestrel router supports up to 4 satellites.",
        "Connect the internet cable to the WAN port.",
        "Starlink dishes are sold separately by their maker.",
    ]
    refusal = "I couldn't find that in the documentation."
    assert judge_lexically(question, spread, refusal)["relevance"] == 2
    holding = [*spread, "The Kestrel router works with Starlink satellite internet."]
    wrong = judge_lexically(question, holding, refusal)
    assert wrong["relevance"] == 0
    # The note names the phrase and where it matched.
    assert (
        wrong["note"] == 'refusal "couldn\'t find" (sentence 1), but a chunk holds 0.78 of question'
    )
