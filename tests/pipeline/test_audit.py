"""``judge.pipeline.audit``: a blind sheet out, labels in, and the audit with its gate."""

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.pipeline.audit import audit, import_labels, labels_path, sample
from tests.audit.conftest import HUMAN, fill_like_a_spreadsheet
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


def test_the_audit_steps_need_a_labels_file(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    with pytest.raises(ConfigError, match=r"set data\.labels"):
        labels_path(config)
    with pytest.raises(ConfigError, match=r"set data\.labels"):
        import_labels(config, tmp_path / "sheet.csv")


def test_sample_import_and_audit(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny(extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert run_lexical(config) == 0
    latest = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    warnings: list[str] = []
    with pytest.raises(ConfigError, match="no human labels"):
        audit(config, None, warn=warnings.append)
    assert len(warnings) == 1 and "does not exist" in warnings[0]  # warned before the error
    sheet = tmp_path / "sheet.csv"
    sampled = sample(config, None, 10, sheet, warn=warnings.append)
    assert (sampled.sheet, sampled.folder, sampled.items) == (sheet, latest, 4)
    assert list(sampled.per_type.items()) == [  # sorted by type
        ("factual", 1),
        ("negative", 1),
        ("out_of_scope", 1),
        ("procedural", 1),
    ]
    fill_like_a_spreadsheet(sheet, HUMAN, "ana")
    imported = import_labels(config, sheet)
    assert imported.labels == labels_path(config) == tmp_path / "labels.jsonl"
    assert (imported.result.added, imported.result.replaced) == (4, 0)
    passed = audit(config, None, warn=warnings.append)
    assert passed.failures == []  # no bar asked for
    assert passed.result.folder == latest
    assert passed.judge  # the audited folder's judge, described
    if passed.result.judge.disagreements:
        assert passed.disagreements == config.reports.dir / latest / "disagreements.csv"
        assert passed.disagreements.exists()
    else:
        assert passed.disagreements is None
    failed = audit(config, latest, min_kappa=1.01, min_agreement=1.01)
    assert len(failed.failures) == 4  # kappa and agreement, on both axes
    # The sample warned too (the file did not exist yet); once imported, nothing more.
    assert warnings == [warnings[0]] * 2
