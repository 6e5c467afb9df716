"""Helpers for tests of the gate on real runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import judge.pipeline
from judge.config import Config, load_config
from judge.judging.backends import JudgeBackend, OpenedBackend


def with_reports(config: Config, lines: str) -> Config:
    """``config``'s judge.toml with ``lines`` added to its ``[reports]`` table (the last table
    of the tiny set's judge.toml)."""
    assert config.source is not None
    text = config.source.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1].startswith("dir = "), "[reports] is not last"
    config.source.write_text(text + lines + "\n", encoding="utf-8")
    return load_config(config.source)


def one_question_counts(tiny: Callable[..., Config]) -> Callable[..., Config]:
    """``tiny`` with ``min_questions = 1``: the tiny set has one question per type, which the
    default minimum (8) would only ever list, never call a regression."""

    def make(**changes: Any) -> Config:
        return with_reports(tiny(**changes), "min_questions = 1")

    return make


def use_backend(monkeypatch: pytest.MonkeyPatch, backend: JudgeBackend) -> None:
    """Make every ``evaluate`` that opens a backend (the CLI's ``run`` and ``nightly``) use
    ``backend``."""
    monkeypatch.setattr(
        judge.pipeline, "open_backend", lambda _: OpenedBackend(backend, "scripted for a test")
    )
