"""The endpoint pool: several loopback servers judging one run together."""

from __future__ import annotations

import contextlib
import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tenacity import wait_none

from judge.cli import main
from judge.config import Config, JudgeConfig
from judge.errors import BackendUnavailable, ConnectionLost, TransientBackendError
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.backends import registry
from judge.judging.backends.base import JudgeBackend
from judge.judging.backends.ollama import OllamaBackend
from judge.judging.backends.openai import OpenAIBackend
from judge.judging.backends.pool import PooledBackend, PoolRefused
from judge.judging.backends.registry import open_backend
from judge.judging.cache import VerdictCache
from judge.judging.grading import judge_fingerprint
from judge.judging.items import JudgeItem, build_items
from judge.judging.judge import JudgeOutcome, judge_items
from judge.judging.prompts import load_prompt
from tests import loopback_ollama
from tests.conftest import REPO
from tests.fakes import ScriptedBackend, good_reply

Tiny = Callable[..., Config]
PROMPT = load_prompt(REPO / "prompts" / "judge.v1.md")
DELAY_S = 0.02


@pytest.fixture
def start_server() -> Iterator[Callable[..., loopback_ollama.Loopback]]:
    """``start_server(slots, delay_s=..., **options)``: a loopback server, stopped after the
    test. Where a test counts requests at once, the delay is long enough that a busy machine
    does not finish one before the next is sent."""
    started: list[loopback_ollama.Loopback] = []

    def start(slots: int, delay_s: float = DELAY_S, **options: Any) -> loopback_ollama.Loopback:
        server = loopback_ollama.start(delay_s, slots, **options)
        started.append(server)
        return server

    yield start
    # At once: each stop waits up to half a second for its serving loop to notice.
    stopping = [
        threading.Thread(target=server.stop) for server in started if not server.stopping.is_set()
    ]
    for thread in stopping:
        thread.start()
    for thread in stopping:
        thread.join()


def _url(server: loopback_ollama.Loopback, kind: str) -> str:
    host = f"http://127.0.0.1:{server.server_address[1]}"
    return host if kind == "ollama" else f"{host}/v1"


def _closed_port_urls(count: int) -> list[str]:
    """Distinct addresses where nothing listens."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [f"http://127.0.0.1:{s.getsockname()[1]}" for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _config(kind: str, endpoints: list[tuple[str, int]], **judge: Any) -> JudgeConfig:
    key = "host" if kind == "ollama" else "base_url"
    section = {
        "model": loopback_ollama.MODEL,
        "timeout_s": 5,
        "endpoints": [{key: url, "concurrency": n} for url, n in endpoints],
    }
    return JudgeConfig.model_validate({"backend": kind, kind: section, **judge})


def _pool(kind: str, endpoints: list[tuple[str, int]]) -> PooledBackend:
    backend = open_backend(_config(kind, endpoints)).backend
    assert isinstance(backend, PooledBackend)
    return backend


def _items(config: Config, copies: int) -> list[JudgeItem]:
    """The tiny set's items, ``copies`` times over (distinct ids and keys)."""
    golden = load_golden(config.data)
    assert config.data.run is not None
    items = build_items(golden, load_run(config.data.run, golden), 5)
    return [
        item._replace(
            question=item.question.model_copy(update={"id": f"{item.question.id}-{i}"}),
            key=f"{item.key}-{i}",
        )
        for i in range(copies)
        for item in items
    ]


def _judge(
    items: list[JudgeItem], backend: PooledBackend, tmp_path: Path, max_attempts: int = 4
) -> JudgeOutcome:
    cache = VerdictCache(tmp_path / "pool-cache.sqlite3")
    try:
        return judge_items(
            items,
            backend,
            PROMPT,
            cache,
            concurrency=backend.capacity,
            max_attempts=max_attempts,
            retry_wait=wait_none(),
        )
    finally:
        cache.close()


# --- spreading one run over several servers -------------------------------------------------------


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_two_servers_with_different_concurrencies_judge_one_run_together(
    kind: str, tiny: Tiny, tmp_path: Path, start_server: Callable[..., loopback_ollama.Loopback]
) -> None:
    # Each server could take more than the pool gives it: what is measured is the pool's limit.
    big, small = start_server(slots=4, delay_s=0.05), start_server(slots=2, delay_s=0.05)
    pool = _pool(kind, [(_url(big, kind), 3), (_url(small, kind), 1)])
    try:
        assert pool.capacity == 4
        outcome = _judge(_items(tiny(), 10), pool, tmp_path)
    finally:
        pool.close()
    assert len(outcome.verdicts) == 40
    assert {v.status for v in outcome.verdicts.values()} == {"ok"}
    assert big.chat_requests + small.chat_requests == 40  # each item asked once
    assert big.chat_requests > small.chat_requests > 0  # both used, about 3:1
    assert big.peak_in_flight == 3  # filled, never past its concurrency
    assert small.peak_in_flight == 1
    assert pool.answered == {
        _url(big, kind): big.chat_requests,
        _url(small, kind): small.chat_requests,
    }
    assert pool.down == {}


