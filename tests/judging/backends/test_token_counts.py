"""Token counts as each backend reports them, read from real response shapes: Ollama's
``prompt_eval_count`` / ``eval_count`` (``omitempty``: absent when not counted), OpenAI's
``usage``; a count that is absent or not an integer is "not reported" (None), never 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.judging.backends.base import token_count
from judge.judging.backends.openai import completion_reply
from tests.judging.backends.test_ollama import (
    GOOD,
    FakeOllama,
    Tiny,
    _backend,
    _judge_one,
    chat_response,
)
from tests.judging.backends.test_openai import completion


@pytest.mark.parametrize(
    ("value", "count"),
    [(812, 812), (0, 0), (None, None), ("812", None), (812.0, None), (True, None), (-1, None)],
)
def test_a_token_count_is_a_plain_non_negative_integer(value: Any, count: int | None) -> None:
    assert token_count(value) == count


def test_ollama_counts_and_the_request_time_reach_the_verdict(tiny: Tiny, tmp_path: Path) -> None:
    backend = _backend(FakeOllama(lambda body: chat_response(GOOD)), model="gemma3:12b")
    verdict = _judge_one(tiny, tmp_path, backend)
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (812, 64)
    assert verdict.latency_s > 0  # measured around the request, in seconds


def _without_counts(body: dict[str, Any]) -> httpx.Response:
    reply = chat_response(GOOD).json()
    del reply["prompt_eval_count"], reply["eval_count"]  # omitempty: Ollama left them out
    return httpx.Response(200, json=reply)


def test_ollama_without_counts_is_not_reported(tiny: Tiny, tmp_path: Path) -> None:
    backend = _backend(FakeOllama(_without_counts), model="gemma3:12b")
    verdict = _judge_one(tiny, tmp_path, backend)
    assert verdict.status == "ok"
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (None, None)


def test_ollama_with_junk_counts_is_not_reported_and_does_not_crash(
    tiny: Tiny, tmp_path: Path
) -> None:
    def junk(body: dict[str, Any]) -> httpx.Response:
        reply = chat_response(GOOD).json() | {"prompt_eval_count": "812", "eval_count": 6.5}
        return httpx.Response(200, json=reply)

    # An old server (no truncate flag): the counts would be added up against num_ctx.
    backend = _backend(FakeOllama(junk, version="0.11.4"), model="gemma3:12b")
    verdict = _judge_one(tiny, tmp_path, backend)
    assert verdict.status == "ok"
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (None, None)


def test_openai_usage_absent_is_not_reported() -> None:
    body = completion(json.dumps(GOOD)).json()
    assert (completion_reply(body).prompt_tokens, completion_reply(body).completion_tokens) == (
        900,
        40,
    )
    del body["usage"]
    reply = completion_reply(body, 0.7)
    assert (reply.prompt_tokens, reply.completion_tokens, reply.latency_s) == (None, None, 0.7)
