"""``judge.report.sweep``: a sweep's folder files from its outcome: what to do first (adopt with
a snippet to paste, or keep the defaults naming the guard that decided), then the evidence in
sweep.md, the same decision in sweep.json, and the files written being these."""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.config import load_config
from judge.pipeline.sweep import sweep
from judge.report.sweep import FORMAT_VERSION, decision_lines, sweep_files, sweep_json
from judge.sweep.outcome import SweepOutcome
from tests.sweep.conftest import ADAPTER, ORACLE_GRID, REPO, SAMPLE

#: ORACLE_GRID with the clearly better setting as the default already: nothing to change.
ORACLE_DEFAULT = ORACLE_GRID.replace('order = "reversed"', 'order = "oracle"')


@pytest.fixture
def swept(tmp_path: Path) -> Iterator[Callable[[str], SweepOutcome]]:
    """``swept(grid_toml)``: the outcome of a sweep (no judge) of the sample over the sweep
    tests' RAG system (tests/sweep/conftest.py), its folder written."""
    (tmp_path / "sweep_rag.py").write_text(ADAPTER, encoding="utf-8")

    def run(grid: str) -> SweepOutcome:
        path = tmp_path / "judge.toml"
        path.write_text(
            f'[data]\nquestions = "{SAMPLE / "questions.jsonl"}"\n'
            f'corpus = "{SAMPLE / "corpus.jsonl"}"\nrun = "{SAMPLE / "run.jsonl"}"\n'
            f'[judge]\nbackend = "lexical"\ncache_path = "{tmp_path / "cache.sqlite3"}"\n'
            f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
            f'[reports]\ndir = "{tmp_path / "reports"}"\n'
            f'[sweep]\nanswer = "sweep_rag:answer"\n{grid}\n',
            encoding="utf-8",
        )
        return sweep(load_config(path), judge=False)

    yield run
    sys.modules.pop("sweep_rag", None)


def test_an_adopted_setting_is_said_first_with_its_snippet(
    swept: Callable[[str], SweepOutcome],
) -> None:
    outcome = swept(ORACLE_GRID)
    lines = decision_lines(outcome)
    assert lines[0].startswith(
        'adopt order="oracle", noise=0: every guard passed (held-out gain of ndcg@5 +0.984, '
    )
    assert lines[0].endswith("paired SE, stable in 17/17 folds)")
    assert lines[1:] == [
        "paste into judge.toml, and set the same values in your RAG system:",
        "[sweep.default]",
        'order = "oracle"',
        "noise = 0",
    ]
    text = sweep_files(outcome)["sweep.md"]
    assert text.startswith(f"# Sweep {outcome.folder.name}\n\n**Outcome: adopt order=")
    snippet = text.split("```toml\n")[1].split("```")[0]
    assert tomllib.loads(snippet) == {"sweep": {"default": {"order": "oracle", "noise": 0}}}
    assert "| differs | yes |" in text and "**no**" not in text.split("## Guards")[1][:600]
    assert "ndcg@5: 17 better, 0 worse, 0 equal." in text


def test_keeping_the_defaults_names_the_guard_that_decided(
    swept: Callable[[str], SweepOutcome],
) -> None:
    outcome = swept(ORACLE_DEFAULT)
    [line] = decision_lines(outcome)
    assert line.startswith(
        "keep the defaults (order=\"oracle\", noise=0): guard 'differs' decided: the default "
    )
    assert line.endswith("nothing to change")
    text = sweep_files(outcome)["sweep.md"]
    assert "```toml" not in text  # nothing to paste
    assert "The best setting is the default: no question changes." in text
    data = sweep_json(outcome)
    assert data["outcome"] == {
        "adopt": False,
        "setting": {"order": "oracle", "noise": 0},
        "decided_by": "differs",
        "snippet": None,
    }


def test_sweep_json_carries_the_decision_and_every_setting(
    swept: Callable[[str], SweepOutcome],
) -> None:
    outcome = swept(ORACLE_GRID)
    data = sweep_json(outcome)
    assert data["format_version"] == FORMAT_VERSION == 1
    assert (data["adapter"], data["primary"]) == ("sweep_rag:answer", "ndcg@5")
    assert data["default"] == {"order": "reversed", "noise": 0}
    assert data["outcome"] == {
        "adopt": True,
        "setting": {"order": "oracle", "noise": 0},
        "decided_by": None,
        "snippet": '[sweep.default]\norder = "oracle"\nnoise = 0',
    }
    assert [g["name"] for g in data["guards"]] == [
        "differs",
        "gain",
        "significant",
        "stable",
        "secondary",
    ]
    assert all(g["passed"] for g in data["guards"])
    assert len(data["settings"]) == 6 and all(s["judge"] is None for s in data["settings"])
    assert data["winner"]["n"] == 17 and data["winner"]["worse"] == 0


def test_the_folder_holds_exactly_the_files_rendered(swept: Callable[[str], SweepOutcome]) -> None:
    outcome = swept(ORACLE_GRID)
    files = sweep_files(outcome)
    assert sorted(files) == ["primary.svg", "sweep.json", "sweep.md"]
    assert sorted(p.name for p in outcome.folder.iterdir()) == sorted(files)
    for name, text in files.items():
        assert (outcome.folder / name).read_text(encoding="utf-8") == text, name
    assert json.loads(files["sweep.json"]) == json.loads(json.dumps(sweep_json(outcome)))
    assert files["primary.svg"].startswith('<svg xmlns="http://www.w3.org/2000/svg"')