def test_judge_run_keeps_the_pools_capacity_in_flight(
    tiny: Tiny, start_server: Callable[..., loopback_ollama.Loopback]
) -> None:
    """Through the CLI: the pool's capacity, not judge.concurrency (1 here), is in flight."""
    first, second = start_server(slots=2, delay_s=0.2), start_server(slots=2, delay_s=0.2)
    config = tiny(
        extra_toml=(
            f'\n[judge.ollama]\nmodel = "{loopback_ollama.MODEL}"\nendpoints = [\n'
            f'  {{host = "{_url(first, "ollama")}", concurrency = 2}},\n'
            f'  {{host = "{_url(second, "ollama")}", concurrency = 1}},\n]\n'
        )
    )
    assert config.source is not None and config.judge.concurrency == 1
    code = main(["--config", str(config.source), "run", "--backend", "ollama"])
    assert code == 0
    # With one item in flight the least-loaded rule would send all 4 to the first server.
    assert first.chat_requests + second.chat_requests == 4
    assert second.chat_requests > 0 and first.peak_in_flight == 2


def test_a_request_its_client_gave_up_on_is_no_longer_counted_in_flight(
    start_server: Callable[..., loopback_ollama.Loopback],
) -> None:
    """The loopback server's count: a client that timed out and asks again has one request in
    flight, not two (the abandoned one would have kept its slot for its whole delay)."""
    server = start_server(slots=1, delay_s=30.0)
    config = _config("ollama", [(_url(server, "ollama"), 1)]).ollama
    backend = OllamaBackend(
        config.model_copy(update={"host": _url(server, "ollama"), "timeout_s": 0.3})
    )
    started = time.monotonic()
    try:
        for _ in range(2):  # the second waits for the slot the first held, unless it was freed
            with pytest.raises(ConnectionLost, match=r"^no reply from Ollama within 0\.3 s"):
                backend.complete(_request())
        while server.in_flight and time.monotonic() - started < 20:
            time.sleep(0.01)
    finally:
        backend.close()
    assert (server.chat_requests, server.peak_in_flight, server.in_flight) == (2, 1, 0)
    # counted out at once, not after its 30 s (a bound wide enough for a loaded machine)
    assert time.monotonic() - started < 20


def test_the_pool_never_gives_a_member_more_than_its_concurrency() -> None:
    """The product's side of peak_in_flight: 12 threads on a pool of 3 + 2 + 1, with members that
    answer after a random pause, fail now and then (transient errors, lost connections) and
    come back; at no moment does a member have more calls than its concurrency."""
    rng_lock, rng = threading.Lock(), random.Random(7)
    counting_lock = threading.Lock()
    running: dict[str, int] = {}
    peak: dict[str, int] = {}

    def member(name: str) -> ScriptedBackend:
        def script(request: Any) -> Any:
            with counting_lock:
                running[name] = running.get(name, 0) + 1
                peak[name] = max(peak.get(name, 0), running[name])
            with rng_lock:
                pause, fate = rng.random() * 0.004, rng.random()
            time.sleep(pause)
            with counting_lock:
                running[name] -= 1
            if fate < 0.05:
                return ConnectionLost(f"{name}: connection to Ollama failed: ConnectError")
            if fate < 0.10:
                return TransientBackendError("HTTP 503: queue full")
            return good_reply(request)

        return ScriptedBackend(script)

    pool = PooledBackend([(member("a"), 3), (member("b"), 2), (member("c"), 1)])
    answered: list[int] = []

    def work() -> None:
        for _ in range(40):
            with contextlib.suppress(ConnectionLost, TransientBackendError):
                pool.complete(_request())
                answered.append(1)

    threads = [threading.Thread(target=work) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answered) > 300  # most of the 480 requests were answered
    assert all(peak[name] <= limit for name, limit in (("a", 3), ("b", 2), ("c", 1))), peak
    assert peak["a"] == 3  # and the pool did fill it


# --- a server that fails mid-run --------------------------------------------------------------------


def _stop_after(server: loopback_ollama.Loopback, requests: int) -> None:
    """Stop ``server`` (refusing new connections) once it has had ``requests`` chat requests."""

    def watch() -> None:
        while server.chat_requests < requests:
            time.sleep(0.002)
        server.stop()

    threading.Thread(target=watch, daemon=True).start()


