"""``judge.cli.cache``: ``judge cache prune --dry-run`` says what it would remove and removes
nothing; without it the configurations unused for the days given go."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judge.cli import main
from judge.config import Config
from tests.cli.helpers import toml_of

Tiny = Callable[..., Config]


def test_cache_prune_dry_run_removes_nothing(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    config = tiny()
    toml = toml_of(config)
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    capsys.readouterr()
    with sqlite3.connect(config.judge.cache_path) as db:  # last used long ago
        db.execute("UPDATE fingerprints SET last_used_at = '2000-01-01T00:00:00+00:00'")
    db.close()
    assert main(["--config", toml, "cache", "prune", "--days", "30", "--dry-run"]) == 0
    assert capsys.readouterr().out.strip() == (
        "would remove 1 judge configuration(s) unused for 30 days (4 replies)"
    )
    assert main(["--config", toml, "cache", "stats"]) == 0
    assert "4 replies" in capsys.readouterr().out
    assert main(["--config", toml, "cache", "prune", "--days", "30"]) == 0
    assert capsys.readouterr().out.startswith("removed 1 judge configuration(s)")
    assert main(["--config", toml, "cache", "stats"]) == 0
    assert "0 judge configuration(s)" in capsys.readouterr().out
