"""`judge audit` as text: the judge and the lexical baseline, and a note when items are few."""

from pathlib import Path

import pytest

from judge.audit.agreement import audit_items
from judge.cli import main
from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels_if_any
from judge.record.store import ReportsDir
from judge.report.audit_text import render_audit
from tests.audit import conftest as audit_fixtures
from tests.audit.conftest import sample_label_and_import

#: The audit tests' judged tiny run with a labels file, used here too.
labelled_setup = audit_fixtures.labelled_setup


def test_audit_shows_the_judge_and_the_lexical_baseline(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, toml = labelled_setup
    sample_label_and_import(toml, tmp_path / "sheet.csv")
    capsys.readouterr()
    assert main(["--config", toml, "audit"]) == 0
    out = capsys.readouterr().out
    # The run's judge is the lexical backend: its figures are the baseline's, printed once.
    assert "judge: both scores exact" in out
    assert "the judge is the lexical baseline: its figures are the baseline's, shown once" in out
    assert "4 pairs give wide intervals" in out
    # A judge that scores otherwise (every faithfulness 0 here) gets both sections.
    assert config.data.labels is not None
    labels = load_labels_if_any(config.data.labels, load_golden(config.data).by_id()).current
    folder = ReportsDir(config.reports.dir).folder(None)
    other = {qid: v.model_copy(update={"faithfulness": 0}) for qid, v in folder.verdicts().items()}
    text = render_audit(audit_items(folder.name, folder.items(), other, labels), "qwen · 7b")
    assert "judge: both scores exact" in text and "lexical baseline: both scores exact" in text
    assert "both scored on these 4 labels" in text
