"""``judge.pipeline.baseline``: pin a folder's values, then ratchet them; each configuration
keeps its own baseline file (issue 22, item 5)."""

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.errors import ConfigError
from judge.pipeline.baseline import pin, ratchet
from tests.conftest import run_lexical, sample_toml

Tiny = Callable[..., Config]


def test_pin_once_then_ratchet_with_the_same_run(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    latest = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    pinned = pin(config, None)
    assert pinned == (config.reports.baseline, latest, 4)
    assert pinned.path.exists()
    with pytest.raises(ConfigError, match="exists"):
        pin(config, None)
    assert pin(config, latest, replace=True).folder == latest
    ratcheted = ratchet(config, None)
    assert (ratcheted.path, ratcheted.folder, ratcheted.raised) == (pinned.path, latest, [])


# --- the per-config baseline -----------------------------------------------------------------


def test_two_configs_in_one_folder_keep_two_baselines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = sample_toml(tmp_path, "judge.toml")
    b = sample_toml(tmp_path, "nightly.toml", extra="").with_name("nightly.toml")
    b.write_text(
        a.read_text(encoding="utf-8").replace('dir = "reports"', 'dir = "reports-b"'),
        encoding="utf-8",
    )
    assert load_config(a).reports.baseline == tmp_path / "judge-baseline.json"
    assert load_config(b).reports.baseline == tmp_path / "nightly-baseline.json"
    assert main(["--config", str(a), "run"]) == 0
    assert main(["--config", str(a), "baseline", "pin"]) == 0
    pinned_a = (tmp_path / "judge-baseline.json").read_bytes()
    assert main(["--config", str(b), "run"]) == 0
    # nightly.toml's pin writes its own file (without --replace: nothing was there) ...
    assert main(["--config", str(b), "baseline", "pin"]) == 0
    assert (tmp_path / "nightly-baseline.json").is_file()
    # ... and leaves judge.toml's as it was
    assert (tmp_path / "judge-baseline.json").read_bytes() == pinned_a


def test_a_given_baseline_path_is_kept(tmp_path: Path) -> None:
    path = sample_toml(tmp_path, "nightly.toml", extra='baseline = "pins/b.json"\n')
    assert load_config(path).reports.baseline == tmp_path / "pins" / "b.json"


def test_the_old_shared_baseline_is_copied_once_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = sample_toml(tmp_path, "nightly.toml")
    shared = tmp_path / "judge-baseline.json"
    shared.write_bytes(b'{"format_version": 2}\n')
    with caplog.at_level(logging.WARNING, logger="judge"):
        config = load_config(path)
    own = tmp_path / "nightly-baseline.json"
    assert config.reports.baseline == own
    assert own.read_bytes() == shared.read_bytes()  # copied; the old file left for the others
    [warning] = [r.getMessage() for r in caplog.records if "baseline" in r.getMessage()]
    assert f"copied the shared judge-baseline.json to {own}" in warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="judge"):
        load_config(path)  # read once: its own file now, no warning again
    assert not [r for r in caplog.records if "baseline" in r.getMessage()]


def test_judge_toml_keeps_its_baseline_and_another_config_does_not_take_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sample_toml(tmp_path, "judge.toml")
    path = sample_toml(tmp_path, "nightly.toml")
    (tmp_path / "judge-baseline.json").write_bytes(b'{"format_version": 2}\n')
    with caplog.at_level(logging.WARNING, logger="judge"):
        config = load_config(path)
    assert config.reports.baseline == tmp_path / "nightly-baseline.json"
    assert not config.reports.baseline.exists()
    [warning] = [r.getMessage() for r in caplog.records if "baseline" in r.getMessage()]
    assert "judge-baseline.json is judge.toml's, so this run is held to no baseline" in warning
