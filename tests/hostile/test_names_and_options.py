"""Options checked before anything is opened, one server under two names, invisible ids,
control characters in names and comments, an empty batch output.

Classes of the hardening matrix (issue 20), a case per option, file or field that shares one:

- **an option out of range**: every numeric option of every command, found by walking the
  parser, is refused while the arguments are parsed (exit 2), before a config, an adapter, a
  judge or a cache is opened: ``judge stability --sample 0`` with no Ollama is a bad option;
- **one server listed twice**: ``localhost`` and ``127.0.0.1`` (and ``::1``, a missing
  default port) in ``judge.ollama.endpoints`` and ``judge.openai.endpoints``;
- **an invisible id**: the Hangul fillers and their kin in a question id, a chunk id and a
  run's retrieved id;
- **control characters in a person's text**: a sheet's labeller and note, a marks file's
  reviewer and comment, ``--labeller``;
- **an empty batch output**: a 0-byte results file is named and refused.
"""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.cli import Number, build_parser, main
from judge.config import Config
from tests.conftest import CORPUS, QUESTIONS, RUN

Tiny = Callable[..., Config]


def _numeric_options() -> Iterator[tuple[list[str], argparse.Action]]:
    """(command words, action) of every option whose value is a number, in every sub-parser."""

    def walk(
        parser: argparse.ArgumentParser, words: list[str]
    ) -> Iterator[tuple[list[str], argparse.Action]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, [*words, name])
            elif action.type is not None and (
                isinstance(action.type, Number) or action.type in (int, float)
            ):
                yield words, action

    yield from walk(build_parser(), [])


OPTIONS = list(_numeric_options())


def _required(words: list[str]) -> list[str]:
    """The other arguments a command needs to parse at all."""
    extra = {"show": ["q1"], "diff": ["a", "b"], "import": ["FILE"]}.get(words[-1], [])
    if words[-1] == "prune":
        extra = ["--days", "1"]
    if words[-2:] == ["audit", "sample"]:
        extra = ["--n", "1"]
    return extra


def test_the_walk_finds_every_numeric_option() -> None:
    found = {(" ".join(words), action.option_strings[0]) for words, action in OPTIONS}
    assert {
        ("run", "--concurrency"),
        ("sweep", "--judge-top"),
        ("stability", "--sample"),
        ("stability", "--seed"),
        ("audit", "--min-kappa"),
        ("audit", "--min-agreement"),
        ("audit", "--limit"),
        ("audit sample", "--n"),
        ("audit sample", "--oversample-uncertain"),
        ("audit sample", "--seed"),
        ("cache prune", "--days"),
        ("batch export", "--max-file-mb"),
    } <= found


@pytest.mark.parametrize(
    ("words", "action"), OPTIONS, ids=lambda x: x if isinstance(x, str) else None
)
def test_every_numeric_option_declares_its_range(words: list[str], action: argparse.Action) -> None:
    assert isinstance(action.type, Number), (
        f"judge {' '.join(words)} {action.option_strings[0]}: give it a Number(...) type, so that "
        "a value out of range is refused while the arguments are parsed"
    )


def _values_outside(number: Number) -> list[str]:
    bad = ["x", "nan"] if number.kind is float else ["x", "1.5"]
    if number.kind is float:
        bad.append("inf")
    if number.low is not None:
        bad.append(f"{number.low:g}" if number.above else f"{number.low - 1:g}")
    if number.high is not None:
        bad.append(f"{number.high + 1:g}")
    return bad


