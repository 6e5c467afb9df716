"""The OpenAI-compatible backend: HTTP shapes with a mock, then a real llama.cpp server."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenacity import wait_none

from judge.config import Config
from judge.config_backends import OpenAIConfig
from judge.errors import (
    BackendRequestError,
    BackendUnavailable,
    PromptTooLong,
    TransientBackendError,
)
from judge.judging.backends.openai import (
    CachedOpenAI,
    OpenAIBackend,
    completion_reply,
    error_message,
    openai_identity,
    refusal,
    request_body,
)
from judge.judging.cache import VerdictCache
from judge.judging.grading import judge_fingerprint
from judge.judging.items import build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from judge.judging.types import ContextChunk
from judge.judging.verdict import Reply, verdict_schema
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO
from tests.judging.backends.conftest import LLAMA_SERVER_MODEL

GOOD = {"evidence": "x", "faithfulness": 1, "relevance": 2, "note": "n"}


def completion(content: str, finish: str = "stop") -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1764417600,
            "model": "gemma-3-12b-it",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940},
        },
    )


def make(
    chat: Callable[[dict[str, Any]], httpx.Response], requests: list[dict[str, Any]], **config: Any
) -> OpenAIBackend:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(
                200, json={"object": "list", "data": [{"id": "gemma-3-12b-it", "object": "model"}]}
            )
        requests.append({"body": json.loads(request.content), "headers": dict(request.headers)})
        return chat(requests[-1]["body"])

    return OpenAIBackend(OpenAIConfig(**config), transport=httpx.MockTransport(handler))


def _judge_one(sample_config: Config, backend: OpenAIBackend, tmp_path: Path, qid: str = "q01"):  # type: ignore[no-untyped-def]
    inputs = load_inputs(sample_config)
    item = next(i for i in build_items(inputs.golden, inputs.run, 5) if i.question.id == qid)
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        return judge_items(
            [item],
            backend,
            load_prompt(REPO / "prompts" / "judge.v1.md"),
            cache,
            max_attempts=2,
            retry_wait=wait_none(),
        ).verdicts[qid]
    finally:
        cache.close()


def test_request_shape_json_schema(
    sample_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test")
    requests: list[dict[str, Any]] = []
    backend = make(lambda b: completion(json.dumps(GOOD)), requests, api_key_env="JUDGE_TEST_KEY")
    verdict = _judge_one(sample_config, backend, tmp_path)
    assert verdict.status == "ok" and verdict.prompt_tokens == 900
    body = requests[0]["body"]
    assert body["temperature"] == 0 and body["seed"] == 42 and body["max_tokens"] == 320
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": verdict_schema(), "strict": True},
    }
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert requests[0]["headers"]["authorization"] == "Bearer sk-test"


def test_json_object_mode_and_failures(sample_config: Config, tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []
    backend = make(lambda b: completion(json.dumps(GOOD)), requests, response_format="json_object")
    _judge_one(sample_config, backend, tmp_path)
    assert requests[0]["body"]["response_format"] == {
        "type": "json_object",
        "schema": verdict_schema(),
    }

    too_long = make(
        lambda b: httpx.Response(
            400,
            json={
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
                    "type": "BadRequestError",
                }
            },
        ),
        [],
    )
    assert _judge_one(sample_config, too_long, tmp_path / "a").status == "truncated"

    server_words = make(
        lambda b: httpx.Response(
            400,
            json={
                "error": {
                    "code": 400,
                    "message": "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
        ),
        [],
    )
    assert _judge_one(sample_config, server_words, tmp_path / "s").status == "truncated"

    flaky: list[dict[str, Any]] = []
    broken = make(
        lambda b: httpx.Response(500, json={"error": {"message": "CUDA out of memory"}}), flaky
    )
    verdict = _judge_one(sample_config, broken, tmp_path / "b")
    assert verdict.status == "backend_error" and len(flaky) == 2

    cut = make(lambda b: completion('{"evidence": "x', finish="length"), [])
    assert _judge_one(sample_config, cut, tmp_path / "c").status == "parse_error"


def test_model_not_served() -> None:
    with pytest.raises(
        BackendUnavailable, match=r"model 'gemma-3-27b-it' is not served .*gemma-3-12b-it"
    ):
        make(lambda b: completion("{}"), [], model="gemma-3-27b-it")


def test_identity_and_body_are_known_without_a_server() -> None:
    """The batch path computes them offline: they must be the live backend's own."""
    config = OpenAIConfig(max_tokens=200, seed=7, response_format="json_object")
    live = make(
        lambda b: completion("{}"), [], max_tokens=200, seed=7, response_format="json_object"
    )
    offline = openai_identity(config)
    assert offline == live.identity.model_copy(update={"endpoint": None})
    prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
    assert judge_fingerprint(offline, prompt) == judge_fingerprint(live.identity, prompt)
    assert request_body(config, "p", verdict_schema()) == live.request_body("p", verdict_schema())


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (400, "This model's maximum context length is 8192 tokens.", PromptTooLong),
        (400, "Requested tokens (2100) exceed context window of 2048", PromptTooLong),
        (413, "prompt too long", PromptTooLong),
        (400, "response_format is not supported", BackendRequestError),
        (404, "The model `x` does not exist.", BackendRequestError),
        (429, "rate limited", TransientBackendError),
        (503, "overloaded", TransientBackendError),
        (500, "maximum context length", TransientBackendError),  # a 5xx is never a verdict
    ],
)
def test_an_error_status_means_what_its_words_say(
    status: int, message: str, kind: type[Exception]
) -> None:
    assert type(refusal(status, message)) is kind


