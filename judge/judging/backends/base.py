"""What every judge backend is: its identity, the request it judges, the protocol, and the
defaults of capacity and retry a backend may override.

A backend turns one rendered prompt into one ``Reply``. It raises ``PromptTooLong`` for a
prompt that would not fit (never judging a truncated prompt), ``TransientBackendError`` for
failures worth retrying, ``BackendRequestError`` for requests that will never succeed and
``BackendUnavailable`` when it cannot run at all. Each backend says how many requests it takes
at once and which failures are worth another attempt (``max_connections``, ``should_retry``;
``PlainBackend`` has the defaults: ``judge.concurrency``, and ``TransientBackendError``); the
retry loop itself lives in ``judge.judging.grading``. Choosing and opening a backend by name is
``judge.judging.backends.registry``'s job; the backends import this module, never the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict

from judge.errors import TransientBackendError
from judge.judging.types import ContextChunk, Mode
from judge.judging.verdict import Reply


def token_count(value: object) -> int | None:
    """A token count a server reported: a non-negative integer, else None ("not reported").

    Ollama's metric fields are ``omitempty`` (absent, never 0, when it did not count) and
    servers differ in what they put in ``usage``; a count that is not a plain integer (a
    string, a float, ``true``) is not guessed at: None, never a silent 0, never a crash.
    """
    return value if type(value) is int and value >= 0 else None


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


#: A task's model-free rule for one request (``JudgeRequest.baseline``): the reply payload
#: from the request's inputs, given the configured refusal phrases.
BaselineRule = Callable[[Sequence[str]], dict[str, Any]]


class JudgeRequest(NamedTuple):
    """One item to judge: the rendered prompt and schema, and the inputs it was rendered from
    (the model-free baseline reads those instead of the prompt, and answers in ``mode``, or by
    the task's own rule, ``baseline``)."""

    prompt: str
    schema: dict[str, Any]
    question: str
    context: list[ContextChunk]
    answer: str
    mode: Mode = "quote"
    """The prompt's mode (``judge.judging.prompts``): the reply shape ``schema`` describes."""
    task: str = "answer"
    """What is asked (a task's name, ``judge.judging.tasks``): an answer's verdict, a chunk's
    grade (then ``context`` is that one chunk and ``answer`` is empty), ..."""
    baseline: BaselineRule | None = None
    """The task's model-free rule for this item (None: the answer's, by ``mode``): what the
    lexical baseline answers, so that a new task brings its own rule with it."""


class JudgeBackend(Protocol):
    """What every backend has: its identity (fixed at construction), how to judge one item and
    close. A backend may also declare its own capacity and retry rule (``PlainBackend``'s
    methods; read through ``max_connections``, ``should_retry`` and ``capacity_note``, which
    give ``PlainBackend``'s defaults to a backend that declares none, such as a user's own)."""

    identity: BackendIdentity

    def complete(self, request: JudgeRequest) -> Reply:
        """Judge one item; the reply must follow ``request.schema`` where supported."""
        ...

    def close(self) -> None:
        """Release connections or the model."""
        ...


class PlainBackend:
    """The defaults of a backend on one server or in-process: ``judge.concurrency`` requests
    at once, and a retry for a ``TransientBackendError`` (timeouts, 5xx, dropped connections).
    A backend overrides what it knows better (a pool: its members' summed concurrency)."""

    def max_connections(self, configured: int) -> int:
        """How many requests to keep in flight, given ``judge.concurrency``."""
        return configured

    def should_retry(self, exc: BaseException) -> bool:
        """Whether a failed request is worth another attempt (up to ``judge.max_attempts``)."""
        return isinstance(exc, TransientBackendError)

    def capacity_note(self, setting_reason: str) -> str:
        """The reason the backend was chosen, with how it will be used (a pool says how many
        requests it takes at once)."""
        return setting_reason


_DEFAULTS = PlainBackend()


def max_connections(backend: JudgeBackend, configured: int) -> int:
    """``backend.max_connections(configured)``, or the default (``configured``)."""
    declared = getattr(backend, "max_connections", _DEFAULTS.max_connections)
    return int(declared(configured))


def should_retry(backend: JudgeBackend, exc: BaseException) -> bool:
    """``backend.should_retry(exc)``, or the default (a ``TransientBackendError``)."""
    declared = getattr(backend, "should_retry", _DEFAULTS.should_retry)
    return bool(declared(exc))


def capacity_note(backend: JudgeBackend, reason: str) -> str:
    """``backend.capacity_note(reason)``, or the default (``reason`` as it is)."""
    declared = getattr(backend, "capacity_note", _DEFAULTS.capacity_note)
    return str(declared(reason))
