"""Terminal output: progress bars on a terminal, plain lines otherwise (nightly logs, CI)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from judge.formatting import terminal_text
from judge.inputs.adapter import AdapterProgress
from judge.judging.grading import JudgeProgress

stderr = Console(stderr=True, highlight=False)


def _progress() -> Progress:
    """A bar on stderr. It leaves ``sys.stdout`` and ``sys.stderr`` alone (rich would otherwise
    replace them while it is live, on a terminal): while the adapter is asked, they are the
    harness's streams that send the adapter's prints to its log (``judge.inputs.adapter``)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=stderr,
        transient=False,
        redirect_stdout=False,
        redirect_stderr=False,
    )


@contextmanager
def adapter_progress() -> Iterator[Callable[[AdapterProgress], None]]:
    """A callback for ``produce_run`` that shows a bar and prints each failed question."""
    progress = _progress()
    task: list[TaskID] = []
    failures = 0
    showing = False

    def stop() -> None:
        nonlocal showing
        if showing:
            progress.stop()
            showing = False

    def on_event(event: AdapterProgress) -> None:
        nonlocal failures, showing
        if not task:
            progress.start()
            showing = True
            task.append(progress.add_task("asking the adapter", total=event.total, detail=""))
        if event.error is not None:
            failures += 1
            # The id and the adapter's message are data: no control characters, and not read
            # as Rich markup ("[bold]", ":smile:") either.
            qid = terminal_text(event.question_id, one_line=True)
            error = terminal_text(event.error, one_line=True)
            progress.console.print(
                f"adapter failed for question '{qid}': {error}",
                markup=False,
                emoji=False,
                soft_wrap=True,  # one line per failure, as logs are searched
            )
        progress.update(task[0], completed=event.done, detail=f"failed {failures}")
        if event.done == event.total:  # done: the judging bar may come next, one live at a time
            stop()

    try:
        yield on_event
    finally:
        stop()


def in_notebook() -> bool:
    """Whether this runs in a Jupyter (or Colab) notebook, where a live bar is drawn as output."""
    return bool(stderr.is_jupyter)


def is_terminal() -> bool:
    """Whether the bars can be live: stderr is a terminal, or a notebook draws them."""
    return sys.stderr.isatty() or in_notebook()


def shows_progress() -> bool:
    """Whether the Python API shows progress by default (``judge.evaluate(progress=None)``):
    someone is watching, in a terminal or a notebook. Not in a log, CI or a captured test."""
    return sys.stdout.isatty() or in_notebook()


@contextmanager
def judge_progress() -> Iterator[Callable[[JudgeProgress], None]]:
    """A bar with done/total, cache hits, non-ok verdicts and an ETA (plain lines off a tty)."""
    progress = _progress()
    task = progress.add_task("judging", total=None, detail="")
    live = is_terminal()
    started = False  # on the first event: the adapter's bar may still be showing before it
    last_line = [-1]  # the last decile printed, so that a log gets about ten lines

    def on_event(event: JudgeProgress) -> None:
        nonlocal started
        detail = f"cached {event.cached}  not ok {event.not_ok}"
        if live:
            if not started:
                progress.start()
                started = True
            progress.update(task, total=event.total, completed=event.done, detail=detail)
            return
        decile = event.done * 10 // max(event.total, 1)
        if decile != last_line[0]:
            last_line[0] = decile
            stderr.print(f"judged {event.done}/{event.total} ({detail})")

    try:
        yield on_event
    finally:
        if started:
            progress.stop()
