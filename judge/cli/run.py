"""``judge run``, ``judge nightly`` and ``judge bars suggest``: judge every answer, gate the run."""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from judge import signals
from judge.cli.common import config_of, say, warn
from judge.cli.options import (
    ANSWER_OPTIONS,
    CI_OPTIONS,
    FOLDER_HELP,
    Commands,
    Number,
    backend_option,
)
from judge.errors import (
    EXIT_BAD_INPUT,
    NIGHTLY_WAIT_S,
    HarnessError,
    InputError,
)

if TYPE_CHECKING:
    from judge.config import Config
    from judge.pipeline.session import JudgeChoice


def cmd_run(args: argparse.Namespace) -> int:
    out: list[str] = []  # the nightly prints its verdict first, so its output waits for the end
    try:
        return _judge_and_report(args, out)
    except (HarnessError, OSError, sqlite3.OperationalError, KeyboardInterrupt) as exc:
        if args.nightly:  # the first line of the nightly's output is its verdict, always
            say(f"nightly: FAILED (exit {_exit_code(exc)}): {_first_problem(exc)}", one_line=True)
        if out:
            say("\n".join(out))  # what was said about the judge before it stopped
        raise


def _exit_code(exc: BaseException) -> int:
    """The exit code ``main`` gives this exception."""
    if isinstance(exc, HarnessError):
        return exc.exit_code
    return signals.exit_code() if isinstance(exc, KeyboardInterrupt) else EXIT_BAD_INPUT


def _first_problem(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    problems = exc.problems if isinstance(exc, InputError) else str(exc).splitlines() or [""]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}"


class _Counts(Protocol):
    """What ``_announce_cached`` reads of a judging progress event
    (``judge.judging.grading.JudgeProgress``, which the CLI does not import)."""

    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def cached(self) -> int: ...


_Event = TypeVar("_Event", bound=_Counts)


def _announce_cached(
    forward: Callable[[_Event], None], say: Callable[[str], None]
) -> Callable[[_Event], None]:
    """``forward`` (the progress bar), after one line that says how many items the cache
    already holds ("2 of 10 already in the cache; ..."), said before anything is judged.

    The judging looks every item up in the cache first and reports each hit as one more done
    (``done`` goes up by one per event), then reports the same counts once more, when the
    lookup is over and before any request is sent (``done`` 0 when nothing was cached). That
    event, the first that does not advance ``done``, carries the count. The hits before it are
    held back, not drawn: they all come at once, and the bar then starts from the line.
    """
    from judge.report.summary import cached_line

    announced = False
    previous: int | None = None  # done of the previous (held back) event

    def on_event(event: _Event) -> None:
        nonlocal announced, previous
        if not announced:
            if event.done != 0 and event.done != previous:
                previous = event.done  # a cache hit, reported as it was looked up
                return
            say(cached_line(event.cached, event.total))
            announced = True
        forward(event)

    return on_event


def _judge_and_report(args: argparse.Namespace, out: list[str]) -> int:
    from judge.console import adapter_progress, judge_progress
    from judge.pipeline.bars import bars_asked
    from judge.pipeline.evaluate import Hooks, evaluate
    from judge.pipeline.run import gate_decision, write_outputs
    from judge.report.ci import ci_files
    from judge.report.summary import console_summary, judge_change_note

    nightly: bool = args.nightly
    config = _run_config(args)
    emit: Callable[[str], None] = out.append if nightly else say
    # --bars, or the nightly of a configuration with a [bars] table; refused before anything
    # is judged when there are no bars to check.
    with_bars = bars_asked(
        config, args.bars or (nightly and bool(config.bars)), otherwise="leave out --bars"
    )
    ci_paths = _ready_ci_outputs(args)  # a wrong path fails now, not after the judging
    with adapter_progress() as on_adapter, judge_progress() as on_judging:
        result = evaluate(
            config,
            backend=args.backend,
            run_path=args.run,
            fresh_answers=args.fresh_answers,
            rejudge_failed=args.rejudge_failed,
            hooks=Hooks(
                on_adapter,
                lambda inputs: warn(inputs.warnings()),
                _choice_lines(emit),
                _announce_cached(on_judging, emit),
            ),
            bars=with_bars,
            wait_s=args.wait,
        )
    for line in console_summary(result.report, result.folder.path):
        emit(line)
    # One decision: the first line, the exit code and the --json verdict (judge.results.decision)
    decision = gate_decision(result.report.gate, args.fail_on_regression, args.require_baseline)
    if nightly:
        change = judge_change_note(result.report)  # a new judge: its jump is no regression
        say(decision.first_line("nightly") + (f" · {change}" if change else ""))
        say("\n".join(out))
    else:
        say("\n" + decision.first_line("gate"))
    write_outputs(ci_files(result.report, decision, str(result.folder.path), ci_paths))
    return decision.exit_code


def _run_config(args: argparse.Namespace) -> Config:
    """The configuration with ``run``'s overrides of ``[judge]`` (``--prompt``,
    ``--concurrency``) applied."""
    config = config_of(args)
    changes = {
        key: value
        for key, value in (("prompt", args.prompt), ("concurrency", args.concurrency))
        if value is not None
    }
    return config.with_overrides(judge=changes) if changes else config


