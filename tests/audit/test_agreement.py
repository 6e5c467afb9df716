"""The audit gate: agreement below the minimum fails `judge audit`."""

from pathlib import Path

import pytest

from judge.audit.agreement import audit_items
from judge.cli import main
from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels_if_any
from judge.record.store import ReportsDir
from tests.audit.conftest import HUMAN, sample_label_and_import


def test_agreement_below_the_minimum_fails_the_audit_gate(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sample_label_and_import(toml, tmp_path / "sheet.csv")
    capsys.readouterr()
    assert main(["--config", toml, "audit", "--min-agreement", "1.01"]) == 1
    assert "audit gate: FAILED" in capsys.readouterr().out


def test_non_ok_verdicts_lower_coverage_and_the_baseline_follows_the_judge(
    labelled_setup: tuple[Config, str], tmp_path: Path
) -> None:
    config, toml = labelled_setup
    sample_label_and_import(toml, tmp_path / "sheet.csv")
    assert config.data.labels is not None
    labels = load_labels_if_any(config.data.labels, load_golden(config.data).by_id()).current
    folder = ReportsDir(config.reports.dir).folder(None)
    items, verdicts = folder.items(), folder.verdicts()
    full = audit_items(folder.name, items, verdicts, labels)
    assert (full.judge.n, full.judge.labelled, full.judge.coverage) == (4, 4, 1.0)
    assert full.judge.both_exact == full.judge.both_exact_all
    # Three of the four verdicts fail: the judge is scored on one label, so is the baseline.
    failed = {
        qid: v.model_copy(update={"status": "parse_error"}) if qid != "q1" else v
        for qid, v in verdicts.items()
    }
    partial = audit_items(folder.name, items, failed, labels)
    assert (partial.judge.n, partial.judge.labelled) == (1, len(HUMAN))
    assert partial.judge.coverage == 0.25
    assert dict(partial.judge.not_ok) == {"parse_error": 3}
    assert partial.lexical.n == 1 and partial.lexical.labelled == 4
    # The baseline's second figure is over every label: the same as in the full audit.
    assert partial.lexical.both_exact_all == full.lexical.both_exact_all
    assert partial.judge.both_exact_all == (partial.judge.both_exact or 0) / 4
