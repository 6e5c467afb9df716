"""Errors a user can act on.

Every error the harness raises on purpose derives from ``HarnessError``; the CLI prints its
message on one line (or one line per problem) without a traceback and exits with its
``exit_code``. Anything else is a bug and keeps its traceback.

    HarnessError                    exit 2
    ├── InputError                  bad golden set, corpus, run, labels: lists every problem
    ├── ConfigError                 bad judge.toml or command-line option
    │   └── PromptError             a prompt file with missing or unknown placeholders
    ├── AdapterError                the user's module:function cannot be loaded
    ├── Interrupted                 exit 130 (Ctrl-C) or 143 (SIGTERM): what was judged is kept
    │                               in the cache, the adapter's answers so far are saved
    └── BackendError                the judge backend failed
        ├── BackendUnavailable      exit 3: no server / no model; checked before any work
        ├── TransientBackendError   timeouts, 5xx, dropped connections: retried, never cached
        │   └── ConnectionLost      no connection, or no reply within the timeout: once the
        │                           retries fail too the server is gone and the run stops (exit 3)
        ├── BackendRequestError     4xx: the request is wrong, retrying will not help
        └── PromptTooLong           the prompt does not fit the context window: never judged
"""

from __future__ import annotations

from collections.abc import Sequence

from judge import signals

#: Exit codes of the CLI, documented in README.md.
EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_JUDGE_UNAVAILABLE = 3
EXIT_BUSY = 4
"""Another judge command holds the lock (a run writing to the reports folder, a shared file
being updated) past the wait: nothing was done, run it again (``judge nightly --wait``)."""
NIGHTLY_WAIT_S = 3600.0
"""How long ``judge nightly`` waits by default (``--wait``) for another run writing to its
reports folder before ``EXIT_BUSY``: long enough for a judge run of a few hundred answers on a
real Gemma to finish, short enough that a stuck holder is reported the same night."""
EXIT_INTERRUPTED = 130
"""SIGINT (Ctrl-C); SIGTERM gives 143: 128 + the signal number (``judge.signals``)."""
EXIT_TERMINATED = 143


class HarnessError(Exception):
    """A problem the user can act on; the message says where and what to do."""

    exit_code = EXIT_BAD_INPUT


class InputError(HarnessError):
    """One or more bad records in an input file. ``problems`` holds one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class ConfigError(HarnessError):
    """The configuration or a command-line option is wrong."""


class PromptError(ConfigError):
    """A judge prompt file cannot be used as it is."""


class AdapterError(HarnessError):
    """The user's ``module:function`` adapter cannot be loaded or called."""


class Interrupted(HarnessError):
    """The user stopped a run; what was judged is in the cache and the next run resumes.

    Its exit code is that of the signal that stopped the run: 130 for SIGINT (Ctrl-C), 143 for
    SIGTERM (``judge.signals.exit_code``).
    """

    exit_code = EXIT_INTERRUPTED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.exit_code = signals.exit_code()


class BackendError(HarnessError):
    """The judge backend failed."""


class BackendUnavailable(BackendError):
    """The judge cannot run at all (server down, model missing); raised before any work."""

    exit_code = EXIT_JUDGE_UNAVAILABLE


class TransientBackendError(BackendError):
    """A failure that may pass: timeout, 5xx, queue full, dropped connection. Retried."""


class ConnectionLost(TransientBackendError):
    """The connection failed or the server did not reply within the timeout.

    Retried like any transient error; if every attempt fails, the server is treated as gone
    and the run stops (exit 3) instead of spending a timeout on every remaining item.
    """


class BackendRequestError(BackendError):
    """The backend refused the request (4xx); retrying the same request will not help."""


class PromptTooLong(BackendError):
    """The prompt does not fit the model's context; judging it would judge a truncated prompt."""
