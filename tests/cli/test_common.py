"""``judge.cli.common``: what every command prints passes through ``terminal_text`` (no control
character of the data reaches the terminal; one-line text cannot start a line of its own),
warnings go to stderr one per line, and ``--config`` is read from the path given."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import cast

import pytest

from judge.cli.common import DEFAULT_CONFIG, config_of, say, say_lines, warn, warnings_of
from judge.errors import ConfigError
from judge.pipeline.inputs import Inputs
from tests.conftest import REPO


def test_say_escapes_control_characters_and_keeps_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    say("title\x1b]0;pwned\x07\nnext\tcell\r\nend")
    say(3)
    say()
    captured = capsys.readouterr()
    assert captured.out == "title\\x1b]0;pwned\\x07\nnext\tcell\nend\n3\n\n"
    assert captured.err == ""


def test_say_one_line_and_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    say("q1\nok: all good", err=True, one_line=True)
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "q1\\nok: all good\n")


def test_say_lines_prints_each_line_of_a_view_as_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    say_lines(["first", "an id with\na newline", "\u202eevil"])
    say_lines(iter(["to stderr"]), err=True)
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["first", "an id with\\na newline", "\\u202eevil"]
    assert captured.err == "to stderr\n"


def test_warn_prints_one_warning_line_each_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    warn(["document 'a' quotes 2 golden questions", "two\nlines"])
    warn([])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "warning: document 'a' quotes 2 golden questions\nwarning: two\\nlines\n"
    )


class _Inputs:
    """Stands for ``Inputs``: records what ``warnings`` was asked for."""

    def __init__(self) -> None:
        self.asked: list[bool] = []

    def warnings(self, with_labels: bool = True) -> list[str]:
        self.asked.append(with_labels)
        return [f"labels {'in' if with_labels else 'out'}"]


@pytest.mark.parametrize(("with_labels", "said"), [(True, "in"), (False, "out")])
def test_warnings_of_prints_the_inputs_warnings_once_loaded(
    with_labels: bool, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    on_inputs = warnings_of(with_labels)
    inputs = _Inputs()
    assert capsys.readouterr().err == ""  # nothing before the inputs are loaded
    on_inputs(cast(Inputs, inputs))
    assert inputs.asked == [with_labels]
    assert capsys.readouterr().err == f"warning: labels {said}\n"


def test_warnings_of_keeps_the_labels_warning_by_default() -> None:
    inputs = _Inputs()
    warnings_of()(cast(Inputs, inputs))
    assert inputs.asked == [True]


def test_config_of_reads_the_path_given(tmp_path: Path) -> None:
    assert DEFAULT_CONFIG == "judge.toml"
    config = config_of(argparse.Namespace(config=str(REPO / "judge.toml")))
    assert config.source is not None and Path(config.source) == REPO / "judge.toml"
    with pytest.raises(ConfigError, match="configuration file not found"):
        config_of(argparse.Namespace(config=str(tmp_path / "none.toml")))
