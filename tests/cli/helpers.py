"""What the tests of the command line share: the configuration file of a test set, and a
command's help as argparse prints it."""

from __future__ import annotations

import argparse

from judge.config import Config


def toml_of(config: Config) -> str:
    """The path of the configuration file ``config`` was read from, as ``--config`` takes it."""
    assert config.source is not None
    return str(config.source)


def help_of(*command: str) -> str:
    """A command's help as argparse prints it, on one line."""
    from judge.cli import build_parser

    parser = build_parser()
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return " ".join(parser.format_help().split())
