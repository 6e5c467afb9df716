"""``judge.pipeline.baseline``: pin a folder's values, then ratchet them."""

from collections.abc import Callable

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.pipeline.baseline import pin, ratchet
from tests.conftest import run_lexical

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
