"""HTTP for the server backends (judge.judging.backends.http): the error text of a failed
response in Ollama's, OpenAI's or any shape; one timed POST whose transport failures become
ConnectionLost with a message that says what to raise; and a read timeout that is a deadline
for the whole request, however slowly the bytes arrive (a mock transport, and a real socket
on loopback whose headers trickle)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from judge.errors import ConnectionLost
from judge.judging.backends.http import deadline_hooks, error_text, http_client, post_json
from tests import loopback_ollama

SERVER, SETTING = "Ollama", "judge.ollama.timeout_s"


@pytest.mark.parametrize(
    ("response", "text"),
    [
        (httpx.Response(404, json={"error": "model 'x' not found"}), "model 'x' not found"),
        (
            httpx.Response(400, json={"error": {"message": "context too long", "type": "x"}}),
            "context too long",
        ),
        (httpx.Response(400, json={"error": {"code": 7}}), "{'code': 7}"),
        (httpx.Response(422, json={"detail": "field required"}), "field required"),
        (httpx.Response(500, json=[1, 2]), "[1, 2]"),
        (httpx.Response(502, text="<html>Bad Gateway</html>"), "<html>Bad Gateway</html>"),
        (httpx.Response(502, text="x" * 400), "x" * 300),
        (httpx.Response(500, json={"detail": "d" * 400}), "d" * 300),
    ],
    ids=[
        "ollama",
        "openai",
        "error-object-without-message",
        "detail",
        "other-json",
        "not-json",
        "long-text-cut",
        "long-detail-cut",
    ],
)
def test_the_error_text_of_a_failed_response(response: httpx.Response, text: str) -> None:
    assert error_text(response) == text


def _client(
    handler: Callable[[httpx.Request], httpx.Response], timeout: float | None
) -> httpx.Client:
    return http_client(
        base_url="http://judge.test", timeout=timeout, transport=httpx.MockTransport(handler)
    )


def test_post_json_returns_the_response_and_its_time() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        time.sleep(0.05)
        return httpx.Response(200, json={"ok": True})

    with _client(answer, 7) as http:
        response, latency = post_json(http, "/api/chat", {"model": "m"}, SERVER, SETTING)
    assert response.json() == {"ok": True}
    assert 0.05 <= latency < 5
    [request] = seen
    assert (request.method, request.url.path) == ("POST", "/api/chat")
    assert json.loads(request.content) == {"model": "m"}
    # Armed with a deadline of its read timeout, on a connection of its own.
    assert request.headers["connection"] == "close"
    assert request.extensions["timeout"]["read"] == 7
    assert callable(request.extensions["trace"])


def test_without_a_read_timeout_there_is_no_deadline() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    with _client(answer, None) as http:
        post_json(http, "/api/chat", {}, SERVER, SETTING)
    assert seen[0].headers["connection"] == "keep-alive"
    assert "trace" not in seen[0].extensions


def _failing(exc: Exception) -> Callable[[httpx.Request], httpx.Response]:
    def fail(request: httpx.Request) -> httpx.Response:
        raise exc

    return fail


def test_a_failed_connection_is_a_lost_connection() -> None:
    refused = _failing(httpx.ConnectError("[Errno 111] Connection refused"))
    with _client(refused, 7) as http, pytest.raises(ConnectionLost) as caught:
        post_json(http, "/api/chat", {}, SERVER, SETTING)
    assert str(caught.value) == (
        "connection to Ollama failed: ConnectError: [Errno 111] Connection refused"
    )


def test_a_timeout_says_which_setting_to_raise() -> None:
    timed_out = _failing(httpx.ReadTimeout("timed out"))
    with _client(timed_out, 7.5) as http, pytest.raises(ConnectionLost) as caught:
        post_json(http, "/api/chat", {}, SERVER, SETTING)
    assert str(caught.value) == (
        "no reply from Ollama within 7.5 s (ReadTimeout); raise judge.ollama.timeout_s if the "
        "server is busy"
    )


class _Trickle(httpx.SyncByteStream):
    """A whole body, 8 bytes every ``pause_s`` seconds: each read is in time, the body not."""

    def __init__(self, data: bytes, pause_s: float) -> None:
        self.data, self.pause_s = data, pause_s

    def __iter__(self) -> Iterator[bytes]:
        for i in range(0, len(self.data), 8):
            time.sleep(self.pause_s)
            yield self.data[i : i + 8]


def test_a_body_that_trickles_in_is_cut_at_the_deadline() -> None:
    body = json.dumps({"message": {"content": "x" * 8000}}).encode()  # 1,000 reads, 50 s

    def trickle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Trickle(body, 0.05))

    start = time.monotonic()
    with _client(trickle, 0.3) as http, pytest.raises(ConnectionLost) as caught:
        post_json(http, "/api/chat", {}, SERVER, SETTING)
    # the deadline, not the whole trickle (a wide bound: it must hold on a loaded machine)
    assert time.monotonic() - start < 15.0
    assert str(caught.value).startswith("no reply from Ollama within 0.3 s (ReadTimeout)")
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
    assert str(caught.value.__cause__) == "no complete reply within 0.3 s (wall clock)"


def test_a_body_in_time_is_read_whole() -> None:
    body = json.dumps({"message": {"content": "ok"}}).encode()

    def quick(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Trickle(body, 0.0))

    with _client(quick, 5) as http:
        response, _ = post_json(http, "/api/chat", {}, SERVER, SETTING)
    assert response.json() == {"message": {"content": "ok"}}


def test_headers_that_trickle_on_a_real_socket_are_cut_at_the_deadline() -> None:
    # One byte of the headers every 0.2 s: no read ever times out, the socket is shut at 0.5 s.
    server = loopback_ollama.start(0.0, 1, "trickle-headers", trickle_s=0.2, max_s=60)
    host, port = server.server_address[:2]
    try:
        with http_client(base_url=f"http://{host!s}:{port}", timeout=0.5) as http:
            start = time.monotonic()
            with pytest.raises(ConnectionLost) as caught:
                post_json(http, "/api/chat", {"model": "m"}, SERVER, SETTING)
            elapsed = time.monotonic() - start
    finally:
        server.stop()
    assert 0.4 < elapsed < 20  # the deadline, not the minute the server trickles (wide: load)
    message = str(caught.value)
    assert message.startswith("no reply from Ollama within 0.5 s (")
    assert message.endswith("); raise judge.ollama.timeout_s if the server is busy")


def test_the_hooks_arm_any_client_that_takes_them() -> None:
    # The ollama library builds its own httpx client: given the hooks, its requests (a GET
    # here) get the same deadline and connection of their own.
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"models": []})

    transport = httpx.MockTransport(answer)
    with httpx.Client(event_hooks=deadline_hooks(), timeout=2, transport=transport) as client:
        assert client.get("http://judge.test/api/tags").json() == {"models": []}
    assert seen[0].headers["connection"] == "close"
    assert callable(seen[0].extensions["trace"])
