"""How the harness stops (judge.signals): SIGINT and SIGTERM become KeyboardInterrupt inside
``handled()`` and give exit codes 130 and 143, the previous handlers come back afterwards, a
second signal quits at once, and the worker threads run calls without ever holding up the exit
(bounded, daemon, an overrun call abandoned, queued calls cancelled on shutdown)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future

import pytest

from judge import signals
from judge.signals import Workers


@pytest.fixture(autouse=True)
def no_signal_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no signal received and leaves none behind for the next."""
    monkeypatch.setattr(signals, "_received", None)


def test_the_exit_code_is_128_plus_the_signal() -> None:
    assert signals.exit_code() == 130  # a KeyboardInterrupt no handled signal caused: Ctrl-C
    signals._received = signal.SIGTERM
    assert signals.exit_code() == 143


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_inside_handled_is_a_keyboard_interrupt_with_its_exit_code(
    signum: signal.Signals, code: int
) -> None:
    before = {s: signal.getsignal(s) for s in signals.HANDLED}
    with pytest.raises(KeyboardInterrupt), signals.handled():
        signal.raise_signal(signum)
        time.sleep(5)  # never reached: the handler raises at once
    assert signals.exit_code() == code
    assert {s: signal.getsignal(s) for s in signals.HANDLED} == before  # restored


def test_install_forgets_an_earlier_signal() -> None:
    signals._received = signal.SIGTERM
    previous = signals.install()
    try:
        assert signals.exit_code() == 130
        assert set(previous) == {signal.SIGINT, signal.SIGTERM}
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def test_handled_outside_the_main_thread_changes_nothing() -> None:
    seen: list[object] = []

    def command() -> None:
        with signals.handled():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=command)
    thread.start()
    thread.join(10)
    assert seen == [before]


def test_a_second_signal_quits_at_once_with_its_code() -> None:
    code = (
        "import signal\n"
        "from judge import signals\n"
        "signals.install()\n"
        "try:\n"
        "    signal.raise_signal(signal.SIGTERM)\n"
        "except KeyboardInterrupt:\n"
        "    signal.raise_signal(signal.SIGINT)  # while the first is being handled\n"
        "print('cleaned up')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 130  # 128 + SIGINT, the signal that forced the stop
    assert done.stderr == "interrupted again: quitting without cleaning up\n"
    assert done.stdout == ""  # no clean-up ran


# --- worker threads -------------------------------------------------------------------------


@pytest.fixture
def workers() -> Iterator[Callable[[int], Workers]]:
    """``workers(size)``: a pool named "w", shut down after the test."""
    made: list[Workers] = []

    def make(size: int) -> Workers:
        made.append(Workers(size, "w"))
        return made[-1]

    yield make
    for pool in made:
        pool.shutdown()


def _wait(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_calls_run_on_daemon_threads_and_return_their_results_or_errors(
    workers: Callable[[int], Workers],
) -> None:
    pool = workers(2)

    def where(x: int) -> tuple[int, bool, str]:
        thread = threading.current_thread()
        return x * x, thread.daemon, thread.name

    squared, daemon, name = pool.submit(where, 7).result(10)
    assert (squared, daemon, name) == (49, True, "w-1")
    failed = pool.submit(int, "not a number")
    with pytest.raises(ValueError, match="invalid literal"):
        failed.result(10)


def test_at_most_size_threads_run_at_once(workers: Callable[[int], Workers]) -> None:
    pool = workers(2)
    release = threading.Event()
    started: list[str] = []

    def blocked() -> str:
        started.append(threading.current_thread().name)
        release.wait(10)
        return threading.current_thread().name

    futures = [pool.submit(blocked) for _ in range(4)]
    _wait(lambda: len(started) == 2)
    time.sleep(0.05)
    assert sorted(started) == ["w-1", "w-2"]  # the other two wait in the queue
    release.set()
    assert {f.result(10) for f in futures} <= {"w-1", "w-2"}
    assert len(started) == 4


def test_an_abandoned_call_keeps_its_thread_and_a_new_thread_takes_the_next(
    workers: Callable[[int], Workers],
) -> None:
    pool = workers(1)
    release = threading.Event()
    threads: list[threading.Thread] = []

    def stuck_call() -> bool:
        threads.append(threading.current_thread())
        return release.wait(10)

    stuck = pool.submit(stuck_call)
    _wait(stuck.running)
    pool.abandon(stuck)
    pool.abandon(stuck)  # twice: counted once
    after = pool.submit(threading.current_thread)
    assert after.result(10) is not threads[0]  # a new thread, though the pool has size 1
    assert threads[0].is_alive() and not stuck.done()
    # Abandoned twice, counted once: still one call at a time besides the abandoned one.
    gate = threading.Event()
    started: list[int] = []

    def blocked(n: int) -> int:
        started.append(n)
        gate.wait(10)
        return n

    both = [pool.submit(blocked, 1), pool.submit(blocked, 2)]
    _wait(lambda: len(started) == 1)
    time.sleep(0.05)
    assert started == [1]
    gate.set()
    assert [f.result(10) for f in both] == [1, 2]
    release.set()
    assert stuck.result(10) is True  # it finished alone; nobody waits for it
    threads[0].join(10)
    assert not threads[0].is_alive()  # and its thread retired


def test_shutdown_cancels_the_queued_calls_and_refuses_new_ones(
    workers: Callable[[int], Workers],
) -> None:
    pool = workers(1)
    release = threading.Event()
    running = pool.submit(lambda: release.wait(10))
    _wait(running.running)
    queued: Future[int] = pool.submit(lambda: 1)
    pool.shutdown()  # never waits for the running call
    assert queued.cancelled()
    with pytest.raises(RuntimeError, match="submit after shutdown"):
        pool.submit(lambda: 2)
    release.set()
    assert running.result(10) is True
