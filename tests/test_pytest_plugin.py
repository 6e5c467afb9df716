"""The pytest plugin (``pytest --judge-config judge.toml``): one test per bar, through pytest's
own ``pytester`` (enabled in tests/conftest.py), on the shipped sample with the lexical judge."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from judge.cli import main
from tests.conftest import REPO, SAMPLE, sample_toml
from tests.pipeline.test_bars import _lowered_run, first_full_marks


def _with_bars(folder: Path) -> Path:
    path = sample_toml(folder)
    assert main(["--config", str(path), "run"]) == 0
    assert main(["--config", str(path), "bars", "suggest", "--write"]) == 0
    return path


def test_one_test_per_bar_on_the_sample(pytester: pytest.Pytester) -> None:
    path = _with_bars(pytester.path / "project")
    # Run from another folder, with the config given relatively: its paths are its own.
    result = pytester.runpytest(
        "--judge-config",
        "project/judge.toml",
        "--judge-backend",
        "lexical",
        "-v",
        "-p",
        "no:randomly",
    )
    # 4 types x faithfulness, relevance; recall@5 for the 3 answerable types
    result.assert_outcomes(passed=11)
    result.stdout.fnmatch_lines(
        ["*judge.toml::faithfulness?factual? PASSED*", "judge: lexical*; report *project/reports/*"]
    )
    assert path.is_file()


def test_a_lowered_answer_fails_the_right_bar_with_its_line(pytester: pytest.Pytester) -> None:
    path = _with_bars(pytester.path / "project")
    qid = first_full_marks(path, "procedural")
    run = _lowered_run(pytester.path, qid)
    path.write_text(
        path.read_text(encoding="utf-8").replace(str(SAMPLE / "run.jsonl"), str(run)),
        encoding="utf-8",
    )
    result = pytester.runpytest("--judge-config", str(path), "-v", "-p", "no:randomly")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1
    # procedural faithfulness: 15 points over 8 (1.875), minus 0.10 -> 1.77; one 2 lost: 13 / 8
    result.stdout.fnmatch_lines(["bar: procedural faithfulness 1.62 < 1.77 (8 questions)"])
    result.stdout.fnmatch_lines(["FAILED *judge.toml::faithfulness?procedural?*"])
    result.stdout.fnmatch_lines(["*judge.toml::faithfulness?factual? PASSED*"])
    result.stdout.fnmatch_lines(["*judge.toml::faithfulness?negative? PASSED*"])


def test_no_judge_config_no_bars(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


def test_a_config_without_bars_is_a_usage_error(pytester: pytest.Pytester) -> None:
    path = sample_toml(pytester.path / "project")
    result = pytester.runpytest("--judge-config", str(path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no [[]bars] table; write one with 'judge bars suggest --write*"])


def _readme_bars() -> str:
    """The README's ``[bars]`` example (the block that replaced the hand-written pytest test)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"```toml\n(.*?)```", readme, flags=re.S):
        if block.startswith("[bars.faithfulness]"):
            return str(block)
    raise AssertionError("README.md has no toml block starting with [bars.faithfulness]")


def test_the_readme_pytest_example_passes_as_written(tmp_path: Path) -> None:
    """The README's bars on the sample set, run as the README runs them (a pytest of its own,
    in the config's folder), pass; one bar raised fails, naming its type and metric."""
    bars = _readme_bars()
    path = sample_toml(tmp_path, extra="\n" + bars)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["--judge-config", "judge.toml", "--judge-backend", "lexical"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{bars.count(' = ')} passed" in done.stdout
    strict = bars.replace("factual = 1.23", "factual = 1.99")
    assert strict != bars
    path.write_text(path.read_text(encoding="utf-8").replace(bars, strict), encoding="utf-8")
    failed = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert failed.returncode == 1
    assert "bar: factual faithfulness 1.33 < 1.99 (12 questions)" in failed.stdout
