"""The Ollama backend at the HTTP level: real request and response shapes, every failure."""

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenacity import wait_none

from judge.config import Config
from judge.config_backends import OllamaConfig
from judge.errors import BackendUnavailable
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.backends.ollama import OllamaBackend
from judge.judging.cache import VerdictCache
from judge.judging.items import build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from judge.judging.verdict import verdict_schema
from tests.conftest import REPO

Tiny = Callable[..., Config]
TAGS = {
    "models": [
        {
            "name": "gemma3:12b",
            "model": "gemma3:12b",
            "modified_at": "2026-11-01T10:00:00.000000Z",
            "size": 8149190253,
            "digest": "f4031aab637d1ffa37b42570452ae0e4fad0314754d17ded67322e4b95836f8a",
            "details": {
                "format": "gguf",
                "family": "gemma3",
                "parameter_size": "12.2B",
                "quantization_level": "Q4_K_M",
            },
        }
    ]
}
GOOD = {
    "evidence": "プレミアムプランは月額400円、年額3,800円です。",
    "faithfulness": 2,
    "relevance": 2,
    "note": "price quoted from context",
}


def chat_response(
    content: Any, done_reason: str = "stop", prompt_eval_count: int = 812
) -> httpx.Response:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return httpx.Response(
        200,
        json={
            "model": "gemma3:12b",
            "created_at": "2026-11-29T12:00:00.000Z",
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": done_reason,
            "total_duration": 5_191_566_416,
            "load_duration": 2_154_458,
            "prompt_eval_count": prompt_eval_count,
            "prompt_eval_duration": 383_809_000,
            "eval_count": 64,
            "eval_duration": 4_709_213_000,
        },
    )


class FakeOllama:
    """A scripted Ollama: /api/version, /api/tags, and /api/chat answered by ``chat``."""

    def __init__(
        self, chat: Callable[[dict[str, Any]], httpx.Response], version: str = "0.13.0"
    ) -> None:
        self.chat = chat
        self.version = version
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/version":
            return httpx.Response(200, json={"version": self.version})
        if request.url.path == "/api/tags":
            return httpx.Response(200, json=TAGS)
        assert request.url.path == "/api/chat" and request.method == "POST"
        body = json.loads(request.content)
        self.requests.append(body)
        return self.chat(body)


def _backend(fake: FakeOllama, **config: Any) -> OllamaBackend:
    return OllamaBackend(OllamaConfig(**config), transport=httpx.MockTransport(fake))


def _judge_one(tiny: Tiny, tmp_path: Path, backend: OllamaBackend, max_attempts: int = 3):  # type: ignore[no-untyped-def]
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    items = build_items(golden, load_run(config.data.run, golden), 5)[:1]
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        outcome = judge_items(
            items,
            backend,
            load_prompt(REPO / "prompts" / "judge.v1.md"),
            cache,
            max_attempts=max_attempts,
            retry_wait=wait_none(),
        )
    finally:
        cache.close()
    return outcome.verdicts["q1"]


def test_request_shape(tiny: Tiny, tmp_path: Path) -> None:
    fake = FakeOllama(lambda body: chat_response(GOOD))
    backend = _backend(fake, model="gemma3:12b", num_ctx=8192, num_predict=320, seed=42)
    verdict = _judge_one(tiny, tmp_path, backend)
    assert verdict.status == "ok" and verdict.match is not None and verdict.match.kind == "exact"
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (812, 64)
    (body,) = fake.requests
    assert body["model"] == "gemma3:12b"
    assert body["stream"] is False
    assert body["options"] == {"temperature": 0, "seed": 42, "num_ctx": 8192, "num_predict": 320}
    assert body["format"] == verdict_schema()
    assert body["truncate"] is False and body["shift"] is False
    (message,) = body["messages"]
    assert message["role"] == "user"  # Gemma has no system role: one user turn
    assert '"年額3,800円です。"' in message["content"]  # the answer, JSON-encoded
    assert backend.identity.digest == TAGS["models"][0]["digest"]
    assert backend.identity.server_version == "0.13.0"


