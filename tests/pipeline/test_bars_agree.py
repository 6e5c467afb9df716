"""Bars, pytest and the nightly agree whatever judgements are on (issue 33, item 1): on the
shipped sample with the lexical judge, every combination of chunk grades on or off, correctness
on or off and bars on or off gives the same decision in ``judge run``, the nightly's first line,
its exit code and its ``--json`` verdict; with chunks and correctness on, the bars that
``judge bars suggest`` wrote pass in ``run --bars``, the pytest plugin and ``nightly --json``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import load_config
from tests.conftest import REPO, sample_toml

#: Every bar metric the sample has with both optional judgements on.
METRICS = ["faithfulness", "relevance", "correctness", "recall@5"]


def _config(folder: Path, chunks: bool, correctness: bool) -> Path:
    prompts = REPO / "prompts"
    extra = ""
    if chunks:
        extra += f'\n[judge.chunks]\nenabled = true\nprompt = "{prompts / "chunk.v1.md"}"\n'
    if correctness:
        extra += (
            f'\n[judge.correctness]\nenabled = true\nprompt = "{prompts / "correctness.v1.md"}"\n'
        )
    return sample_toml(folder, extra=extra)


def _nightly(path: Path, summary: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The nightly's exit code and first line, checked against its own ``--json`` summary."""
    capsys.readouterr()
    code = main(["--config", str(path), "nightly", "--json", str(summary)])
    first = capsys.readouterr().out.splitlines()[0]
    written = json.loads(summary.read_text(encoding="utf-8"))
    assert first == f"nightly: {written['verdict']}"
    assert code == written["exit_code"]
    return code, first


def _suggest(path: Path, correctness: bool) -> int:
    metrics = [m for m in METRICS if correctness or m != "correctness"]
    args = [arg for metric in metrics for arg in ("--metric", metric)]
    assert main(["--config", str(path), "bars", "suggest", "--write", *args]) == 0
    return sum(map(len, load_config(path).bars.values()))


@pytest.mark.parametrize(
    ("chunks", "correctness"), list(itertools.product([False, True], repeat=2))
)
def test_run_nightly_and_json_agree_with_bars_on_and_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], chunks: bool, correctness: bool
) -> None:
    path = _config(tmp_path, chunks, correctness)
    assert main(["--config", str(path), "run"]) == 0
    # bars off: the nightly compares with the run before it, and nothing moved
    assert _nightly(path, tmp_path / "off.json", capsys) == (0, "nightly: ok: no regression")
    # bars on: today's values minus the margin are met, by run --bars and by the nightly
    total = _suggest(path, correctness)
    capsys.readouterr()
    assert main(["--config", str(path), "run", "--bars", "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert f"bars: {total} of {total} met" in out
    assert "got no answer or no verdict" not in out
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert written["verdict"] == "ok: no regression"
    assert f"gate: {written['verdict']}" in out
    assert _nightly(path, tmp_path / "on.json", capsys) == (0, "nightly: ok: no regression")
    checks = json.loads((tmp_path / "on.json").read_text(encoding="utf-8"))["checks"]
    bars = [c for c in checks if c["kind"] == "bar"]
    assert len(bars) == total
    assert all(c["passed"] for c in bars)


def test_bars_with_chunks_and_correctness_pass_in_run_pytest_and_nightly(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Done-when of issue 33: the sample with chunks and correctness on, ``[bars]`` from
    ``bars suggest``, through ``run --bars``, the pytest plugin and ``nightly --json``."""
    folder = pytester.path / "project"
    path = _config(folder, chunks=True, correctness=True)
    assert main(["--config", str(path), "run"]) == 0
    total = _suggest(path, correctness=True)
    assert load_config(path).bars.get("correctness")
    capsys.readouterr()
    assert main(["--config", str(path), "run", "--bars"]) == 0
    assert f"bars: {total} of {total} met" in capsys.readouterr().out
    result = pytester.runpytest(
        "--judge-config", str(path), "--judge-backend", "lexical", "-p", "no:randomly"
    )
    result.assert_outcomes(passed=total)
    assert _nightly(path, folder / "n.json", capsys) == (0, "nightly: ok: no regression")
