"""What every command shares: its configuration, and printing data safely."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from judge.formatting import terminal_text

if TYPE_CHECKING:
    from judge.config import Config
    from judge.console import OnJudging
    from judge.pipeline.inputs import Inputs
    from judge.pipeline.session import JudgeChoice


DEFAULT_CONFIG = "judge.toml"


def config_of(args: argparse.Namespace) -> Config:
    from judge.config import load_config

    return load_config(Path(args.config))


def say(text: object = "", *, err: bool = False, one_line: bool = False) -> None:
    """Print text that may carry data (ids, answers, file lines, error messages, model names)
    through ``terminal_text``: no control character from the data reaches the terminal."""
    print(terminal_text(text, one_line=one_line), file=sys.stderr if err else sys.stdout)


def say_lines(lines: Iterable[str], *, err: bool = False) -> None:
    """Print a view's lines (``judge.report``), each one line: data in them cannot start a
    line of its own."""
    for line in lines:
        say(line, err=err, one_line=True)


def warn(lines: Sequence[str]) -> None:
    for line in lines:
        say(f"warning: {line}", err=True, one_line=True)


def warnings_of(with_labels: bool = True) -> Callable[[Inputs], None]:
    """A wiring call's ``on_inputs``: the inputs' warnings, printed once they are loaded
    (``check`` lists retired labels itself; commands that read no labels leave them out)."""

    def on_inputs(inputs: Inputs) -> None:
        warn(inputs.warnings(with_labels=with_labels))

    return on_inputs


def say_judge_choice(choice: JudgeChoice) -> None:
    """A wiring call's ``on_judge_chosen`` for commands that print no estimate: the judge
    chosen and why, on stderr (``run`` and ``nightly`` print more: ``choice.lines()``)."""
    say(f"judge: {choice.judge} ({choice.reason})", err=True)


class JudgingHooks(TypedDict):
    """The hooks a wiring call that judges takes, as a command that prints no estimate gives
    them (``align``, ``panel``, ``stability``): passed as ``**hooks``."""

    on_judge_chosen: Callable[[JudgeChoice], None]
    on_judging: OnJudging
    on_inputs: Callable[[Inputs], None]


@contextmanager
def judging_hooks(with_labels: bool = True) -> Iterator[JudgingHooks]:
    """The judge chosen said on stderr, a progress bar while judging, and the inputs' warnings
    once they are loaded (``with_labels`` False: a command that reads no labels)."""
    from judge.console import judge_progress

    with judge_progress() as on_judging:
        yield JudgingHooks(
            on_judge_chosen=say_judge_choice,
            on_judging=on_judging,
            on_inputs=warnings_of(with_labels),
        )
