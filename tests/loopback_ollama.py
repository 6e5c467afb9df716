"""A small server on loopback that speaks Ollama's API and answers after a fixed delay.

Used by the interrupt tests and by the concurrency benchmark: ``slots`` requests are served at
once (like OLLAMA_NUM_PARALLEL), the rest wait, as in Ollama's queue. It also speaks enough of
the OpenAI API (``/v1/models``, ``/v1/chat/completions``) for the OpenAI-compatible backend.

``fault`` makes every chat request misbehave (the preflight is always answered properly), for
the fault tests in ``tests/hostile/test_faults.py``:

- ``trickle-body``: the headers at once, then the body one byte every ``trickle_s`` seconds;
- ``trickle-headers``: the headers themselves one byte every ``trickle_s`` seconds;
- ``stall-body``: the headers and the first byte of the body, then silence;
- ``close-mid-body``: the headers and half the body, then the connection is closed.

A misbehaving reply is bounded: it stops after ``max_bytes`` bytes or ``max_s`` seconds, when
the client goes away, or when the server is stopped (``server.stop()``).

For the endpoint pool (``tests/judging/backends/test_pool.py``): ``digest`` is the model digest
it reports, ``fail_after`` makes it a server that crashes mid-run (every chat request after
that many is answered by closing the connection, no reply), and ``peak_in_flight`` is the
most chat requests it ever had at once.

A request whose client has gone away (its deadline cut the connection, or its process was
stopped) is no longer in flight: the client may already have sent its next one, and counting
both would make ``peak_in_flight`` exceed what the client ever had at once. Such a request is
counted out as soon as its end of the connection is seen closed (by its own handler, or when
the next request arrives, whichever looks first) and dropped unanswered, as Ollama cancels a
request whose client went away.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "bench:1"
VERDICT = json.dumps({"evidence": "", "faithfulness": 2, "relevance": 2, "note": "ok"})
FAULTS = ("trickle-body", "trickle-headers", "stall-body", "close-mid-body")
#: How often a request waiting for a free slot looks whether its client is still there.
POLL_S = 0.01


def client_gone(connection: socket.socket, wait_s: float = 0.0) -> bool:
    """Whether the client closes its end of ``connection`` within ``wait_s`` seconds (an HTTP
    client sends nothing more while it waits for its reply, so readable means closed, unless
    it sent more bytes: then it is still there)."""
    with selectors.DefaultSelector() as selector:
        selector.register(connection, selectors.EVENT_READ)
        if not selector.select(wait_s):
            return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:  # reset by the client
        return True


class Loopback(ThreadingHTTPServer):
    daemon_threads = True
    chat_requests = 0
    """How many chat requests arrived (each attempt of the judge is one)."""
    in_flight = 0
    peak_in_flight = 0
    """The most chat requests being handled at once (arrived, not yet answered, their client
    still waiting)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.stopping = threading.Event()
        self._count_lock = threading.Lock()
        self._flying: set[socket.socket] = set()  # the connections of the requests in flight

    def count_chat(self) -> int:
        """Count one more chat request; its number (1 for the first)."""
        with self._count_lock:
            self.chat_requests += 1
            return self.chat_requests

    @contextlib.contextmanager
    def handling(self, connection: socket.socket) -> Iterator[None]:
        """Count the chat request on ``connection`` in flight while it is handled and its
        client waits. Those whose client has gone are counted out first: a client closes a
        connection before it sends its next request, so the closing is always seen by then,
        even when the handler of the abandoned request has not yet run to notice it."""
        with self._count_lock:
            self._flying = {c for c in self._flying if not client_gone(c)} | {connection}
            self.in_flight = len(self._flying)
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._count_lock:
                self._flying.discard(connection)
                self.in_flight = len(self._flying)

    def stop(self) -> None:
        """Stop serving; replies being trickled end within ``trickle_s``."""
        self.stopping.set()
        self.shutdown()
        self.server_close()


