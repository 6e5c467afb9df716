"""``judge run`` and ``judge nightly`` around ``evaluate``: the CI files they were asked for
(``--junit``, ``--json``), made ready before the judging and written after it; and the run's one
decision (``judge.results.decision``: first line, exit code, ``--json`` verdict), here for the
command line, which imports only the wiring."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from judge.io.write import write_atomic
from judge.results.decision import Decision, gate_decision

__all__ = ["Decision", "gate_decision", "ready_outputs", "write_outputs"]


def ready_outputs(paths: Iterable[Path | None]) -> None:
    """Create the folders of the files a run will write, so that a wrong path fails now, not
    after the judging."""
    for path in paths:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)


def write_outputs(files: Mapping[Path, str]) -> None:
    """Write each file (a view's text: the JUnit XML, the JSON summary) atomically, in order."""
    for path, text in files.items():
        write_atomic(path, text)