def test_old_server_gets_no_truncate_flag_and_full_context_means_truncated(
    tiny: Tiny, tmp_path: Path
) -> None:
    fake = FakeOllama(lambda body: chat_response(GOOD, prompt_eval_count=2048), version="0.11.4")
    verdict = _judge_one(tiny, tmp_path, _backend(fake, num_ctx=2048))
    assert "truncate" not in fake.requests[0]
    assert verdict.status == "truncated" and verdict.faithfulness is None
    assert "used 2112 tokens of num_ctx 2048" in (verdict.error or "")


def test_old_server_reply_that_ran_into_the_context_limit_is_truncated(
    tiny: Tiny, tmp_path: Path
) -> None:
    # 2000 prompt + 64 reply tokens >= 2048: the window shifted during generation, which drops
    # the instructions on servers that cannot be told not to.
    fake = FakeOllama(lambda body: chat_response(GOOD, prompt_eval_count=2000), version="0.11.4")
    assert _judge_one(tiny, tmp_path, _backend(fake, num_ctx=2048)).status == "truncated"
    fine = FakeOllama(lambda body: chat_response(GOOD, prompt_eval_count=1900), version="0.11.4")
    assert _judge_one(tiny, tmp_path / "b", _backend(fine, num_ctx=2048)).status == "ok"


def test_context_overflow_400_is_truncated_not_retried(tiny: Tiny, tmp_path: Path) -> None:
    fake = FakeOllama(
        lambda body: httpx.Response(
            400, json={"error": "the input length exceeds the context length"}
        )
    )
    verdict = _judge_one(tiny, tmp_path, _backend(fake))
    assert verdict.status == "truncated" and len(fake.requests) == 1


def test_404_model_gone_stops_the_run(tiny: Tiny, tmp_path: Path) -> None:
    fake = FakeOllama(
        lambda body: httpx.Response(404, json={"error": "model 'gemma3:12b' not found"})
    )
    with pytest.raises(BackendUnavailable, match="run 'ollama pull gemma3:12b'"):
        _judge_one(tiny, tmp_path, _backend(fake))


def test_500_is_retried_then_reported(tiny: Tiny, tmp_path: Path) -> None:
    fake = FakeOllama(
        lambda body: httpx.Response(500, json={"error": "llama runner process has terminated"})
    )
    verdict = _judge_one(tiny, tmp_path, _backend(fake), max_attempts=3)
    assert verdict.status == "backend_error" and len(fake.requests) == 3
    assert (
        verdict.error == "Ollama HTTP 500: llama runner process has terminated (after 3 attempts)"
    )


def test_503_queue_full_then_success(tiny: Tiny, tmp_path: Path) -> None:
    replies = iter(
        [
            httpx.Response(
                503,
                json={"error": "server busy, please try again.  maximum pending requests exceeded"},
            )
        ]
    )
    fake = FakeOllama(lambda body: next(replies, None) or chat_response(GOOD))
    verdict = _judge_one(tiny, tmp_path, _backend(fake))
    assert verdict.status == "ok" and len(fake.requests) == 2


def test_a_timeout_is_retried(tiny: Tiny, tmp_path: Path) -> None:
    replies = iter([None])

    def chat(body: dict[str, Any]) -> httpx.Response:
        if next(replies, "answer") is None:
            raise httpx.ReadTimeout("timed out")
        return chat_response(GOOD)

    fake = FakeOllama(chat)
    verdict = _judge_one(tiny, tmp_path, _backend(fake, timeout_s=1), max_attempts=2)
    assert verdict.status == "ok" and len(fake.requests) == 2


def test_a_server_that_never_answers_ends_the_run_instead_of_hanging(
    tiny: Tiny, tmp_path: Path
) -> None:
    def chat(body: dict[str, Any]) -> httpx.Response:
        raise httpx.ReadTimeout("timed out")

    fake = FakeOllama(chat)
    with pytest.raises(BackendUnavailable, match=r"no reply from Ollama within 1 s"):
        _judge_one(tiny, tmp_path, _backend(fake, timeout_s=1), max_attempts=2)
    assert len(fake.requests) == 2  # bounded: attempts x timeout, then exit 3


def test_dropped_connection_that_persists_ends_the_run(tiny: Tiny, tmp_path: Path) -> None:
    def chat(body: dict[str, Any]) -> httpx.Response:
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.")

    with pytest.raises(BackendUnavailable, match="stopped answering"):
        _judge_one(tiny, tmp_path, _backend(FakeOllama(chat)), max_attempts=2)


