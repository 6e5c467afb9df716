"""``judge.cli.audit``: ``judge audit`` on the command line; with the lexical judge its
figures are the baseline's, printed in one section (issue 22, item 7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.audit.conftest import sample_label_and_import
from tests.conftest import REPO, SAMPLE, run_lexical, sample_toml

Tiny = Callable[..., Config]


def test_audit_with_the_lexical_judge_prints_its_figures_once(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert run_lexical(config) == 0
    assert config.source is not None
    toml = str(config.source)
    sample_label_and_import(toml, tmp_path / "sheet.csv")
    capsys.readouterr()
    assert main(["--config", toml, "audit"]) == 0
    out = capsys.readouterr().out
    assert "the judge is the lexical baseline: its figures are the baseline's, shown once" in out
    assert out.count("both scores exact") == 1
    assert "lexical baseline: both scores exact" not in out
    assert out.count("  faithfulness\n") == 2  # the agreement table once, the corrected one
    assert "both scored on these" not in out


def test_align_on_the_command_line_names_the_guard_that_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = sample_toml(tmp_path)
    text = toml.read_text(encoding="utf-8").replace(
        'run = "', f'labels = "{SAMPLE / "labels.jsonl"}"\nrun = "'
    )
    toml.write_text(text, encoding="utf-8")
    code = main(["--config", str(toml), "align", "--k", "2", "--folds", "3", "--dry-run"])
    assert code == 0
    out = capsys.readouterr().out
    # The lexical baseline reads no prompt: a variant cannot change a verdict.
    assert "k=2: exact agreement (both axes)" in out
    assert "keep the current prompt: guard 1 (primary) decided" in out
    assert "report: " in out
    assert (REPO / "prompts" / "judge.v2.md").exists() is False
