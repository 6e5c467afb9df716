"""Helpers for tests of the gate on real runs."""

from __future__ import annotations

import pytest

import judge.pipeline.session
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


def use_backend(monkeypatch: pytest.MonkeyPatch, backend: JudgeBackend) -> None:
    """Make every ``evaluate`` that opens a backend (the CLI's ``run`` and ``nightly``) use
    ``backend``: the name the session looks up when it opens one."""
    monkeypatch.setattr(
        judge.pipeline.session,
        "open_backend",
        lambda _: OpenedBackend(backend, "scripted for a test"),
    )
