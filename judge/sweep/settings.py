"""The settings of a sweep, and the adapter each one is asked through.

A setting is one point of ``[sweep.grid]``: a value for every parameter, in grid order. Its
``label`` (``alpha=0.5, depth=10``) is what people read; its ``key`` (a hash of the exact
values, types included) names its saved answers, so ``0.5`` and ``"0.5"`` never share them.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import itertools
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from judge.config_sweep import ParamValue, SweepConfig, same_value
from judge.errors import AdapterError
from judge.inputs.user_code import Adapter, load_adapter


class Setting(NamedTuple):
    """One point of the grid."""

    params: dict[str, ParamValue]

    @property
    def label(self) -> str:
        return ", ".join(f"{name}={_toml(value)}" for name, value in self.params.items())

    @property
    def key(self) -> str:
        exact = json.dumps(
            [[name, type(value).__name__, value] for name, value in self.params.items()]
        )
        return hashlib.sha256(exact.encode("utf-8")).hexdigest()[:12]

    def toml(self) -> str:
        """The setting as ``[sweep.default]`` lines, to paste into judge.toml."""
        return "\n".join(f"{name} = {_toml(value)}" for name, value in self.params.items())


def _toml(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string is JSON's
    return repr(value)


def grid_settings(sweep: SweepConfig) -> tuple[list[Setting], Setting]:
    """Every setting in grid order (the last parameter varies fastest), and the default."""
    names = list(sweep.grid)
    settings = [
        Setting(dict(zip(names, values, strict=True)))
        for values in itertools.product(*(sweep.grid[name] for name in names))
    ]
    default = next(
        s for s in settings if all(same_value(s.params[n], sweep.default[n]) for n in names)
    )
    return settings, default


def sweep_spec(sweep: SweepConfig) -> str:
    return sweep.answer or sweep.factory or ""


def setting_adapter(sweep: SweepConfig, setting: Setting, search_dir: Path | None) -> Adapter:
    """The function that answers one question under ``setting``.

    ``sweep.answer``: ``function(question, params)`` with the params bound. ``sweep.factory``:
    ``build(params)``, called on the first question actually asked, so that a setting whose
    answers are all saved costs nothing (a factory may load an index). An exception from
    ``build`` fails every question of the setting with its message: the adapter rejects it.
    """
    if sweep.answer is not None:
        function: Callable[..., Any] = load_adapter(sweep.answer, search_dir)
        params = dict(setting.params)
        if inspect.iscoroutinefunction(function):

            async def answer_async(question: str) -> Any:
                return await function(question, dict(params))

            return answer_async
        return functools.partial(_call_with_params, function, params)
    return Built(sweep.factory or "", setting, search_dir)


def _call_with_params(function: Any, params: Mapping[str, Any], question: str) -> Any:
    return function(question, dict(params))  # a fresh dict: the adapter may change its copy


class Built:
    """``build(params)``'s answer function, built once on first use (from any worker thread)."""

    def __init__(self, spec: str, setting: Setting, search_dir: Path | None) -> None:
        self._spec, self._setting, self._search_dir = spec, setting, search_dir
        self._lock = threading.Lock()
        self._answer: Adapter | None = None
        self._error: AdapterError | None = None

    def __call__(self, question: str) -> Any:
        return self.built()(question)

    def built(self) -> Adapter:
        """The answer function; the first call builds it (``AdapterError`` if build fails)."""
        with self._lock:
            if self._answer is None and self._error is None:
                self._answer, self._error = self._build()
        if self._error is not None:
            raise self._error
        assert self._answer is not None
        return self._answer

    def _build(self) -> tuple[Adapter | None, AdapterError | None]:
        factory: Callable[..., Any] = load_adapter(self._spec, self._search_dir)
        label = self._setting.label
        try:
            built = factory(dict(self._setting.params))
        except Exception as exc:  # the user's code: any exception is a refusal of this setting
            return None, AdapterError(
                f"sweep.factory '{self._spec}' rejects the setting {label}: "
                f"{type(exc).__name__}: {exc}"
            )
        if not callable(built):
            return None, AdapterError(
                f"sweep.factory '{self._spec}' returned {type(built).__name__} for {label}, "
                "not the function that answers one question"
            )
        return built, None
