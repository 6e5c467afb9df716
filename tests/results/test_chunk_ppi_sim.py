"""The corrected-recall simulation (bench/chunk_ppi_sim.py), short: its fast per-question
recall equals the module's on the same synthetic golden set, and a few seeded regimes cover.
Loose bounds: the full run gives the figures in docs/judge.md."""

from __future__ import annotations

import functools
import importlib.util
import sys
from types import ModuleType

import numpy as np
import pytest

from judge.audit.chunk_agreement import (
    recall_pairs,
)
from tests.conftest import REPO


@functools.cache
def _sim() -> ModuleType:
    path = REPO / "bench" / "chunk_ppi_sim.py"
    spec = importlib.util.spec_from_file_location("chunk_ppi_sim", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("chunk_ppi_sim", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("profile", ["good", "poor"])
@pytest.mark.parametrize("judge", ["sharp", "weak", "lenient"])
def test_the_simulated_recall_is_the_modules(profile: str, judge: str) -> None:
    sim = _sim()
    regime = sim.Regime(profile, judge, 0.5, 60)
    d = sim.draw(regime, np.random.default_rng(5))
    human, predicted = sim.pairs(d)
    questions, graded = sim.to_inputs(d)
    pairs, ungraded = recall_pairs(questions, graded, sim.K, depth=sim.MAX_DEPTH)
    assert ungraded == {}
    assert [p.human for p in pairs.values()] == pytest.approx(human.tolist())
    assert [p.judged for p in pairs.values()] == pytest.approx(predicted.tolist())
    # Some questions miss a relevant chunk, some have nothing judged relevant.
    assert (human < 1).any() and (predicted == 0).any()


def test_a_few_regimes_cover() -> None:
    sim = _sim()
    hard = [
        sim.Regime("good", "lenient", 0.1, 50),
        sim.Regime("poor", "sharp", 0.8, 150),
        sim.Regime("good", "weak", 0.25, 20),
    ]
    for regime in hard:
        row = sim.measure(regime, draws=300, seed=1)
        assert row["coverage"] >= 0.9, row
        # Never wider than the labels' own before the cut to 0-1 (λ = 0 is a candidate); the
        # cut, around another centre, can leave it a hair wider.
        assert row["width"] <= row["labels_only_width"] + 0.005, row
    lines = sim.describe({"draws": 300, "k": sim.K, "truth": {}, "regimes": [row], "seconds": 0})
    assert any("lowest coverage" in line for line in lines)