def _ollama_reply() -> dict[str, Any]:
    return {
        "message": {"role": "assistant", "content": VERDICT},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 100,
        "eval_count": 20,
    }


def _openai_reply() -> dict[str, Any]:
    return {
        "choices": [
            {"message": {"role": "assistant", "content": VERDICT}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    }


def start(
    delay_s: float,
    slots: int,
    fault: str | None = None,
    *,
    trickle_s: float = 1.0,
    max_bytes: int = 60,
    max_s: float = 60.0,
    digest: str = "d" * 64,
    fail_after: int | None = None,
) -> Loopback:
    """Start the server in a daemon thread; ``server.server_address[1]`` is its port."""
    if fault is not None and fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}; one of {FAULTS}")
    gate = threading.Semaphore(slots)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; with Nagle on, the second waits ~40 ms for a
        # delayed ACK, which would be charged to the client.
        disable_nagle_algorithm = True
        server: Loopback

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/api/version":
                self._send({"version": "0.13.0"})
            elif self.path == "/v1/models":
                self._send({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            else:
                self._send(
                    {
                        "models": [
                            {
                                "name": MODEL,
                                "model": MODEL,
                                "digest": digest,
                                "size": 1,
                                "modified_at": "2026-01-01T00:00:00Z",
                            }
                        ]
                    }
                )

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            number = self.server.count_chat()
            with self.server.handling(self.connection):
                reply = self._answer(number)
            # Out of flight before the reply is written: the client may send its next request
            # as soon as it has read this one, before this thread runs again, and that request
            # must not be counted as a second one in flight (peak_in_flight would be one high).
            if reply is not None:
                with contextlib.suppress(OSError):  # the client went away (a test stopped it)
                    self._send(reply)

        def _answer(self, number: int) -> dict[str, Any] | None:
            """The reply to send, or None when a fault was acted out (or the server
            "crashed") instead."""
            reply = _openai_reply() if self.path.startswith("/v1/") else _ollama_reply()
            if fault is not None:
                self._misbehave(json.dumps(reply).encode())
                return None
            if fail_after is not None and number > fail_after:
                self.close_connection = True  # crashed: the connection closes, no reply
                return None
            if not self._work():
                self.close_connection = True  # its client went away: nobody to answer
                return None
            return reply

        def _work(self) -> bool:
            """Wait for a free slot, then ``delay_s``, as a busy server does; False as soon as
            the client has gone away (its slot is freed at once)."""
            while not gate.acquire(timeout=POLL_S):
                if client_gone(self.connection):
                    return False
            try:
                ends = time.monotonic() + delay_s
                if client_gone(self.connection, delay_s):
                    return False
                # Woken early by bytes that are not the end of the connection: work on.
                time.sleep(max(0.0, ends - time.monotonic()))
                return True
            finally:
                gate.release()

        def _misbehave(self, data: bytes) -> None:
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n"
            ).encode()
            self.close_connection = True
            try:
                if fault == "trickle-headers":
                    self._trickle(head)
                elif fault == "trickle-body":
                    self.wfile.write(head)
                    self._trickle(data)
                elif fault == "stall-body":
                    self.wfile.write(head + data[:1])
                    self.wfile.flush()
                    self.server.stopping.wait(max_s)
                else:  # close-mid-body: the handler returns, the server closes the connection
                    self.wfile.write(head + data[: len(data) // 2])
            except OSError:  # the client went away
                pass

        def _trickle(self, data: bytes) -> None:
            started = time.monotonic()
            for i in range(min(len(data), max_bytes)):
                if time.monotonic() - started > max_s:
                    return
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                if self.server.stopping.wait(trickle_s):
                    return

    server = Loopback(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":  # for tests that need the server in another process
    import sys

    server = start(float(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:4])
    print(server.server_address[1], flush=True)
    threading.Event().wait()
