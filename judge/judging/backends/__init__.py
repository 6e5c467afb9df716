"""Judge backends: one small interface, several implementations, chosen by name.

A backend turns one rendered prompt into one ``Reply``. It raises ``PromptTooLong`` for a
prompt that would not fit (never judging a truncated prompt), ``TransientBackendError`` for
failures worth retrying, ``BackendRequestError`` for requests that will never succeed and
``BackendUnavailable`` when it cannot run at all. The retry policy lives in ``judge.judging.grading``,
not here.

Backends are imported lazily, so the harness runs without llama-cpp-python installed until the
embedded judge is actually chosen.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, Protocol

import httpx
from pydantic import BaseModel, ConfigDict

from judge.config import JudgeConfig
from judge.errors import BackendUnavailable, ConfigError, ConnectionLost
from judge.judging.graded import Task
from judge.judging.types import ContextChunk, Mode
from judge.judging.verdict import Reply


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


def token_count(value: object) -> int | None:
    """A token count a server reported: a non-negative integer, else None ("not reported").

    Ollama's metric fields are ``omitempty`` (absent, never 0, when it did not count) and
    servers differ in what they put in ``usage``; a count that is not a plain integer (a
    string, a float, ``true``) is not guessed at: None, never a silent 0, never a crash.
    """
    return value if type(value) is int and value >= 0 else None


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


class BackendIdentity(BaseModel):
    """Which judge this is. ``kind``, ``model``, ``digest`` and ``options`` change verdicts and
    go into the fingerprint; ``endpoint`` and ``server_version`` are recorded only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    model: str
    digest: str | None
    """Ollama's manifest digest, a GGUF file's sha256, or None when the server reports none."""
    options: dict[str, Any]
    """Everything sent with each request that changes the output (temperature, seed, ...)."""
    endpoint: str | None = None
    server_version: str | None = None
    reads_prompt: bool = True
    """False for judges that ignore the prompt file (the lexical baseline): then a prompt edit
    does not change their fingerprint, and they are not re-run for it."""
    about: str | None = None
    """What the model is, where the backend can tell (the embedded GGUF's own metadata):
    recorded and shown, not fingerprinted (the digest already pins the file)."""

    def describe(self) -> str:
        digest = f", {self.digest[:19]}…" if self.digest else ""
        where = f" at {self.endpoint}" if self.endpoint else ""
        about = f"\n       ({self.about})" if self.about else ""
        return f"{self.kind} · {self.model}{digest}{where}{about}"


class JudgeRequest(NamedTuple):
    """One item to judge: the rendered prompt and schema, and the inputs it was rendered from
    (the model-free baseline reads those instead of the prompt, and answers in ``mode``)."""

    prompt: str
    schema: dict[str, Any]
    question: str
    context: list[ContextChunk]
    answer: str
    mode: Mode = "quote"
    """The prompt's mode (``judge.judging.prompts``): the reply shape ``schema`` describes."""
    task: Task = "answer"
    """What is asked (``judge.judging.graded``): an answer's verdict, a chunk's grade (then
    ``context`` is that one chunk and ``answer`` is empty) or an answer's correctness."""
    reference: str | None = None
    """The question's reference answer, for the correctness judgement."""
    answerable: bool = True
    """False for an out-of-scope question (whose correct answer is a refusal)."""


class JudgeBackend(Protocol):
    """The one method every backend has (plus its identity, fixed at construction)."""

    identity: BackendIdentity

    def complete(self, request: JudgeRequest) -> Reply:
        """Judge one item; the reply must follow ``request.schema`` where supported."""
        ...

    def close(self) -> None:
        """Release connections or the model."""
        ...


def _on_each(
    make: Callable[[Any], JudgeBackend],
    settings: Any,
    endpoints: Sequence[Any] | None,
    address: str,
    setting: str,
) -> JudgeBackend:
    """``make(settings)``, or with ``endpoints`` a pool of it: each member is the configured
    backend on one server (``address``: the settings field naming it), all else the same."""
    if endpoints is None:
        return make(settings)
    from judge.judging.backends.pool import open_pool

    members = []
    for endpoint in endpoints:
        where = getattr(endpoint, address)
        one = settings.model_copy(update={address: where, "endpoints": None})
        members.append((where, functools.partial(make, one), endpoint.concurrency))
    return open_pool(members, setting)


def _ollama(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.ollama import OllamaBackend

    return _on_each(
        OllamaBackend, config.ollama, config.ollama.endpoints, "host", "judge.ollama.endpoints"
    )


def _embedded(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.embedded import EmbeddedBackend

    return EmbeddedBackend(config.embedded)


def _openai(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.openai import OpenAIBackend

    return _on_each(
        OpenAIBackend, config.openai, config.openai.endpoints, "base_url", "judge.openai.endpoints"
    )


def _lexical(config: JudgeConfig) -> JudgeBackend:
    from judge.judging.backends.lexical import LexicalBackend

    return LexicalBackend(config.lexical.refusal_phrases)


BACKENDS: dict[str, Callable[[JudgeConfig], JudgeBackend]] = {
    "ollama": _ollama,
    "embedded": _embedded,
    "openai": _openai,
    "lexical": _lexical,
}


class OpenedBackend(NamedTuple):
    """The backend that will judge, and why it was chosen (shown first in every output)."""

    backend: JudgeBackend
    reason: str


def _pooled(reason: str, backend: JudgeBackend) -> str:
    """The reason, with how a pool of servers will be used."""
    from judge.judging.backends.pool import PooledBackend

    if not isinstance(backend, PooledBackend):
        return reason
    return f"{reason} ({backend.setting}: {backend.capacity} requests at once)"


def open_backend(config: JudgeConfig) -> OpenedBackend:
    """Construct (and preflight) the configured backend; ``auto`` prefers Ollama.

    With ``endpoints`` the ``ollama`` and ``openai`` backends are a pool
    (``judge.judging.backends.pool``). ``auto`` falls back to the embedded model when no
    Ollama endpoint answers, not when only some do (``PoolRefused``).
    """
    from judge.judging.backends.pool import PoolRefused

    if config.backend == "auto":
        try:
            ollama = _ollama(config)
            return OpenedBackend(ollama, _pooled("auto: Ollama answered", ollama))
        except PoolRefused:
            raise
        except BackendUnavailable as exc:
            try:
                backend = _embedded(config)
            except BackendUnavailable as embedded_exc:
                raise BackendUnavailable(
                    f"no judge can run: Ollama: {exc}; embedded: {embedded_exc}"
                ) from None
            return OpenedBackend(
                backend, f"auto: Ollama not used ({exc}); using the embedded model"
            )
    factory = BACKENDS.get(config.backend)
    if factory is None:
        raise ConfigError(f"unknown backend '{config.backend}'; use one of {', '.join(BACKENDS)}")
    backend = factory(config)
    return OpenedBackend(backend, _pooled(f"backend = {config.backend}", backend))
