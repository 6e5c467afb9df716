"""The errors a user can act on (judge.errors): every one a HarnessError, each class's exit
code (2 unless it says otherwise, 3 for a judge that cannot run, 130 or 143 for a stopped run),
the problems an InputError lists, and the retry family of backend errors."""

from __future__ import annotations

import signal

import pytest

from judge import errors, signals
from judge.errors import (
    AdapterError,
    BackendError,
    BackendRequestError,
    BackendUnavailable,
    ConfigError,
    ConnectionLost,
    HarnessError,
    InputError,
    Interrupted,
    PromptError,
    PromptTooLong,
    TransientBackendError,
)


def test_the_exit_codes_of_the_cli() -> None:
    assert (
        errors.EXIT_OK,
        errors.EXIT_REGRESSION,
        errors.EXIT_BAD_INPUT,
        errors.EXIT_JUDGE_UNAVAILABLE,
        errors.EXIT_INTERRUPTED,
        errors.EXIT_TERMINATED,
    ) == (0, 1, 2, 3, 130, 143)
    # 128 + the signal number, as a shell reports a process the signal killed.
    assert errors.EXIT_INTERRUPTED == 128 + signal.SIGINT
    assert errors.EXIT_TERMINATED == 128 + signal.SIGTERM


@pytest.mark.parametrize(
    ("error", "parent", "code"),
    [
        (InputError(["x"]), HarnessError, 2),
        (ConfigError("x"), HarnessError, 2),
        (PromptError("x"), ConfigError, 2),
        (AdapterError("x"), HarnessError, 2),
        (BackendError("x"), HarnessError, 2),
        (BackendUnavailable("x"), BackendError, 3),
        (TransientBackendError("x"), BackendError, 2),
        (ConnectionLost("x"), TransientBackendError, 2),
        (BackendRequestError("x"), BackendError, 2),
        (PromptTooLong("x"), BackendError, 2),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else None,
)
def test_each_error_has_its_place_and_exit_code(
    error: HarnessError, parent: type[HarnessError], code: int
) -> None:
    assert isinstance(error, parent) and isinstance(error, HarnessError)
    assert error.exit_code == code


def test_only_timeouts_and_lost_connections_are_retried() -> None:
    # The retry loop catches TransientBackendError: a refused request or a prompt too long
    # for the context is never retried, a lost connection is.
    retried = [
        e
        for e in (BackendRequestError, PromptTooLong, BackendUnavailable, ConnectionLost)
        if issubclass(e, TransientBackendError)
    ]
    assert retried == [ConnectionLost]


def test_an_input_error_lists_every_problem_one_a_line() -> None:
    problems = ("questions.jsonl:2: field 'id' missing", "questions.jsonl:5: duplicate id 'q1'")
    error = InputError(problems)  # any sequence of lines, kept as a list
    assert error.problems == list(problems)
    assert str(error) == (
        "questions.jsonl:2: field 'id' missing\nquestions.jsonl:5: duplicate id 'q1'"
    )
    assert InputError([]).problems == [] and str(InputError([])) == ""


def test_an_interrupted_run_exits_with_the_code_of_the_signal_that_stopped_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(signals, "_received", None)  # Ctrl-C that no handler saw
    assert Interrupted("stopped").exit_code == 130
    monkeypatch.setattr(signals, "_received", signal.SIGTERM)
    stopped = Interrupted("stopped")
    assert stopped.exit_code == 143 and str(stopped) == "stopped"
    assert Interrupted.exit_code == errors.EXIT_INTERRUPTED  # the class's, before any signal
