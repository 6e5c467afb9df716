"""Terminal output: progress bars on a terminal, plain lines otherwise (nightly logs, CI).

rich is imported when a bar is drawn (or a notebook is asked about), not before: a run whose
output is a log draws none, and the import is about 30 ms of the command line's start-up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from judge.formatting import terminal_text
from judge.inputs.adapter import AdapterProgress
from judge.judging.grading import JudgeProgress

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

#: The console the bars are drawn on (stderr): made by ``console()`` on first use; a test may
#: set its own.
stderr: Console | None = None


def console() -> Console:
    """The bars' console (``stderr``), made on first use."""
    global stderr
    if stderr is None:
        from rich.console import Console

        stderr = Console(stderr=True, highlight=False)
    return stderr


def _progress() -> Progress:
    """A bar on stderr. It leaves ``sys.stdout`` and ``sys.stderr`` alone (rich would otherwise
    replace them while it is live, on a terminal): while the adapter is asked, they are the
    harness's streams that send the adapter's prints to its log (``judge.inputs.user_code``)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console(),
        transient=False,
        redirect_stdout=False,
        redirect_stderr=False,
    )


@contextmanager
def adapter_progress() -> Iterator[Callable[[AdapterProgress], None]]:
    """A callback for ``produce_run`` that shows a bar and prints each failed question (the bar
    is made on the first event: a run read from a file has none)."""
    bar: Progress | None = None
    task: TaskID | None = None
    failures = 0
    showing = False

    def stop() -> None:
        nonlocal showing
        if showing and bar is not None:
            bar.stop()
            showing = False

    def on_event(event: AdapterProgress) -> None:
        nonlocal bar, task, failures, showing
        if bar is None or task is None:
            bar = _progress()
            bar.start()
            showing = True
            task = bar.add_task("asking the adapter", total=event.total, detail="")
        if event.error is not None:
            failures += 1
            # The id and the adapter's message are data: no control characters, and not read
            # as Rich markup ("[bold]", ":smile:") either.
            qid = terminal_text(event.question_id, one_line=True)
            error = terminal_text(event.error, one_line=True)
            bar.console.print(
                f"adapter failed for question '{qid}': {error}",
                markup=False,
                emoji=False,
                soft_wrap=True,  # one line per failure, as logs are searched
            )
        bar.update(task, completed=event.done, detail=f"failed {failures}")
        if event.done == event.total:  # done: the judging bar may come next, one live at a time
            stop()

    try:
        yield on_event
    finally:
        stop()


def in_notebook() -> bool:
    """Whether this runs in a Jupyter (or Colab) notebook, where a live bar is drawn as output.
    rich's own test, which looks for an IPython shell: with IPython not even loaded there is
    none, and rich is not imported to say so."""
    if stderr is None and "IPython" not in sys.modules:
        return False
    return bool(console().is_jupyter)


def is_terminal() -> bool:
    """Whether the bars can be live: stderr is a terminal, or a notebook draws them."""
    return sys.stderr.isatty() or in_notebook()


def shows_progress() -> bool:
    """Whether the Python API shows progress by default (``judge.evaluate(progress=None)``):
    someone is watching, in a terminal or a notebook. Not in a log, CI or a captured test."""
    return sys.stdout.isatty() or in_notebook()


#: What a judging progress bar takes: each event of the judging (``judge_progress``).
OnJudging = Callable[[JudgeProgress], None]


@contextmanager
def judge_progress() -> Iterator[OnJudging]:
    """A bar with done/total, cache hits, non-ok verdicts and an ETA (plain lines off a tty)."""
    bar = _progress() if is_terminal() else None
    task = None if bar is None else bar.add_task("judging", total=None, detail="")
    started = False  # on the first event: the adapter's bar may still be showing before it
    last_line = [-1]  # the last decile printed, so that a log gets about ten lines

    def on_event(event: JudgeProgress) -> None:
        nonlocal started
        detail = f"cached {event.cached}  not ok {event.not_ok}"
        if bar is not None and task is not None:
            if not started:
                bar.start()
                started = True
            bar.update(task, total=event.total, completed=event.done, detail=detail)
            return
        decile = event.done * 10 // max(event.total, 1)
        if decile != last_line[0]:
            last_line[0] = decile
            print(f"judged {event.done}/{event.total} ({detail})", file=sys.stderr, flush=True)

    try:
        yield on_event
    finally:
        if started and bar is not None:
            bar.stop()
