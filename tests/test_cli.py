"""The command line as a whole (``judge.cli``): the parser (--version, --config before or after
the command, help for every option, the exit codes in the epilog, a help that imports nothing
heavy, the backends it offers) and a missing configuration in one line. Each command group's
tests are in tests/cli/test_<group>.py."""

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.cli.helpers import help_of, toml_of
from tests.conftest import REPO

Tiny = Callable[..., Config]


def test_missing_config_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(tmp_path / "nope.toml"), "check"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {tmp_path / 'nope.toml'}: configuration file not found "
        "(copy judge.toml from the repo)"
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"judge {metadata.version('judge')}"


def test_config_goes_before_or_after_the_command(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = toml_of(tiny())
    assert main(["check", "--no-judge", "--config", toml]) == 0
    assert main(["--config", toml, "check", "--no-judge"]) == 0
    assert main(["cache", "stats", "--config", toml]) == 0
    assert main(["audit", "sample", "--n", "1", "--config", toml]) == 2  # no runs yet
    assert "no runs in" in capsys.readouterr().err


def test_every_option_has_help() -> None:
    import argparse

    from judge.cli import build_parser

    missing = []

    def visit(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    visit(sub, f"{path} {name}")
            elif not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    visit(build_parser(), "judge")
    assert missing == []


def test_the_epilog_lists_every_exit_code_of_the_code() -> None:
    """Every ``EXIT_*`` of judge.errors, and 128 + each signal judge.signals handles."""
    import judge.errors
    from judge import signals

    codes = {v for k, v in vars(judge.errors).items() if k.startswith("EXIT_")}
    codes |= {128 + int(s) for s in signals.HANDLED}
    assert {0, 1, 2, 3, 130, 143} <= codes
    epilog = help_of().split("exit codes:", 1)[1].strip()
    listed = {int(n) for n in re.findall(r"(?:^|, )(\d+) ", epilog)}
    assert listed == codes


def test_help_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom judge.cli import build_parser\nbuild_parser().format_help()\n"
        "print(sorted(m for m in ('pandas', 'pydantic', 'httpx', 'rich', 'ollama') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"


def test_the_backend_choices_are_the_configs() -> None:
    from typing import get_args

    from judge.cli import BACKENDS
    from judge.config import BackendName

    assert get_args(BackendName) == BACKENDS


def test_the_problem_count_is_the_count_of_error_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A problem of two lines printed as two, the same problem twice printed once, and the
    count under them theirs (it said "3 problems" under two errors)."""
    import argparse

    import judge.cli
    import judge.cli.inputs
    from judge.errors import InputError

    def failing(args: argparse.Namespace) -> int:
        raise InputError(
            ["q.jsonl: line 1: bad\nq.jsonl: line 2: bad", "c.jsonl: empty", "c.jsonl: empty"]
        )

    monkeypatch.setattr(judge.cli.inputs, "cmd_check", failing)
    assert judge.cli.main(["check"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "error: q.jsonl: line 1: bad",
        "error: q.jsonl: line 2: bad",
        "error: c.jsonl: empty",
        "3 problems; nothing was evaluated",
    ]