@pytest.mark.parametrize(
    ("words", "action"),
    OPTIONS,
    ids=[f"{' '.join(w)} {a.option_strings[0]}" for w, a in OPTIONS],
)
def test_an_option_out_of_range_is_refused_before_anything_is_opened(
    words: list[str],
    action: argparse.Action,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No config file exists here: an option that got past the parser would exit on it."""
    monkeypatch.chdir(tmp_path)
    number = action.type
    assert isinstance(number, Number)
    option = action.option_strings[0]
    for value in _values_outside(number):
        with pytest.raises(SystemExit) as stopped:
            main([*words, *_required(words), f"{option}={value}"])
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert f"argument {option}: must be {number.describe()}, not " in err, err
        assert not list(tmp_path.iterdir())  # nothing created, nothing opened


def test_stability_with_sample_0_and_no_ollama_is_a_bad_option(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(extra_toml='\n[judge.ollama]\nhost = "http://127.0.0.1:9"\n')
    assert config.source is not None
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(config.source), "stability", "--backend", "ollama", "--sample", "0"])
    assert stopped.value.code == 2
    assert "argument --sample: must be an integer of at least 1, not 0" in capsys.readouterr().err


def test_a_number_in_range_is_taken() -> None:
    args = build_parser().parse_args(["stability", "--sample", "1", "--seed", "-3"])
    assert (args.sample, args.seed) == (1, -3)
    # A bar no audit can pass is a bar (a test of the gate itself): only a number is asked for.
    args = build_parser().parse_args(["audit", "--min-kappa", "-1", "--min-agreement", "1.01"])
    assert (args.min_kappa, args.min_agreement) == (-1.0, 1.01)


# --- one server listed twice ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "field", "first", "second", "server"),
    [
        ("ollama", "host", "http://127.0.0.1:11434", "http://localhost:11434", "127.0.0.1:11434"),
        ("ollama", "host", "localhost:11434", "http://[::1]:11434/", "127.0.0.1:11434"),
        ("ollama", "host", "gpu1", "http://GPU1:11434", "gpu1:11434"),
        ("openai", "base_url", "http://localhost:8000/v1", "http://127.0.0.1:8000/v1/", ""),
        ("openai", "base_url", "https://v.example/v1", "https://v.example:443/v1", ""),
    ],
)
def test_one_server_under_two_names_is_refused_as_a_duplicate(
    tmp_path: Path, backend: str, field: str, first: str, second: str, server: str
) -> None:
    from judge.config import load_config
    from judge.errors import ConfigError

    toml = tmp_path / "judge.toml"
    toml.write_text(
        f'[data]\nquestions = "q"\ncorpus = "c"\n[judge.{backend}]\nendpoints = ['
        f'{{{field} = "{first}", concurrency = 2}}, {{{field} = "{second}", concurrency = 2}}]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(toml)
    (line,) = str(caught.value).splitlines()
    assert (
        f"endpoints lists {field} {first.rstrip('/')} and {second.rstrip('/')}, the same " in line
    )
    assert server in line and "give each server once" in line


def test_two_servers_on_one_host_are_two(tmp_path: Path) -> None:
    from judge.config import load_config

    toml = tmp_path / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "q"\ncorpus = "c"\n[judge.ollama]\nendpoints = ['
        '{host = "http://localhost:11434", concurrency = 2}, '
        '{host = "http://localhost:11435", concurrency = 2}]\n',
        encoding="utf-8",
    )
    endpoints = load_config(toml).judge.ollama.endpoints
    assert endpoints is not None and len(endpoints) == 2


# --- an invisible id -----------------------------------------------------------------------------

FILLERS = ["\u3164", "\u115f", "\u1160", "\uffa0", "\u2800", "\u034f", "\ufe0f"]


@pytest.mark.parametrize("filler", FILLERS, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("where", ["question id", "chunk id", "retrieved id"])
def test_an_id_with_an_invisible_filler_is_refused(
    where: str, filler: str, tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    questions, corpus, run = copy.deepcopy(QUESTIONS), copy.deepcopy(CORPUS), copy.deepcopy(RUN)
    if where == "question id":
        questions[0]["id"] = f"q{filler}1"
        expected_file = "questions.jsonl:1"
    elif where == "chunk id":
        corpus[4]["chunk_id"] = f"widgets{filler}/sizes"
        expected_file = "corpus.jsonl:5"
    else:
        run[1]["retrieved"][1]["chunk_id"] = f"pricing/trial{filler}"
        expected_file = "run.jsonl:2"
    config = tiny(questions=questions, corpus=corpus, run=run)
    assert config.source is not None
    assert main(["--config", str(config.source), "check", "--no-judge"]) == 2
    err = capsys.readouterr().err
    assert f"{expected_file}: " in err
    assert f"contains U+{ord(filler):04X} (" in err
    assert "ids may not contain whitespace, control or invisible characters" in err


# --- control characters in a person's text ------------------------------------------------------

HASH = "a" * 64


def _labels_config(tiny: Tiny, tmp_path: Path) -> Path:
    config = tiny(extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert config.source is not None
    return config.source


@pytest.mark.parametrize(
    ("labeller", "note", "said"),
    [
        ("ana\x1b[31m", "", "labeller contains U+001B"),
        ("ana\u202e", "", "labeller contains U+202E"),
        ("ana\tlima", "", "labeller contains U+0009 (a tab)"),
        ("ana", "ok\x07", "note contains U+0007"),
        ("ana", "ok \x1b]0;x\x07", "note contains U+001B"),
    ],
)
def test_a_sheet_with_control_characters_in_a_name_or_note_is_refused(
    labeller: str,
    note: str,
    said: str,
    tiny: Tiny,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    toml = _labels_config(tiny, tmp_path)
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(
        "question_id,answer_sha256,faithfulness,relevance,labeller,note\n"
        f'q1,{HASH},2,2,"{labeller}","{note}"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "audit", "import", str(sheet)]) == 2
    err = capsys.readouterr().err
    assert f"{sheet}: row 2 (q1): {said}" in err
    assert "\x1b" not in err and "\x07" not in err
    assert not (tmp_path / "labels.jsonl").exists()


def test_a_note_with_line_breaks_and_tabs_is_kept(tiny: Tiny, tmp_path: Path) -> None:
    toml = _labels_config(tiny, tmp_path)
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(
        "question_id,answer_sha256,faithfulness,relevance,labeller,note\n"
        f'q1,{HASH},2,2,山田\u3000太郎,"two\nlines\tand a tab"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "audit", "import", str(sheet)]) == 0
    (stored,) = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert (stored["labeller"], stored["note"]) == ("山田\u3000太郎", "two\nlines\tand a tab")


def _marks(path: Path, reviewer: str, comment: str) -> Path:
    mark = {
        "question_id": "q1",
        "answer_sha256": HASH,
        "judge_fingerprint": "judge:x",
        "agree": False,
        "faithfulness": 1,
        "relevance": 2,
        "comment": comment,
        "marked_at": "2026-12-01T00:00:00Z",
    }
    path.write_text(
        json.dumps(
            {"format": "judge-review-marks", "version": 1, "reviewer": reviewer, "marks": [mark]}
        ),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("reviewer", "comment", "said"),
    [
        ("bo\x07", "", ": the reviewer: labeller contains U+0007"),
        ("bo\u200b", "", ": the reviewer: labeller contains U+200B"),
        ("bo", "bad \x1b[2J", ": mark 1 (q1): comment contains U+001B"),
        ("bo", "\u202eevil", ": mark 1 (q1): comment contains U+202E"),
    ],
)
def test_a_marks_file_with_control_characters_in_the_reviewer_or_a_comment_is_refused(
    reviewer: str,
    comment: str,
    said: str,
    tiny: Tiny,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    toml = _labels_config(tiny, tmp_path)
    marks = _marks(tmp_path / "marks.json", reviewer, comment)
    assert main(["--config", str(toml), "audit", "import", str(marks)]) == 2
    err = capsys.readouterr().err
    assert f"{marks}{said}" in err, err
    assert not (tmp_path / "labels.jsonl").exists()


def test_a_labeller_option_with_control_characters_is_refused(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _labels_config(tiny, tmp_path)
    assert main(["--config", str(toml), "audit", "label", "--labeller", "cy\x1b[0m"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --labeller: contains U+001B")
    assert not (tmp_path / "labels.jsonl").exists()


# --- an empty batch output ----------------------------------------------------------------------


def test_a_zero_byte_batch_results_file_is_named_and_refused(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.pipeline.batch import export_batch

    config = tiny()
    assert config.source is not None
    exported = export_batch(config)
    empty = exported.out_dir / "results-1.jsonl"
    empty.write_bytes(b"")
    assert main(["--config", str(config.source), "batch", "import", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: {empty}: the file is empty (0 bytes), not a batch engine's output; import the "
        "files the engine wrote (a download or a copy cut short leaves an empty file)"
    ]