def test_length_and_malformed_replies_are_parse_errors(tiny: Tiny, tmp_path: Path) -> None:
    cut = FakeOllama(
        lambda body: chat_response('{"evidence": "プレミアムプランは月額', done_reason="length")
    )
    verdict = _judge_one(tiny, tmp_path, _backend(cut))
    assert verdict.status == "parse_error" and "cut off" in (verdict.error or "")
    prose = FakeOllama(lambda body: chat_response("Sure! The answer is faithful."))
    verdict = _judge_one(tiny, tmp_path / "x", _backend(prose))
    assert verdict.status == "parse_error" and verdict.raw_reply == "Sure! The answer is faithful."


def test_refused_connection_at_preflight_says_what_to_run() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(BackendUnavailable) as caught:
        OllamaBackend(
            OllamaConfig(host="http://127.0.0.1:11434"), transport=httpx.MockTransport(refuse)
        )
    assert str(caught.value) == (
        "Ollama not reachable at http://127.0.0.1:11434 ([Errno 111] Connection refused); "
        "start it with 'ollama serve', then 'ollama pull gemma3:12b'"
    )


def test_model_not_pulled_at_preflight() -> None:
    fake = FakeOllama(lambda body: chat_response(GOOD))
    with pytest.raises(
        BackendUnavailable, match=r"model 'gemma3:27b' is not pulled .*run 'ollama pull gemma3:27b'"
    ):
        _backend(fake, model="gemma3:27b")


class OddOllama(FakeOllama):
    """An Ollama (or something else on its port) whose preflight replies have the wrong shape."""

    def __init__(self, version: Any = None, tags: Any = None) -> None:
        super().__init__(lambda body: chat_response(GOOD))
        self.version_reply = {"version": "0.13.0"} if version is None else version
        self.tags_reply = TAGS if tags is None else tags

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/version":
            return httpx.Response(200, json=self.version_reply)
        if request.url.path == "/api/tags":
            return httpx.Response(200, json=self.tags_reply)
        return super().__call__(request)


@pytest.mark.parametrize(
    ("fake", "said"),
    [
        (OddOllama(version=[]), "/api/version answered [], not a version like"),
        (OddOllama(version={"version": 5}), "/api/version answered {'version': 5}, not a version"),
        (OddOllama(version={"version": ""}), "/api/version answered {'version': ''}"),
        (OddOllama(version="0.13.0"), "/api/version answered '0.13.0', not a version like"),
        (OddOllama(version={}), "/api/version answered {}"),
        (OddOllama(tags=[]), "argument after ** must be a mapping"),
        (OddOllama(tags={"models": 5}), "validation error for ListResponse"),
    ],
    ids=[
        "version-list",
        "version-int",
        "version-empty",
        "version-bare",
        "no-version",
        "tags-list",
        "tags-int",
    ],
)
def test_a_preflight_reply_of_the_wrong_shape_is_unavailable(fake: OddOllama, said: str) -> None:
    with pytest.raises(BackendUnavailable) as caught:
        _backend(fake)
    message = str(caught.value)
    assert message.startswith("http://127.0.0.1:11434 does not answer like Ollama (")
    assert said in message and "is judge.ollama.host the Ollama server?" in message
    assert "\n" not in message


def test_an_odd_version_string_is_an_old_server() -> None:
    backend = _backend(OddOllama(version={"version": "0.²"}))
    assert backend.truncate_flag is False and backend.identity.server_version == "0.²"


class _Trickle(httpx.SyncByteStream):
    """A body that arrives a few bytes at a time, each piece well within any read timeout."""

    def __init__(self, data: bytes, pause_s: float) -> None:
        self.data, self.pause_s = data, pause_s

    def __iter__(self):  # type: ignore[no-untyped-def]
        import time

        for i in range(0, len(self.data), 8):
            time.sleep(self.pause_s)
            yield self.data[i : i + 8]


