"""Progress in the Python API: ``judge.evaluate`` draws the command line's bars when someone
is watching (a terminal, a notebook), never with ``progress=False``, and ``on_progress`` gets
every ``JudgeProgress``."""

from __future__ import annotations

import io
from collections.abc import Callable
from itertools import pairwise

import pytest
from rich.console import Console

import judge
import judge.console
from judge.config import Config
from judge.judging.grading import JudgeProgress

Tiny = Callable[..., Config]


@pytest.fixture
def screen(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """The bars' console, as a terminal that a test can read."""
    out = io.StringIO()
    monkeypatch.setattr(judge.console, "stderr", Console(file=out, force_terminal=True))
    monkeypatch.setattr(judge.console, "is_terminal", lambda: True)
    return out


def _watched(monkeypatch: pytest.MonkeyPatch, watched: bool) -> None:
    monkeypatch.setattr(judge.console, "shows_progress", lambda: watched)


def test_on_progress_gets_the_counts(tiny: Tiny) -> None:
    config = tiny()
    seen: list[JudgeProgress] = []
    judge.evaluate(config, backend="lexical", progress=False, on_progress=seen.append)
    assert seen[-1] == JudgeProgress(done=4, total=4, cached=0, not_ok=seen[-1].not_ok)
    assert [p.done for p in seen if p.done] == [1, 2, 3, 4]  # one event per item
    assert all(p.total == 4 for p in seen)
    again: list[JudgeProgress] = []
    judge.evaluate(config, backend="lexical", progress=False, on_progress=again.append)
    assert (again[-1].done, again[-1].cached) == (4, 4)  # the second run, from the cache
    assert again[-1].not_ok == seen[-1].not_ok


def test_on_progress_is_called_after_the_callers_own_hook(tiny: Tiny) -> None:
    order: list[str] = []
    judge.evaluate(
        tiny(),
        backend="lexical",
        hooks=judge.Hooks(on_judging=lambda p: order.append(f"hook {p.done}")),
        on_progress=lambda p: order.append(f"callback {p.done}"),
    )
    assert order[-2:] == ["hook 4", "callback 4"]


def test_progress_false_prints_nothing_even_on_a_terminal(
    tiny: Tiny,
    screen: io.StringIO,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _watched(monkeypatch, True)
    judge.evaluate(tiny(), backend="lexical", progress=False)
    assert screen.getvalue() == ""
    assert capsys.readouterr() == ("", "")


def test_progress_shows_by_default_where_someone_watches(
    tiny: Tiny, screen: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    _watched(monkeypatch, True)
    seen: list[JudgeProgress] = []
    judge.evaluate(tiny(), backend="lexical", on_progress=seen.append)
    shown = screen.getvalue()
    assert "judging" in shown
    assert "4/4" in shown
    assert seen[-1].done == 4  # the callback as well as the bar


def test_progress_is_off_by_default_in_a_log(
    tiny: Tiny,
    screen: io.StringIO,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _watched(monkeypatch, False)
    judge.evaluate(tiny(), backend="lexical")
    assert screen.getvalue() == ""
    assert capsys.readouterr() == ("", "")
    judge.evaluate(tiny(), backend="lexical", progress=True)  # unless asked for
    assert "judging" in screen.getvalue()


def test_hooks_that_draw_progress_turn_the_default_bars_off(
    tiny: Tiny, screen: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line passes its own bars as hooks: they are not drawn twice."""
    _watched(monkeypatch, True)
    seen: list[JudgeProgress] = []
    judge.evaluate(tiny(), backend="lexical", hooks=judge.Hooks(on_judging=seen.append))
    assert screen.getvalue() == ""
    assert seen[-1].done == 4


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("tty", "notebook", "shown"),
    [(True, False, True), (False, True, True), (False, False, False)],
)
def test_someone_watches_a_terminal_or_a_notebook(
    tty: bool, notebook: bool, shown: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdout", _Stream(tty))
    monkeypatch.setattr(judge.console, "stderr", Console(file=io.StringIO()))
    monkeypatch.setattr(judge.console.stderr, "is_jupyter", notebook)
    assert judge.console.shows_progress() is shown
    assert judge.console.in_notebook() is notebook


def test_a_notebook_draws_live_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", _Stream(False))
    monkeypatch.setattr(judge.console, "stderr", Console(file=io.StringIO()))
    assert judge.console.is_terminal() is False
    monkeypatch.setattr(judge.console.stderr, "is_jupyter", True)
    assert judge.console.is_terminal() is True


def test_the_progress_type_is_part_of_the_api() -> None:
    assert judge.JudgeProgress is JudgeProgress
    assert "JudgeProgress" in judge.__all__


def test_on_progress_never_repeats_its_last_line(tiny: Tiny) -> None:
    """Every item from the cache: the judging reports the same counts twice at the end of the
    lookup (the command line's cache line reads it); a user's callback sees each once."""
    config = tiny()
    judge.evaluate(config, backend="lexical", progress=False)
    lines: list[str] = []
    judge.evaluate(
        config,
        backend="lexical",
        progress=False,
        on_progress=lambda p: lines.append(
            f"judged {p.done}/{p.total} ({p.cached} from the cache)"
        ),
    )
    assert lines[-1] == "judged 4/4 (4 from the cache)"
    assert lines.count(lines[-1]) == 1
    assert all(a != b for a, b in pairwise(lines))
