"""The settings of a sweep (judge.sweep.settings): labels, keys by exact value, TOML to paste,
the grid's order and default, and the adapter each setting is asked through."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from judge.config import Config
from judge.config_sweep import SweepConfig
from judge.errors import AdapterError
from judge.sweep.settings import Built, Setting, grid_settings, setting_adapter, sweep_spec
from tests.sweep.conftest import ORACLE_GRID


def test_settings_are_labelled_keyed_by_exact_value_and_pasted_as_toml() -> None:
    a, b = Setting({"alpha": 0.5, "mode": "heading"}), Setting({"alpha": "0.5", "mode": "heading"})
    assert a.label == 'alpha=0.5, mode="heading"'
    assert a.key != b.key
    assert tomllib.loads(a.toml()) == a.params
    assert tomllib.loads(Setting({"on": True, "k": 3, "name": 'say "hi"'}).toml()) == {
        "on": True,
        "k": 3,
        "name": 'say "hi"',
    }


def test_grid_order_and_default(sweep_config: Callable[..., Config]) -> None:
    config = sweep_config(ORACLE_GRID)
    assert config.sweep is not None
    settings, default = grid_settings(config.sweep)
    assert [s.label for s in settings] == [
        'order="reversed", noise=0',
        'order="reversed", noise=1',
        'order="recorded", noise=0',
        'order="recorded", noise=1',
        'order="oracle", noise=0',
        'order="oracle", noise=1',
    ]
    assert default == settings[0]


# --- the adapter each setting is asked through ------------------------------------------------

#: A module of the user's: ``answer(question, params)`` that changes its copy of the params,
#: its async twin, and factories that build, refuse or return no function.
USER_MODULE = """
import asyncio
BUILT = []

def answer(question, params):
    seen = dict(params)
    params["mutated"] = True
    return f"{question}:{sorted(seen.items())}"

async def answer_async(question, params):
    await asyncio.sleep(0)
    return f"async {question}:{params['k']}"

def build(params):
    BUILT.append(dict(params))
    return lambda question: f"built {question}:{params['k']}"

def refuse(params):
    raise ValueError("no index for that")

def not_a_function(params):
    return 42
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """``settings_rag``, the module above, importable from ``tmp_path`` for one test."""
    (tmp_path / "settings_rag.py").write_text(USER_MODULE, encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_adapter adds tmp_path to it
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("settings_rag")
    sys.modules.pop("settings_rag", None)


def _sweep(**shape: str) -> SweepConfig:
    return SweepConfig(grid={"k": (1, 2)}, default={"k": 1}, **shape)  # type: ignore[arg-type]


def test_the_sweep_spec_is_the_answer_function_or_the_factory() -> None:
    assert sweep_spec(_sweep(answer="m:answer")) == "m:answer"
    assert sweep_spec(_sweep(factory="m:build")) == "m:build"


def test_an_answer_function_gets_a_fresh_copy_of_the_settings_params(
    user_module: ModuleType, tmp_path: Path
) -> None:
    setting = Setting({"k": 2, "mode": "heading"})
    answer = setting_adapter(_sweep(answer="settings_rag:answer"), setting, tmp_path)
    expected = "q:[('k', 2), ('mode', 'heading')]"
    assert answer("q") == expected
    # The adapter changed its copy; the next question gets the setting's params unchanged.
    assert answer("q") == expected
    assert setting.params == {"k": 2, "mode": "heading"}


def test_an_async_answer_function_stays_async_with_the_params_bound(
    user_module: ModuleType, tmp_path: Path
) -> None:
    answer = setting_adapter(_sweep(answer="settings_rag:answer_async"), Setting({"k": 3}), None)
    assert inspect.iscoroutinefunction(answer)
    assert asyncio.run(answer("q")) == "async q:3"


def test_a_factory_is_built_on_the_first_question_and_only_once(
    user_module: ModuleType, tmp_path: Path
) -> None:
    answer = setting_adapter(_sweep(factory="settings_rag:build"), Setting({"k": 2}), tmp_path)
    assert isinstance(answer, Built)
    assert user_module.BUILT == []  # a setting whose answers are all saved costs nothing
    assert answer("q1") == "built q1:2"
    assert answer("q2") == "built q2:2"
    assert user_module.BUILT == [{"k": 2}]


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            "refuse",
            "sweep.factory 'settings_rag:refuse' rejects the setting k=2: "
            "ValueError: no index for that",
        ),
        (
            "not_a_function",
            "sweep.factory 'settings_rag:not_a_function' returned int for k=2, not the function "
            "that answers one question",
        ),
    ],
)
def test_a_factory_that_fails_refuses_every_question_of_the_setting(
    user_module: ModuleType, tmp_path: Path, factory: str, message: str
) -> None:
    built = Built(f"settings_rag:{factory}", Setting({"k": 2}), tmp_path)
    for question in ("q1", "q2"):  # refused once, and the same way for every question
        with pytest.raises(AdapterError) as caught:
            built(question)
        assert str(caught.value) == message
