"""`judge audit` as text: the judge and the lexical baseline, and a note when items are few."""

from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.audit import conftest as audit_fixtures
from tests.audit.conftest import sample_label_and_import

#: The audit tests' judged tiny run with a labels file, used here too.
labelled_setup = audit_fixtures.labelled_setup


def test_audit_shows_the_judge_and_the_lexical_baseline(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sample_label_and_import(toml, tmp_path / "sheet.csv")
    capsys.readouterr()
    assert main(["--config", toml, "audit"]) == 0
    out = capsys.readouterr().out
    assert "judge: both scores exact" in out and "lexical baseline: both scores exact" in out
    assert "4 pairs give wide intervals" in out
