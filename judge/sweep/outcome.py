"""What a sweep found: the settings, their scores, the selection and the judge's grades
(``judge.pipeline.sweep`` builds it, ``judge.report.sweep`` renders it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from judge.config import Config
from judge.sweep.measure import JudgeMeans, PooledChange, SettingScores
from judge.sweep.select import Selection
from judge.sweep.settings import Setting


@dataclass(frozen=True)
class SweepOutcome:
    config: Config
    started_at: datetime
    settings: list[Setting]
    default: Setting
    tuned: dict[str, SettingScores]
    """Setting key → its retrieval on the tuning split."""
    selection: Selection
    holdout: dict[str, SettingScores]
    """Setting key → its retrieval on the holdout split (the default and the winner only)."""
    judged: dict[tuple[str, str], JudgeMeans]
    """(setting key, "tune" | "holdout") → the judge's grades."""
    judge: str | None
    """The judge that graded (None with --no-judge)."""
    folder: Path
    holdout_changes: dict[str, PooledChange] = field(default_factory=dict)
    """Metric → the winner against the default on the holdout, question by question (empty
    when the default won or there is no holdout): computed by the wiring, shown by the view."""

    @property
    def winner(self) -> Setting:
        return next(s for s in self.settings if s.label == self.selection.winner)

    @property
    def swept(self) -> Any:
        return self.config.sweep
