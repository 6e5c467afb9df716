"""Sampling items for people to label: every unlabelled item once, never one labelled already."""

import csv
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.audit.conftest import sample_label_and_import


def test_labelled_items_are_not_sampled_again(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    sample_label_and_import(toml, sheet)
    rows = list(csv.DictReader(sheet.read_text(encoding="utf-8-sig").splitlines()))
    assert sorted(r["question_id"] for r in rows) == ["q1", "q2", "q3", "q4"]
    capsys.readouterr()
    # Labelled items are not sampled again.
    assert (
        main(
            ["--config", toml, "audit", "sample", "--n", "4", "--out", str(tmp_path / "again.csv")]
        )
        == 0
    )
    assert "only 0 unlabelled item(s)" in capsys.readouterr().out