@pytest.mark.parametrize("how", ["crashes", "is stopped"])
def test_a_server_failing_mid_run_leaves_its_items_to_the_other(
    how: str,
    tiny: Tiny,
    tmp_path: Path,
    start_server: Callable[..., loopback_ollama.Loopback],
    caplog: pytest.LogCaptureFixture,
) -> None:
    failing = start_server(slots=2, fail_after=6 if how == "crashes" else None)
    steady = start_server(slots=2)
    if how == "is stopped":
        _stop_after(failing, 6)
    pool = _pool("ollama", [(_url(failing, "ollama"), 2), (_url(steady, "ollama"), 2)])
    caplog.set_level(logging.WARNING, logger="judge")
    try:
        # One attempt per item: an item of the failing server is not retried by grading, it is
        # moved to the other server by the pool at once.
        outcome = _judge(_items(tiny(), 10), pool, tmp_path, max_attempts=1)
    finally:
        pool.close()
    assert {v.status for v in outcome.verdicts.values()} == {"ok"}
    assert len(outcome.verdicts) == 40
    failed_url = _url(failing, "ollama")
    assert list(pool.down) == [failed_url]
    answered = pool.answered
    assert 1 <= answered[failed_url] <= 6
    assert answered[failed_url] + answered[_url(steady, "ollama")] == 40
    downs = [r.getMessage() for r in caplog.records if "is down" in r.getMessage()]
    assert len(downs) == 1  # said once, though several requests saw it fail
    assert downs[0].startswith(f"judge.ollama.endpoints: {failed_url} is down (")
    assert downs[0].endswith("its items go to the other 1 endpoint(s)")
    # Closing the pool says how the work was shared, as a warning since an endpoint was lost.
    shared = caplog.records[-1]
    assert shared.levelno == logging.WARNING
    assert shared.getMessage().startswith(
        f"judge.ollama.endpoints: replies per endpoint: {failed_url} {answered[failed_url]} "
        "(down: connection to Ollama failed: "
    )
    assert shared.getMessage().endswith(
        f"{_url(steady, 'ollama')} {answered[_url(steady, 'ollama')]}"
    )


