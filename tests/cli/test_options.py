"""``judge.cli.options``: the range every numeric option checks while argparse parses (its
words and its refusals), ``--config`` before or after a command of a group, and --version."""

from __future__ import annotations

import argparse

import pytest

from judge.cli.options import BACKENDS, Commands, Number, backend_option


@pytest.mark.parametrize(
    ("number", "words"),
    [
        (Number(int, 1), "an integer of at least 1"),
        (Number(float, 0, 1), "a number from 0 to 1"),
        (Number(float, 0, above=True), "a number above 0"),
        (Number(int, high=5), "an integer of at most 5"),
        (Number(float, 0.5, 2.25), "a number from 0.5 to 2.25"),
        (Number(float), "a number"),
    ],
)
def test_a_number_describes_its_range_in_words(number: Number, words: str) -> None:
    assert number.describe() == words


def test_a_number_is_named_for_its_kind_as_argparse_names_a_type() -> None:
    assert (Number(int, 1).__name__, Number(float).__name__) == ("int", "float")


@pytest.mark.parametrize(
    ("number", "text", "said"),
    [
        (Number(int, 1), "0", "must be an integer of at least 1, not 0"),
        (Number(int, 1), "x", "must be an integer of at least 1, not 'x'"),
        (Number(int, 1), "1.5", "must be an integer of at least 1, not '1.5'"),
        (Number(float, 0, above=True), "0", "must be a number above 0, not 0"),
        (Number(float, 0, 1), "1.5", "must be a number from 0 to 1, not 1.5"),
        (Number(float, 0, 1), "-0.1", "must be a number from 0 to 1, not -0.1"),
        (Number(float, 0, 1), "nan", "must be a number from 0 to 1, not nan"),
        (Number(float, 0, 1), "inf", "must be a number from 0 to 1, not inf"),
        (Number(float), "-inf", "must be a number, not -inf"),
        (Number(int, high=5), "6", "must be an integer of at most 5, not 6"),
    ],
)
def test_a_number_out_of_its_range_is_refused_in_words(
    number: Number, text: str, said: str
) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        number(text)
    assert str(caught.value) == said


def test_a_number_in_range_is_its_value_bounds_included_unless_above() -> None:
    assert Number(int, 1)("1") == 1 and isinstance(Number(int, 1)("3"), int)
    assert Number(float, 0, 1)("0") == 0.0 and Number(float, 0, 1)("1") == 1.0
    assert Number(float, 0, above=True)("0.001") == 0.001
    assert Number(int, high=5)("-7") == -7


def test_argparse_refuses_a_number_out_of_range_with_exit_2_naming_the_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser(prog="judge stability")
    parser.add_argument("--sample", type=Number(int, 1))
    assert parser.parse_args(["--sample", "3"]).sample == 3
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--sample", "0"])
    assert exited.value.code == 2
    assert (
        "judge stability: error: argument --sample: must be an integer of at least 1, not 0"
        in capsys.readouterr().err
    )


def test_a_group_takes_config_after_its_command_without_overwriting_the_one_before() -> None:
    # As judge.cli.build_parser: the top level's --config has the default.
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="judge.toml")
    seen: list[str] = []

    def handler(args: argparse.Namespace) -> int:
        seen.append(args.config)
        return 0

    group = Commands(parser, "command")
    sub = group.add("stats", handler, "the cache's size")
    assert sub.description == "the cache's size"
    before = parser.parse_args(["--config", "a.toml", "stats"])
    after = parser.parse_args(["stats", "--config", "b.toml"])
    neither = parser.parse_args(["stats"])
    assert (before.config, after.config, neither.config) == ("a.toml", "b.toml", "judge.toml")
    assert before.handler(before) == 0 and seen == ["a.toml"]
    assert before.command == "stats"


def test_a_required_group_refuses_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="judge cache")
    Commands(parser, "command").add("stats", None, "the cache's size")
    with pytest.raises(SystemExit) as exited:
        parser.parse_args([])
    assert exited.value.code == 2
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err
    optional = argparse.ArgumentParser()
    Commands(optional, "command", required=False).add("stats", None, "the cache's size")
    assert optional.parse_args([]).command is None


def test_the_backend_option_offers_exactly_the_backends(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    backend_option(parser)
    assert parser.parse_args([]).backend is None
    assert [parser.parse_args(["--backend", b]).backend for b in BACKENDS] == list(BACKENDS)
    with pytest.raises(SystemExit):
        parser.parse_args(["--backend", "gpt"])
    assert "invalid choice: 'gpt'" in capsys.readouterr().err
