"""What a sweep found (judge.sweep.outcome): the winner is the grid setting the selection named,
the sweep table is the configuration's, and the outcome is frozen."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judge.config import Config
from judge.sweep.outcome import SweepOutcome
from judge.sweep.select import select
from judge.sweep.settings import grid_settings
from tests.sweep.conftest import ORACLE_GRID


def _outcome(config: Config, winner_index: int) -> SweepOutcome:
    assert config.sweep is not None
    settings, default = grid_settings(config.sweep)
    labels = [s.label for s in settings]
    # 10 questions; one setting answers every question perfectly, the others half as well.
    values = {
        label: {"ndcg@5": [1.0 if i == winner_index else 0.5] * 10}
        for i, label in enumerate(labels)
    }
    selection = select([f"q{j}" for j in range(10)], values, default.label, "ndcg@5")
    return SweepOutcome(
        config=config,
        started_at=datetime(2026, 12, 1, tzinfo=UTC),
        settings=settings,
        default=default,
        tuned={},
        selection=selection,
        holdout={},
        judged={},
        judge=None,
        folder=Path("sweeps/20261201T000000Z"),
    )


def test_the_winner_is_the_setting_the_selection_named(
    sweep_config: Callable[..., Config],
) -> None:
    config = sweep_config(ORACLE_GRID)
    outcome = _outcome(config, 4)
    assert outcome.selection.winner == 'order="oracle", noise=0'
    assert outcome.winner is outcome.settings[4]
    assert outcome.winner.params == {"order": "oracle", "noise": 0}
    # Every setting alike: the tie goes to the default.
    tie = _outcome(config, -1)
    assert tie.winner is tie.default is tie.settings[0]


def test_the_sweep_table_is_the_configurations_and_the_outcome_is_frozen(
    sweep_config: Callable[..., Config],
) -> None:
    config = sweep_config(ORACLE_GRID)
    outcome = _outcome(config, 4)
    assert outcome.swept is config.sweep
    assert outcome.swept.judge_top == 1  # ORACLE_GRID's
    assert outcome.holdout_changes == {}  # empty unless the wiring computed them
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.judge = "qwen"  # type: ignore[misc]
