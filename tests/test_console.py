"""Terminal output: the progress bars never take over ``sys.stdout`` or ``sys.stderr``."""

from __future__ import annotations

import io
import sys

import pytest
from rich.console import Console

import judge.console
from judge.console import adapter_progress, judge_progress
from judge.inputs.adapter import AdapterProgress
from judge.judging.grading import JudgeProgress


@pytest.fixture
def a_terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """The bars' console as on a terminal (where rich would redirect the streams)."""
    screen = io.StringIO()
    monkeypatch.setattr(judge.console, "stderr", Console(file=screen, force_terminal=True))
    monkeypatch.setattr(judge.console, "is_terminal", lambda: True)
    return screen


def test_a_live_bar_leaves_the_streams_to_the_adapters_log(a_terminal: io.StringIO) -> None:
    """While the adapter is asked, ``sys.stdout`` and ``sys.stderr`` are the harness's streams
    that send the adapter's prints to its log (``judge.inputs.user_code.adapter_output``); a bar
    that replaced them would send those prints to the terminal instead."""
    out, err = sys.stdout, sys.stderr
    with adapter_progress() as on_adapter:
        on_adapter(AdapterProgress("q1", None, 1, 2))  # the bar is live now
        assert sys.stdout is out and sys.stderr is err
    with judge_progress() as on_judging:
        on_judging(JudgeProgress(done=1, total=2, cached=0, not_ok=0))
        assert sys.stdout is out and sys.stderr is err
    assert "asking the adapter" in a_terminal.getvalue()
