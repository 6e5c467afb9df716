"""``judge sweep``'s table (``[sweep]``, docs/sweep.md): the grid of settings for the RAG system,
the setting in use now and the rule that picks one.

Part of the configuration (``judge.config`` holds the whole and checks the sweep's metric names
against the retrieval table); kept apart because only the sweep reads it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Strict, model_validator

from judge.io.text import StrictFloat, StrictInt, StrictRecord

#: A sweep parameter's value as TOML writes it (``true``, ``3``, ``0.5``, ``"heading"``).
ParamValue = Annotated[bool, Strict()] | Annotated[int, Strict()] | Annotated[float, Strict()] | str

#: A grid larger than this is refused: every setting is a full run of the tuning questions.
MAX_SWEEP_SETTINGS = 500


def same_value(a: ParamValue, b: ParamValue) -> bool:
    """Equal as TOML values: ``true`` is not ``1``, ``"1"`` is not ``1``; ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    return a == b


class SweepConfig(StrictRecord):
    """``judge sweep``: a grid of settings for the RAG system, and the rule that picks one
    (docs/sweep.md)."""

    answer: str | None = None
    """``module:function`` called as ``function(question, params)`` for every question."""
    factory: str | None = None
    """``module:build`` called once per setting as ``build(params)``; it returns the function
    that answers one question. Give this or ``answer``."""
    grid: dict[str, tuple[ParamValue, ...]]
    """Parameter name → the values to try (at least two each)."""
    default: dict[str, ParamValue]
    """The setting in use now: one value from the grid for every parameter."""
    primary: str = "ndcg@5"
    """The retrieval metric that chooses (a name from the retrieval table, at one of its k)."""
    secondary: tuple[str, ...] = ("recall@5", "mrr")
    """Metrics that must not get worse on average for a setting to be adopted."""
    judge_top: StrictInt = Field(default=2, ge=0, le=20)
    """Besides the default, how many of the best settings the judge also grades (0: none)."""
    min_gain: StrictFloat = Field(default=0.02, ge=0)
    """The held-out mean gain of the primary metric must exceed this."""
    se_multiple: StrictFloat = Field(default=3.0, ge=0)
    """... and exceed this many paired standard errors (3, not 2: see docs/sweep.md)."""
    min_stability: StrictFloat = Field(default=0.5, ge=0, lt=1)
    """More than this share of leave-one-question-out folds must pick the winner."""
    secondary_tolerance: StrictFloat = Field(default=0.0, ge=0)
    """How far a secondary metric's mean may fall (0: not at all)."""

    @model_validator(mode="after")
    def _check(self) -> SweepConfig:
        if (self.answer is None) == (self.factory is None):
            raise ValueError(
                "give either sweep.answer (module:function(question, params)) or sweep.factory "
                "(module:build(params) returning the answer function), not both or neither"
            )
        if not self.grid:
            raise ValueError("sweep.grid is empty: list at least one parameter with its values")
        settings = 1
        for name, values in self.grid.items():
            if len(values) < 2:
                raise ValueError(
                    f"sweep.grid.{name} has {len(values)} value(s): a sweep compares settings, "
                    "so list at least two (a constant belongs in the adapter's own config)"
                )
            for i, value in enumerate(values):
                if any(same_value(value, other) for other in values[:i]):
                    raise ValueError(f"sweep.grid.{name} lists {value!r} twice")
            settings *= len(values)
        if settings > MAX_SWEEP_SETTINGS:
            raise ValueError(
                f"sweep.grid has {settings} settings (more than {MAX_SWEEP_SETTINGS}); each one "
                "is a full run of the tuning questions: narrow the grid"
            )
        unknown = sorted(set(self.default) - set(self.grid))
        if unknown:
            raise ValueError(
                f"sweep.default names unknown parameter(s) {', '.join(unknown)}; the grid has "
                f"{', '.join(self.grid)}"
            )
        missing = [name for name in self.grid if name not in self.default]
        if missing:
            raise ValueError(
                f"sweep.default has no value for {', '.join(missing)}: give the setting in use now"
            )
        for name, value in self.default.items():
            if not any(same_value(value, v) for v in self.grid[name]):
                raise ValueError(
                    f"sweep.default.{name} = {value!r} is not in sweep.grid.{name} "
                    f"{list(self.grid[name])!r}: the default must be one of the settings tried"
                )
        return self