def test_a_reply_that_trickles_in_is_cut_at_the_deadline(tiny: Tiny, tmp_path: Path) -> None:
    """timeout_s bounds the whole request, not each read (the socket-level cut of the same
    deadline is in tests/hostile/test_faults.py, against a real trickling server)."""
    import time

    def chat(body: dict[str, Any]) -> httpx.Response:
        data = json.dumps(chat_response(GOOD).json()).encode()
        data += b" " * 8000  # JSON's trailing space: the whole trickle is a minute long
        return httpx.Response(200, stream=_Trickle(data, 0.05))

    fake = FakeOllama(chat)
    start = time.monotonic()
    with pytest.raises(BackendUnavailable, match=r"no reply from Ollama within 0.3 s"):
        _judge_one(tiny, tmp_path, _backend(fake, timeout_s=0.3), max_attempts=2)
    assert len(fake.requests) == 2
    assert time.monotonic() - start < 2 * 0.3 + 2 + 10  # two deadlines and a retry's wait, plus
    # a loaded machine's slack: far below the two whole trickles the deadline cuts


def test_every_request_has_a_deadline_and_its_own_connection(tiny: Tiny, tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def transport(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return FakeOllama(lambda body: chat_response(GOOD))(request)

    backend = OllamaBackend(OllamaConfig(timeout_s=7), transport=httpx.MockTransport(transport))
    verdict = _judge_one(tiny, tmp_path, backend)
    assert verdict.status == "ok"
    # The preflight (the ollama library's client included) and the chat request alike.
    assert [r.url.path for r in seen] == ["/api/version", "/api/tags", "/api/chat"]
    assert all(r.headers["connection"] == "close" for r in seen)
    assert [r.extensions["timeout"]["read"] for r in seen] == [5.0, 5.0, 7.0]
    assert all("trace" in r.extensions for r in seen)


def _with_logprobs(payload: dict[str, Any], top: dict[str, dict[str, float]]) -> httpx.Response:
    """A /api/chat response carrying Ollama's ``logprobs`` (0.12.11+): the reply in tokens as
    a Gemma tokenizer splits such JSON (key, colon, space, digit), with ``top`` giving the
    candidates at each axis's score token."""
    response = chat_response(payload)
    body = response.json()
    text = body["message"]["content"]
    entries = []
    position = 0
    for axis in ("faithfulness", "relevance"):
        key = f'"{axis}": '
        start = text.index(key, position) + len(key)
        entries.append({"token": text[position:start], "logprob": -0.01, "top_logprobs": []})
        digit = text[start]
        candidates = [{"token": t, "logprob": lp} for t, lp in top[axis].items()]
        entries.append({"token": digit, "logprob": top[axis][digit], "top_logprobs": candidates})
        position = start + 1
    entries.append({"token": text[position:], "logprob": -0.01, "top_logprobs": []})
    assert "".join(e["token"] for e in entries) == text
    return httpx.Response(200, json=body | {"logprobs": entries})


def test_score_probabilities_from_ollama_logprobs(tiny: Tiny, tmp_path: Path) -> None:
    ln = math.log
    top = {
        "faithfulness": {"2": ln(0.6), "1": ln(0.3), "0": ln(0.05), "The": ln(0.05)},
        "relevance": {"2": ln(0.9), " 2": ln(0.05), "1": ln(0.05)},
    }
    fake = FakeOllama(lambda body: _with_logprobs(GOOD, top))
    backend = _backend(fake)
    verdict = _judge_one(tiny, tmp_path, backend)
    (body,) = fake.requests
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    assert verdict.score_probabilities is not None
    # Renormalised over the three scores ("The" is not one; " 2" counts for 2).
    f0, f1, f2 = verdict.score_probabilities["faithfulness"]
    assert (f0, f1, f2) == pytest.approx((0.05 / 0.95, 0.3 / 0.95, 0.6 / 0.95))
    assert verdict.score_probabilities["relevance"] == pytest.approx((0.0, 0.05, 0.95))
    assert verdict.confidence == pytest.approx(0.6 / 0.95)  # the lower of the two chosen
    assert backend.identity.options["score_probabilities"] is True


def test_an_older_ollama_is_not_asked_for_logprobs(tiny: Tiny, tmp_path: Path) -> None:
    fake = FakeOllama(lambda body: chat_response(GOOD), version="0.12.10")
    backend = _backend(fake)
    verdict = _judge_one(tiny, tmp_path, backend)
    (body,) = fake.requests
    assert "logprobs" not in body and "top_logprobs" not in body
    assert verdict.status == "ok" and verdict.score_probabilities is None
    assert verdict.confidence is None
    assert backend.identity.options["score_probabilities"] is False
