"""The backend interface (judge.judging.backends.base): a backend's identity as shown, and the
defaults of capacity and retry that a backend declaring none (a user's own) gets."""

from __future__ import annotations

from judge.errors import BackendRequestError, TransientBackendError
from judge.judging.backends.base import (
    BackendIdentity,
    JudgeRequest,
    PlainBackend,
    capacity_note,
    max_connections,
    should_retry,
)
from judge.judging.verdict import Reply


class OwnBackend:
    """A user's backend: an identity and ``complete``, none of ``PlainBackend``'s methods."""

    identity = BackendIdentity(kind="own", model="m", digest=None, options={})

    def complete(self, request: JudgeRequest) -> Reply:
        raise AssertionError("not asked")

    def close(self) -> None:
        pass


class Declaring(PlainBackend):
    identity = BackendIdentity(kind="pool", model="m", digest=None, options={})

    def max_connections(self, configured: int) -> int:
        return 7

    def should_retry(self, exc: BaseException) -> bool:
        return True

    def capacity_note(self, setting_reason: str) -> str:
        return f"{setting_reason}; 7 at once"

    def complete(self, request: JudgeRequest) -> Reply:
        raise AssertionError("not asked")

    def close(self) -> None:
        pass


def test_a_backend_that_declares_nothing_gets_the_defaults() -> None:
    own = OwnBackend()
    assert max_connections(own, 3) == 3
    assert should_retry(own, TransientBackendError("timed out")) is True
    assert should_retry(own, BackendRequestError("bad request")) is False
    assert capacity_note(own, "backend = own") == "backend = own"


def test_what_a_backend_declares_wins() -> None:
    pool = Declaring()
    assert max_connections(pool, 3) == 7
    assert should_retry(pool, BackendRequestError("bad request")) is True
    assert capacity_note(pool, "backend = pool") == "backend = pool; 7 at once"


def test_an_identity_describes_kind_model_digest_endpoint_and_about() -> None:
    bare = BackendIdentity(kind="lexical", model="rules", digest=None, options={})
    assert bare.describe() == "lexical · rules"
    full = BackendIdentity(
        kind="ollama",
        model="gemma3:4b",
        digest="sha256:0123456789abcdef0123",
        options={"temperature": 0},
        endpoint="http://localhost:11434",
        about="Gemma 3 4b",
    )
    assert full.describe() == (
        "ollama · gemma3:4b, sha256:0123456789ab… at http://localhost:11434\n       (Gemma 3 4b)"
    )
