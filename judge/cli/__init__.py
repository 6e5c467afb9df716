"""Command line: ``judge check | retrieval | trec | run | nightly | show | report | ...``.

Each command parses its arguments, makes one wiring call (``judge.pipeline``: it reads, does
the work and writes) and prints a view of what it returns (``judge.report``). Heavy modules
(pandas, pydantic models, the backends) are imported inside the commands, so ``judge --help``
answers at once.

One module per group of commands, each with its parser lines beside its command functions:
``inputs`` (check, retrieval, trec), ``run`` (run, nightly, bars), ``experiments`` (sweep,
stability), ``folders`` (show, diff, report, baseline), ``audit``, ``cache`` (cache, batch),
``imports`` (import, golden); ``options`` holds the parser's shared parts and ``common`` the
configuration and printing every command uses. This module builds the parser and runs a
command: ``main`` is the ``judge`` entry point.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sqlite3
import sys
from collections.abc import Sequence

from judge import signals
from judge.cli.audit import add_audit_commands
from judge.cli.cache import add_batch_commands, add_cache_commands
from judge.cli.common import DEFAULT_CONFIG, say, warn
from judge.cli.experiments import add_stability_command, add_sweep_command
from judge.cli.folders import add_folder_commands
from judge.cli.imports import add_golden_commands, add_import_commands
from judge.cli.inputs import add_input_commands
from judge.cli.options import BACKENDS, DEFAULT_BATCH_FILE_MB, Commands, Number, Version
from judge.cli.run import add_run_commands
from judge.errors import EXIT_BAD_INPUT, HarnessError, InputError, Interrupted

__all__ = ["BACKENDS", "DEFAULT_BATCH_FILE_MB", "GC_THRESHOLDS", "Number", "build_parser", "main"]

#: The collector's thresholds for a command (Python's defaults: 700, 10, 10): allocations
#: between two young-generation collections, then young collections between two of the middle
#: generation, and middle ones between two full collections.
GC_THRESHOLDS = (20_000, 100, 100)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judge",
        description="Evaluate a RAG system: retrieval metrics and a Gemma judge.",
        epilog="exit codes: 0 ok, 1 regression, 2 bad input, 3 no judge, 4 busy (another judge "
        "run holds the reports folder past --wait; run again), 130 interrupted (Ctrl-C), "
        "143 stopped (SIGTERM)",
    )
    parser.add_argument("--version", action=Version)
    parser.add_argument(
        "--config", default=DEFAULT_CONFIG, help=f"configuration file (default: {DEFAULT_CONFIG})"
    )
    commands = Commands(parser, "command")
    add_input_commands(commands)
    add_run_commands(commands)
    add_sweep_command(commands)
    add_stability_command(commands)
    add_folder_commands(commands)
    add_audit_commands(commands)
    add_cache_commands(commands)
    add_batch_commands(commands)
    add_import_commands(commands)
    add_golden_commands(commands)
    return parser


class _WarningLines(logging.Handler):
    """The package's logged warnings (e.g. a torn last line of history.jsonl), as warning lines."""

    def emit(self, record: logging.LogRecord) -> None:
        warn([record.getMessage()])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: user errors print one line each and exit non-zero; bugs keep tracebacks.
    SIGINT and SIGTERM stop a command cleanly (exit 130 and 143)."""
    # A command builds hundreds of thousands of small objects (one verdict, item and row per
    # question) that live until it ends: with Python's default thresholds (700, 10, 10) the
    # collector rescans them over and over, about a third of a 10,000-question run; with
    # (20,000, 20, 10) its older generations still took 0.5 s of a 3 s cached run, with
    # (20,000, 100, 100) 0.09 s (docs/benchmarks.md). The young generation is still collected
    # every 20,000 allocations, so short-lived cycles (an exception and its frames) go soon.
    # A command-line process, so the setting is ours to make; the Python API leaves it alone.
    gc.set_threshold(*GC_THRESHOLDS)
    log = logging.getLogger("judge")
    if not any(isinstance(h, _WarningLines) for h in log.handlers):
        log.addHandler(_WarningLines(logging.WARNING))
        log.propagate = False  # printed once, by us, not again by Python's last-resort handler
    with signals.handled():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except InputError as exc:
        # One line per problem, each once (a problem of several lines is several), and the
        # count under them is the count of those lines: it said "3 problems" under two.
        # (split at newlines only: a carriage return in the data is shown escaped, in its line)
        lines = list(dict.fromkeys(line for p in exc.problems for line in p.split("\n") if line))
        lines = lines or ["bad input (no problem was named: a bug, please report it)"]
        for line in lines:
            say(f"error: {line}", err=True, one_line=True)
        if len(lines) > 1:
            say(f"{len(lines)} problems; nothing was evaluated", err=True)
        return exc.exit_code
    except Interrupted as exc:
        say(f"interrupted: {exc}", err=True)
        return exc.exit_code
    except HarnessError as exc:
        for line in str(exc).splitlines():
            say(f"error: {line}", err=True, one_line=True)
        return exc.exit_code
    except KeyboardInterrupt:
        say("interrupted", err=True)
        return signals.exit_code()
    except BrokenPipeError:  # `judge ... | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
    except sqlite3.OperationalError as exc:  # e.g. 'cache prune' vacuuming during a run
        say(
            f"error: the verdict cache is busy ({exc}); wait for the other judge command",
            err=True,
        )
        return EXIT_BAD_INPUT
    except OSError as exc:  # disk full, permission denied: the environment, not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        say(f"error: {where}{exc.strerror or exc}", err=True)
        return EXIT_BAD_INPUT