def test_completion_reply_reads_text_finish_and_usage_and_refuses_other_shapes() -> None:
    body = completion(json.dumps(GOOD), finish="length").json()
    reply = completion_reply(body, 1.5)
    assert (reply.text, reply.finish_reason, reply.prompt_tokens, reply.completion_tokens) == (
        json.dumps(GOOD),
        "length",
        900,
        40,
    )
    assert reply.latency_s == 1.5 and reply.kind == "reply"
    # Junk usage is no token count (never a crash, never a made-up number).
    body["usage"] = {"prompt_tokens": "900", "completion_tokens": None}
    assert completion_reply(body).prompt_tokens is None
    for bad in (None, [], {"choices": []}, {"choices": [{"message": {"content": 3}}]}):
        with pytest.raises(TransientBackendError, match="malformed response"):
            completion_reply(bad)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"error": {"message": "too long", "type": "BadRequestError", "code": 400}}, "too long"),
        ({"object": "error", "message": "too long", "type": "BadRequestError"}, "too long"),
        ({"error": "too long"}, "too long"),
        ("too long", "too long"),
        ({"detail": "too long"}, "too long"),
    ],
)
def test_error_message_of_every_server_shape(body: object, message: str) -> None:
    assert error_message(body) == message


def test_a_backend_without_server_judges_only_from_the_cache(
    sample_config: Config, tmp_path: Path
) -> None:
    config = OpenAIConfig()
    inputs = load_inputs(sample_config)
    items = build_items(inputs.golden, inputs.run, 5)[:3]
    prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
    offline = CachedOpenAI(config, "nothing listens at http://127.0.0.1:8000/v1")
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        fingerprint = judge_fingerprint(offline.identity, prompt).value
        for item in items[:2]:
            cache.put(fingerprint, item.key, item.question.id, Reply(text=json.dumps(GOOD)))
        outcome = judge_items(items[:2], offline, prompt, cache)
        assert all(v.cached for v in outcome.verdicts.values()) and len(outcome.verdicts) == 2
        with pytest.raises(BackendUnavailable, match=r"nothing listens .* 'judge batch import'"):
            judge_items(items, offline, prompt, cache, retry_wait=wait_none())
    finally:
        cache.close()


# --- a real server on loopback -------------------------------------------------------------


@pytest.mark.slow
def test_against_a_real_llama_cpp_server(
    llama_server: str, sample_config: Config, tmp_path: Path
) -> None:
    config = OpenAIConfig(
        base_url=llama_server,
        model=LLAMA_SERVER_MODEL,
        response_format="json_object",
        max_tokens=160,
    )
    backend = OpenAIBackend(config)
    try:
        verdict = _judge_one(sample_config, backend, tmp_path, "q01")
        # A real reply from a real model through the real HTTP API, parsed and checked.
        assert verdict.status in ("ok", "parse_error"), verdict
        assert (
            verdict.raw_reply and verdict.prompt_tokens is not None and verdict.prompt_tokens > 500
        )
        if verdict.status == "ok":
            assert verdict.faithfulness in (0, 1, 2)
            # The server returns logprobs.content: the score distributions are read from it.
            probabilities = verdict.score_probabilities
            assert probabilities is not None and set(probabilities) == {"faithfulness", "relevance"}
            assert all(sum(p) == pytest.approx(1.0) for p in probabilities.values())
        # A context larger than the server's 2048 tokens is refused and recorded as truncated.
        inputs = load_inputs(sample_config)
        item = build_items(inputs.golden, inputs.run, 5)[0]
        long_chunk = ContextChunk(1, item.context[0].chunk_id, item.context[0].text * 20)
        long_item = item._replace(context=[long_chunk], key="long")
        cache = VerdictCache(tmp_path / "long.sqlite3")
        prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
        outcome = judge_items(
            [long_item], backend, prompt, cache, max_attempts=1, retry_wait=wait_none()
        )
        cache.close()
        verdict = outcome.verdicts[item.question.id]
        assert verdict.status == "truncated", verdict
        assert verdict.raw_reply == ""
    finally:
        backend.close()
