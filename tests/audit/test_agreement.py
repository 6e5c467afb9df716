"""The audit gate: agreement below the minimum fails `judge audit`."""

from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.audit.conftest import sample_label_and_import


def test_agreement_below_the_minimum_fails_the_audit_gate(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sample_label_and_import(toml, tmp_path / "sheet.csv")
    capsys.readouterr()
    assert main(["--config", toml, "audit", "--min-agreement", "1.01"]) == 1
    assert "audit gate: FAILED" in capsys.readouterr().out
