"""The parser's parts every command group uses: numeric options with their range, the shared
options (``--config``, ``--run``, ``--junit``, ...), ``--backend`` and the sub-command groups."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from judge.cli.common import DEFAULT_CONFIG

#: judge.judging.backends.openai_batch.BATCH_MAX_FILE_MB, as a literal so that 'judge --help' imports nothing
#: (tests/pipeline/test_batch.py checks they agree).
DEFAULT_BATCH_FILE_MB = 100.0


Handler = Callable[[argparse.Namespace], int]


class Number:
    """The type of every numeric option, with its range: the one rule that checks options
    before anything is opened. argparse refuses a value out of range while it parses (exit 2,
    one line naming the option), so ``judge stability --sample 0`` is a bad option even when
    no judge answers, and no command loads a config, asks an adapter or opens a cache with a
    value it would refuse later. ``tests/test_cli.py`` walks the parser: every option with a
    type of int or float has one of these."""

    def __init__(
        self,
        kind: type[int] | type[float],
        low: float | None = None,
        high: float | None = None,
        *,
        above: bool = False,
    ) -> None:
        self.kind, self.low, self.high, self.above = kind, low, high, above
        self.__name__ = kind.__name__  # argparse names the type in its "invalid ..." message

    def describe(self) -> str:
        """The range in words ("an integer of at least 1", "a number from 0 to 1")."""
        noun = "an integer" if self.kind is int else "a number"
        low, high = (f"{v:g}" if v is not None else None for v in (self.low, self.high))
        if low is not None and high is not None:
            return f"{noun} from {low} to {high}"
        if low is not None:
            return f"{noun} {'above' if self.above else 'of at least'} {low}"
        if high is not None:
            return f"{noun} of at most {high}"
        return noun

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {text!r}") from None
        finite = value == value and value not in (float("inf"), float("-inf"))
        low_ok = self.low is None or (value > self.low if self.above else value >= self.low)
        high_ok = self.high is None or value <= self.high
        if not (finite and low_ok and high_ok):
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {text}")
        return value


# --config works before and after the command: every sub-parser accepts it too, with a default
# that does not overwrite the one given before the command.
CONFIG_OPTION = argparse.ArgumentParser(add_help=False)
CONFIG_OPTION.add_argument(
    "--config", default=argparse.SUPPRESS, help=f"configuration file (default: {DEFAULT_CONFIG})"
)
ANSWER_OPTIONS = argparse.ArgumentParser(add_help=False)
ANSWER_OPTIONS.add_argument(
    "--run", type=Path, help="a run file (overrides data.run / data.adapter)"
)
ANSWER_OPTIONS.add_argument(
    "--fresh-answers",
    action="store_true",
    help="ask the adapter again instead of reusing its saved answers",
)
CI_OPTIONS = argparse.ArgumentParser(add_help=False)
CI_OPTIONS.add_argument("--junit", metavar="FILE", help="write the gate as JUnit XML")
CI_OPTIONS.add_argument("--json", metavar="FILE", help="write a JSON summary of the run")
FOLDER_HELP = "a report folder: a path, a name under reports/, or latest (the default)"


class Commands:
    """A group of sub-commands, each taking --config and the given shared options."""

    def __init__(self, parser: argparse.ArgumentParser, dest: str, required: bool = True) -> None:
        self.group = parser.add_subparsers(dest=dest, required=required, metavar="COMMAND")

    def add(
        self, name: str, handler: Handler | None, text: str, *parents: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        sub = self.group.add_parser(
            name, help=text, description=text, parents=[CONFIG_OPTION, *parents]
        )
        if handler is not None:
            sub.set_defaults(handler=handler)
        return sub


class Version(argparse.Action):
    """--version, looked up only when asked (package metadata costs a few tens of ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from judge import __version__

        print(f"judge {__version__}")
        parser.exit()


#: ``judge.config.BackendName``'s values, spelled out: importing the config (pydantic) would
#: triple the time ``judge --help`` takes (tests/test_cli.py checks the two agree).
BACKENDS = ("auto", "ollama", "embedded", "openai", "lexical")


def backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the judge (overrides judge.backend)",
    )
