"""The sweep's table (``judge.config_sweep``): values compared as TOML values, and a grid too
large to run refused."""

import pytest
from pydantic import ValidationError

from judge.config_sweep import MAX_SWEEP_SETTINGS, SweepConfig, same_value


def test_values_are_equal_as_toml_values() -> None:
    assert same_value(1, 1.0)
    assert same_value("a", "a")
    assert not same_value(True, 1)
    assert not same_value("1", 1)
    assert not same_value(False, 0.0)


def test_a_grid_of_more_settings_than_the_limit_is_refused() -> None:
    grid = {"a": tuple(range(MAX_SWEEP_SETTINGS // 2 + 1)), "b": (1, 2)}
    with pytest.raises(ValidationError, match=f"more than {MAX_SWEEP_SETTINGS}\\); each one"):
        SweepConfig(answer="m:f", grid=grid, default={"a": 0, "b": 1})
    fits = {"a": tuple(range(MAX_SWEEP_SETTINGS // 2)), "b": (1, 2)}
    assert SweepConfig(answer="m:f", grid=fits, default={"a": 0, "b": 1}).grid == fits