def test_every_server_down_stops_the_run_with_a_clear_error(
    tiny: Tiny,
    start_server: Callable[..., loopback_ollama.Loopback],
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second = start_server(slots=1, fail_after=0), start_server(slots=1, fail_after=0)
    config = tiny(
        extra_toml=(
            f'\n[judge.ollama]\nmodel = "{loopback_ollama.MODEL}"\nendpoints = [\n'
            f'  {{host = "{_url(first, "ollama")}", concurrency = 1}},\n'
            f'  {{host = "{_url(second, "ollama")}", concurrency = 1}},\n]\n'
        )
    )
    assert config.source is not None
    text = config.source.read_text(encoding="utf-8").replace(
        "[judge]\n", "[judge]\nmax_attempts = 2\n"
    )
    config.source.write_text(text, encoding="utf-8")
    code = main(["--config", str(config.source), "run", "--backend", "ollama"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 3, err
    assert "the judge backend stopped answering after 2 attempts: every endpoint of " in err
    assert "judge.ollama.endpoints is down: " in err
    for server in (first, second):
        assert f"{_url(server, 'ollama')}: connection to Ollama failed: RemoteProtocolError" in err
    # Given up after the retries, not item by item: 2 in flight × 2 attempts × 2 servers at most.
    assert first.chat_requests + second.chat_requests <= 8


# --- preflight: the same judge everywhere, every endpoint answering ----------------------------------


def test_a_different_digest_is_refused_naming_the_odd_endpoint(
    start_server: Callable[..., loopback_ollama.Loopback], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, odd, c = (start_server(1), start_server(1, digest="e" * 64), start_server(1))
    endpoints = [(_url(a, "ollama"), 1), (_url(odd, "ollama"), 1), (_url(c, "ollama"), 1)]
    monkeypatch.setattr(registry, "_embedded", lambda config: pytest.fail("fell back"))
    for backend in ("ollama", "auto"):  # auto does not fall back to embedded for this
        with pytest.raises(PoolRefused) as caught:
            open_backend(_config("ollama", endpoints, backend=backend))
        assert str(caught.value) == (
            f"judge.ollama.endpoints: {_url(odd, 'ollama')} serves {loopback_ollama.MODEL} with "
            f"digest {'e' * 64}, not {'d' * 64} like {_url(a, 'ollama')}; install the same "
            f"weights on every endpoint (e.g. 'ollama pull {loopback_ollama.MODEL}' on each) "
            "or remove it"
        )


def test_the_fingerprint_does_not_depend_on_the_endpoints(
    start_server: Callable[..., loopback_ollama.Loopback],
) -> None:
    a, b = start_server(1), start_server(1)
    for kind in ("ollama", "openai"):
        pool = _pool(kind, [(_url(a, kind), 2), (_url(b, kind), 1)])
        config = _config(kind, [(_url(a, kind), 1)])
        single: JudgeBackend
        if kind == "ollama":
            single = OllamaBackend(config.ollama.model_copy(update={"host": _url(a, kind)}))
        else:
            single = OpenAIBackend(config.openai.model_copy(update={"base_url": _url(a, kind)}))
        try:
            assert judge_fingerprint(pool.identity, PROMPT) == judge_fingerprint(
                single.identity, PROMPT
            )
            assert pool.identity.endpoint == (
                f"{_url(a, kind)} (2 at once), {_url(b, kind)} (1 at once)"
            )
            assert _url(b, kind) in pool.identity.describe()
        finally:
            pool.close()
            single.close()


def test_an_endpoint_that_does_not_answer_is_refused_before_any_work(
    start_server: Callable[..., loopback_ollama.Loopback], monkeypatch: pytest.MonkeyPatch
) -> None:
    live, [dead] = _url(start_server(1), "ollama"), _closed_port_urls(1)
    monkeypatch.setattr(registry, "_embedded", lambda config: pytest.fail("fell back"))
    for backend in ("ollama", "auto"):
        with pytest.raises(PoolRefused) as caught:
            open_backend(_config("ollama", [(live, 1), (dead, 1)], backend=backend))
        message = str(caught.value)
        assert message.startswith(
            f"judge.ollama.endpoints: 1 of 2 endpoints do not answer ({dead}: Ollama not "
            f"reachable at {dead} ("
        )
        assert message.endswith("); start them or remove them from judge.ollama.endpoints")
        assert live not in message


def test_auto_falls_back_to_embedded_when_no_endpoint_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead = [(url, 1) for url in _closed_port_urls(2)]
    embedded = ScriptedBackend(model="gemma-3-270m")
    monkeypatch.setattr(registry, "_embedded", lambda config: embedded)
    opened = open_backend(_config("ollama", dead, backend="auto"))
    assert opened.backend is embedded
    assert opened.reason.startswith("auto: Ollama not used (no endpoint of judge.ollama.endpoints")
    with pytest.raises(
        BackendUnavailable, match=r"^no endpoint of judge\.ollama\.endpoints answers"
    ):
        open_backend(_config("ollama", dead))


def test_the_reason_says_how_many_requests_are_in_flight(
    start_server: Callable[..., loopback_ollama.Loopback],
) -> None:
    a, b = _url(start_server(1), "openai"), _url(start_server(1), "openai")
    opened = open_backend(_config("openai", [(a, 3), (b, 2)]))
    opened.backend.close()
    assert opened.reason == "backend = openai (judge.openai.endpoints: 5 requests at once)"


# --- the pool's rules, with scripted members ---------------------------------------------------------


def _request() -> Any:
    from judge.judging.backends.base import JudgeRequest

    return JudgeRequest(prompt="p", schema={}, question="q", context=[], answer="a")


def test_a_transient_error_is_the_members_answer_not_a_failure_of_the_member() -> None:
    member = ScriptedBackend(lambda r: TransientBackendError("HTTP 503: queue full"))
    pool = PooledBackend([(member, 1), (ScriptedBackend(), 1)])
    with pytest.raises(TransientBackendError):
        pool.complete(_request())  # the first member is the least loaded: it is asked
    assert pool.down == {}  # and stays in use: grading's retry may land anywhere


def test_a_pool_of_one_comes_back_like_its_backend_alone() -> None:
    """All members down: the request fails; the next attempt (grading's retry) tries again."""
    failures = iter([ConnectionLost("connection to Ollama failed: ConnectError")])
    member = ScriptedBackend(lambda r: next(failures, None) or good_reply(r))
    pool = PooledBackend([(member, 1)], "judge.ollama.endpoints")
    with pytest.raises(
        ConnectionLost, match=r"^every endpoint of judge\.ollama\.endpoints is down"
    ):
        pool.complete(_request())
    assert pool.down == {"member 1": "connection to Ollama failed: ConnectError"}
    assert pool.complete(_request()).text  # the retry: answered, back in use
    assert pool.down == {} and pool.answered == {"member 1": 1}


def test_members_that_are_not_the_same_judge_are_refused_and_closed() -> None:
    closed: list[str] = []

    class Closing(ScriptedBackend):
        def close(self) -> None:
            closed.append(self.identity.model)

    with pytest.raises(PoolRefused, match="member 2 serves scripted other"):
        PooledBackend([(Closing(model="one"), 1), (Closing(model="other"), 1)])
    assert sorted(closed) == ["one", "other"]
