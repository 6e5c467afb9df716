"""The gate simulation of ``make bench`` (bench/gate_sim.py), short: the paired gate cries wolf
far less than the old rule and still sees a real drop. Loose bounds: the full run (500 nights
per noise level) gives the figures in docs/gate.md."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.conftest import REPO


def _gate_sim() -> ModuleType:
    path = REPO / "bench" / "gate_sim.py"
    spec = importlib.util.spec_from_file_location("gate_sim", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gate_sim", module)
    spec.loader.exec_module(module)
    return module


def test_over_a_season_the_gate_stays_quiet_and_sees_a_fall_that_stays() -> None:
    sim = _gate_sim()
    # Eight 30-night histories of the sample's shape at 10 % verdict noise (seeded: the same
    # figures every time). The full run (docs/gate.md) measured about 1 % of histories with a
    # false alarm for the new rule and 93 % for the previous one.
    quiet = sim.quiet(sim.TYPES, 0.10, histories=8, seed=3)
    assert quiet["per_history"]["previous"] >= 0.5  # the previous rule cried wolf ...
    assert quiet["per_night"]["new"] <= 0.01  # ... the new one stays quiet
    # A deterministic system (nothing re-drawn): never an alarm.
    still = sim.quiet(sim.SMALL, 0.0, histories=4, seed=4)
    assert still["per_history"]["new"] == 0.0
    # Half a point on twelve questions, staying: caught within three nights (the full run:
    # 100 %); the nonsense night on a 10-question set: failed on the first night, always.
    half = sim.detect(sim.DROP_SHAPES[1], 0.10, histories=6, seed=5)
    assert half["within"]["new"][2] >= 0.8
    (nonsense, *_) = sim.collapses(0.10, histories=6, seed=6)
    assert nonsense["case"].startswith("nonsense night") and nonsense["new"] == 1.0


def test_with_persistent_verdicts_the_season_holds_and_a_recovery_fails_no_night() -> None:
    sim = _gate_sim()
    # A temperature-0 judge, 10 % of answers re-worded a night (seeded, six seasons: the full
    # run is docs/gate.md's): the previous season rule cried wolf in half the seasons, the new
    # one on one night of 180.
    regime = sim.REGIMES[1]
    quiet = sim.persistent_quiet(sim.TYPES, 0.10, regime, seasons=6, seed=101)
    assert quiet["per_season"] == {"previous": 0.5, "new": 1 / 6}
    assert quiet["per_night"]["new"] <= quiet["per_night"]["previous"] / 10
    # A broken night, then the answers of the night before it: the new rule fails no night
    # after it (the previous failed the good nights that followed).
    recovery = sim.persistent_recovery(0.10, sim.REGIMES[4], seasons=3, seed=201)
    assert recovery["broken_called"]["new"] == 1.0
    assert recovery["after"] == {"previous": 1.0, "new": 0.0}
    # A lasting fall of 4 of 12 factual answers, every answer re-worded nightly: seen.
    fall = sim.persistent_detect(4, 0.10, sim.REGIMES[4], seasons=4, seed=301)
    assert fall["within"]["new"] == [0.25, 1.0, 1.0]
