"""HTTP for the judge backends that talk to a server (``ollama``, ``openai``): a client whose
timeouts are deadlines for a whole request, one timed POST, and the error text of a failed
response. Apart from ``judge.judging.backends`` so that a command that judges nothing over HTTP
(the lexical or embedded judge, ``judge report``) never imports httpx.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from judge.errors import ConnectionLost


def error_text(response: httpx.Response) -> str:
    """The error message of a failed HTTP response, in Ollama's ({"error": "..."}) or
    OpenAI's ({"error": {"message": ...}}) shape, or its raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message", error))
    if error is not None:
        return str(error)
    detail = body.get("detail") if isinstance(body, dict) else None
    return str(detail if detail is not None else body)[:300]


# --- a wall-clock deadline for every request ------------------------------------------------------

_DEADLINE = "judge.deadline"


def _cut(sock: socket.socket) -> None:
    """End every read and write blocked on ``sock`` (they see the connection closed)."""
    with contextlib.suppress(OSError):  # already closed: nothing is blocked on it
        # socket.socket's own method: an SSLSocket's would also drop its TLS state, under the
        # feet of the thread reading it.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Deadline:
    """One request's deadline: ``seconds`` after it starts, its connection is cut.

    httpx's timeouts bound each read, so a server that sends one byte a second never trips
    them. Here a timer shuts the request's socket down at the deadline (caught as it connects,
    through httpcore's ``trace`` extension): whatever phase the request is in (sending, waiting
    for the headers, reading the body) it ends at once, with an error. After the deadline no
    body is accepted, even one that looks complete.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ends_at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._expired = False
        self._finished = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.name = "judge-request-deadline"
        self._timer.daemon = True
        self._timer.start()

    @property
    def passed(self) -> bool:
        return self._expired or time.monotonic() >= self._ends_at

    def tracer(self, previous: Any) -> Callable[[str, dict[str, Any]], None]:
        """An httpcore ``trace`` callback catching the sockets the request connects with (a
        TCP connection, then its TLS wrapper), chained to ``previous``."""

        def trace(event: str, info: dict[str, Any]) -> None:
            if callable(previous):
                previous(event, info)
            get_extra_info = getattr(info.get("return_value"), "get_extra_info", None)
            sock = get_extra_info("socket") if callable(get_extra_info) else None
            if isinstance(sock, socket.socket):
                with self._lock:
                    if self._finished:
                        return
                    self._sockets.append(sock)
                    if self._expired:  # connected after the deadline
                        _cut(sock)

        return trace

    def _expire(self) -> None:
        with self._lock:
            if self._finished:
                return
            self._expired = True
            for sock in self._sockets:
                _cut(sock)

    def finish(self) -> None:
        """The request is over (its response closed, or it failed): disarm."""
        with self._lock:
            self._finished = True
            self._sockets.clear()
        self._timer.cancel()

    def timeout(self, request: httpx.Request) -> httpx.ReadTimeout:
        return httpx.ReadTimeout(
            f"no complete reply within {self.seconds:g} s (wall clock)", request=request
        )


class _BodyWithDeadline(httpx.SyncByteStream):
    """A response body read under its request's deadline."""

    def __init__(
        self, inner: httpx.SyncByteStream, deadline: _Deadline, request: httpx.Request
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                if self._deadline.passed:  # a trickle: each read returns in time, not the body
                    raise self._deadline.timeout(self._request)
                yield chunk
        except httpx.TransportError as exc:
            if self._deadline.passed and not isinstance(exc, httpx.TimeoutException):
                raise self._deadline.timeout(self._request) from exc  # the deadline's own cut
            raise
        if self._deadline.passed:  # cut: a body ended by closing the connection is not whole
            raise self._deadline.timeout(self._request)

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._deadline.finish()


def _arm_deadline(request: httpx.Request) -> None:
    seconds = request.extensions.get("timeout", {}).get("read")
    if seconds is None:
        return
    deadline = _Deadline(float(seconds))
    request.extensions["trace"] = deadline.tracer(request.extensions.get("trace"))
    request.extensions[_DEADLINE] = deadline
    # One connection per request: a reused connection would be connected already, and its
    # socket out of the deadline's reach while the headers arrive. (A judge request takes
    # seconds; a new connection costs a millisecond on a LAN.)
    request.headers["Connection"] = "close"


def _read_under_deadline(response: httpx.Response) -> None:
    deadline = response.request.extensions.get(_DEADLINE)
    if isinstance(deadline, _Deadline) and isinstance(response.stream, httpx.SyncByteStream):
        response.stream = _BodyWithDeadline(response.stream, deadline, response.request)


def _disarm(request: httpx.Request) -> None:
    deadline = request.extensions.get(_DEADLINE)
    if isinstance(deadline, _Deadline):
        deadline.finish()


def deadline_hooks() -> dict[str, list[Callable[..., Any]]]:
    """httpx ``event_hooks`` that make each request's read timeout a deadline for the whole
    request: sending it, the headers and the whole body, however slowly the bytes arrive.

    Every HTTP client of a backend is built with them (``http_client``, and the ``ollama``
    library's client through its httpx keyword arguments). A request past its deadline fails
    with ``httpx.ReadTimeout`` (or, cut before its headers arrived, a ``TransportError``).
    """
    return {"request": [_arm_deadline], "response": [_read_under_deadline]}


def http_client(**kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` whose timeouts are deadlines (``deadline_hooks``)."""
    return httpx.Client(event_hooks=deadline_hooks(), **kwargs)


def post_json(
    http: httpx.Client, path: str, body: dict[str, Any], server: str, timeout_setting: str
) -> tuple[httpx.Response, float]:
    """POST and time one request; a timeout or a failed connection becomes ConnectionLost
    (retried, and the end of the run if it persists).

    With a client from ``http_client``, the timeout is a deadline for the whole request:
    a server that trickles its reply is cut off at ``timeout_setting`` seconds too.
    """
    timeout = http.timeout.read
    request = http.build_request("POST", path, json=body)
    start = time.perf_counter()
    try:
        response = http.send(request)
    except httpx.TransportError as exc:
        _disarm(request)
        timed_out = isinstance(exc, httpx.TimeoutException)
        if timed_out or (timeout is not None and time.perf_counter() - start >= timeout):
            within = f"{timeout:g} s" if timeout is not None else "the connect timeout"
            how = type(exc).__name__ if timed_out else "cut off at the deadline"
            raise ConnectionLost(
                f"no reply from {server} within {within} ({how}); "
                f"raise {timeout_setting} if the server is busy"
            ) from exc
        raise ConnectionLost(f"connection to {server} failed: {type(exc).__name__}: {exc}") from exc
    return response, time.perf_counter() - start
