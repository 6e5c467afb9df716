"""Score distributions read at the score tokens of a reply (G-Eval style)."""

import json
import math

import pytest

from judge.judging.confidence import Step, distribution, score_probabilities

ln = math.log


def _steps(tokens: list[str], at: dict[int, dict[str, float]]) -> list[Step]:
    steps, before = [], ""
    for index, token in enumerate(tokens):
        steps.append(Step(before, token, at.get(index, {token: 0.0})))
        before += token
    return steps


def test_the_score_tokens_are_found_however_the_key_is_split() -> None:
    # Evidence quoting the key (escaped inside its string) must not be taken for the score.
    reply = json.dumps(
        {"evidence": 'says "faithfulness": 0', "faithfulness": 2, "relevance": 1, "note": ""},
        ensure_ascii=False,
    )
    assert '\\"faithfulness\\": 0' in reply
    f_at = reply.index('"faithfulness": 2') + len('"faithfulness": ')
    r_at = reply.index('"relevance": 1') + len('"relevance":')  # " 1": the space in the token
    tokens = [
        reply[:20],
        reply[20 : f_at - 3],
        reply[f_at - 3 : f_at],
        reply[f_at],
        reply[f_at + 1 : r_at],
    ]
    tokens += [reply[r_at : r_at + 2], reply[r_at + 2 :]]
    assert "".join(tokens) == reply and tokens[3] == "2" and tokens[5] == " 1"
    probabilities = score_probabilities(
        _steps(tokens, {3: {"2": ln(0.5), "1": ln(0.5)}, 5: {" 1": ln(0.2), " 0": ln(0.6)}})
    )
    assert probabilities == {
        "faithfulness": pytest.approx((0.0, 0.5, 0.5)),
        "relevance": pytest.approx((0.75, 0.25, 0.0)),
    }


def test_no_digit_among_the_candidates_gives_no_distribution() -> None:
    assert distribution({"The": -0.1, "A": -2.0}) is None
    assert distribution({}) is None
    assert distribution({"2": -math.inf}) is None
    assert distribution({"2": -0.1}) == (0.0, 0.0, 1.0)


def test_a_reply_without_probabilities_or_scores_gives_none() -> None:
    assert score_probabilities([]) is None
    assert score_probabilities(_steps(['{"evidence": "2"}'], {})) is None


def test_an_openai_completion_carries_the_score_distributions() -> None:
    # choices[0].logprobs.content as OpenAI (and vLLM) return it with logprobs/top_logprobs.
    from judge.config_backends import OpenAIConfig
    from judge.judging.backends.openai import completion_reply, request_body

    assert request_body(OpenAIConfig(), "p", {})["top_logprobs"] == 5
    assert "logprobs" not in request_body(OpenAIConfig(score_probabilities=False), "p", {})
    text = '{"evidence": "", "faithfulness": 1, "relevance": 2, "note": ""}'
    cut = [text[:33], text[33], text[34:49], text[49], text[50:]]
    assert cut[1] == "1" and cut[3] == "2" and "".join(cut) == text
    tops = {1: {"1": ln(0.7), "2": ln(0.2), "0": ln(0.1)}, 3: {"2": ln(0.99), "1": ln(0.01)}}
    content = [
        {
            "token": token,
            "logprob": tops.get(index, {}).get(token, -0.01),
            "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tops.get(index, {}).items()],
        }
        for index, token in enumerate(cut)
    ]
    body = {
        "choices": [
            {
                "message": {"content": text},
                "finish_reason": "stop",
                "logprobs": {"content": content},
            }
        ]
    }
    reply = completion_reply(body)
    assert reply.score_probabilities == {
        "faithfulness": pytest.approx((0.1, 0.7, 0.2)),
        "relevance": pytest.approx((0.0, 0.01, 0.99)),
    }
    without = completion_reply({"choices": [{"message": {"content": text}, "logprobs": None}]})
    assert without.score_probabilities is None