def _ready_ci_outputs(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    """The ``--junit`` and ``--json`` paths, checked writable before anything is judged."""
    from judge.pipeline.run import ready_outputs

    junit = Path(args.junit) if args.junit else None
    summary_path = Path(args.json) if args.json else None
    ready_outputs([junit, summary_path])
    return junit, summary_path


def _choice_lines(emit: Callable[[str], None]) -> Callable[[JudgeChoice], None]:
    """A wiring call's ``on_judge_chosen``: the judge, its estimate, then chunk grades and
    correctness, one line each."""

    def chosen(choice: JudgeChoice) -> None:
        for line in choice.lines():
            emit(line)

    return chosen


def cmd_bars(args: argparse.Namespace) -> int:
    from judge.pipeline.bars import suggest, write_bars

    config = config_of(args)
    suggestion = suggest(config, args.folder, args.metric, args.margin)
    if not args.write:
        say(suggestion.toml.rstrip("\n"))
        return 0
    path = write_bars(config.source or Path(args.config), suggestion.toml, replace=args.replace)
    say(
        f"wrote {len(suggestion.bars)} bars from {suggestion.folder} into {path}; "
        "'judge run --bars' checks them"
    )
    return 0


def add_run_commands(commands: Commands) -> None:
    run = commands.add(
        "run", cmd_run, "retrieval metrics, then judge every answer", ANSWER_OPTIONS, CI_OPTIONS
    )
    backend_option(run)
    run.add_argument("--prompt", type=Path, help="a prompt file (overrides judge.prompt)")
    run.add_argument(
        "--concurrency", type=Number(int, 1, 256), help="items judged at once (judge.concurrency)"
    )
    run.add_argument(
        "--rejudge-failed",
        action="store_true",
        help="judge again the answers whose cached reply gave no verdict (e.g. an empty reply)",
    )
    run.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a per-type metric regressed, question by question (docs/gate.md): a "
        "collapse, a fall beyond the margin shown tonight by the exact paired test, or a fall "
        "that stays over the season; or when a question got no answer or no verdict",
    )
    run.add_argument(
        "--require-baseline",
        action="store_true",
        help="exit 1 when there is nothing compatible to compare with",
    )
    run.add_argument(
        "--bars",
        action="store_true",
        help="exit 1 when a per-type bar of [bars] is crossed (one line per bar crossed)",
    )
    _wait_option(run, 0.0)
    run.set_defaults(nightly=False)
    _add_nightly_command(commands)
    _add_bars_commands(commands)


def _add_nightly_command(commands: Commands) -> None:
    nightly = commands.add(
        "nightly",
        cmd_run,
        "run with the gate: exit 1 on a regression (a collapse, a fall beyond the margin shown "
        "tonight by the exact paired test, or a fall that stays over the season; docs/gate.md), "
        "a question "
        "without an answer or a verdict, a missing baseline, or a bar of [bars] crossed; the "
        "verdict comes first (with "
        "an adapter, always asks it: the nightly measures tonight's system)",
        CI_OPTIONS,
    )
    backend_option(nightly)
    nightly.add_argument("--run", type=Path, help="a run file (overrides data.run / data.adapter)")
    _wait_option(nightly, NIGHTLY_WAIT_S)
    nightly.set_defaults(
        nightly=True,
        fresh_answers=True,
        rejudge_failed=False,
        backend=None,
        prompt=None,
        concurrency=None,
        fail_on_regression=True,
        require_baseline=True,
        bars=False,
    )


def _wait_option(parser: argparse.ArgumentParser, default: float) -> None:
    """``--wait SECONDS``: how long a run waits for another one writing to the reports folder
    before it gives up with exit 4 (``judge.io.lock.run_lock``)."""
    parser.add_argument(
        "--wait",
        type=Number(float, 0, 86400),
        default=default,
        metavar="SECONDS",
        help=f"wait up to SECONDS for another judge run writing to the reports folder "
        f"(default {default:g}); then exit 4 with nothing done",
    )


def _add_bars_commands(commands: Commands) -> None:
    bars = Commands(
        commands.add("bars", None, "per-type bars: the floors judge run --bars checks"),
        "bars_command",
    )
    suggest = bars.add(
        "suggest",
        cmd_bars,
        "today's per-type values of a run minus a margin, as a [bars] table to paste (or "
        "--write into the configuration)",
    )
    suggest.add_argument("folder", nargs="?", help=FOLDER_HELP)
    suggest.add_argument(
        "--margin",
        type=Number(float, 0, 1),
        help="below today's value on 0-1 shares (0.05); the 0-2 scores get twice it (0.10)",
    )
    suggest.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help="a metric to set bars on (repeatable; default faithfulness, relevance and "
        "recall@context_k)",
    )
    suggest.add_argument(
        "--write",
        action="store_true",
        help="write the table into the configuration file (every other byte kept)",
    )
    suggest.add_argument(
        "--replace", action="store_true", help="with --write: replace an existing [bars] table"
    )
