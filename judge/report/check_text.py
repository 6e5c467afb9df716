"""``judge check`` as a view: the lines it prints about the inputs, the judge and the gate.

A pure function of what the check found (``judge.pipeline.check.Checked``), read through the
protocols below: the views never import the wiring, so they name only what they read. Each
line is one line: the CLI prints it with its data escaped (``terminal_text``, one line).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Sized
from typing import Protocol


class _Line(Protocol):
    def line(self) -> str: ...


class _Described(Protocol):
    def describe(self) -> str: ...


class _Golden(Protocol):
    @property
    def questions(self) -> Sized: ...
    @property
    def corpus(self) -> Sized: ...


class _Run(Protocol):
    @property
    def records(self) -> Sized: ...


class _Labels(Protocol):
    @property
    def current(self) -> Sized: ...
    def retired_lines(self) -> list[str]: ...


class _Inputs(Protocol):
    @property
    def golden(self) -> _Golden: ...
    @property
    def run(self) -> _Run: ...
    @property
    def run_source(self) -> str: ...
    @property
    def labels(self) -> _Labels: ...


class _Preflight(Protocol):
    @property
    def judge(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def cached(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def to_judge(self) -> int: ...
    @property
    def further(self) -> Sequence[_Line]: ...


class _Checked(Protocol):
    """What ``check_lines`` reads of ``judge.pipeline.check.Checked``."""

    @property
    def inputs(self) -> _Inputs: ...
    @property
    def per_type(self) -> Mapping[str, int]: ...
    @property
    def unlabelled(self) -> Sized: ...
    @property
    def documents(self) -> int: ...
    @property
    def labellers(self) -> int: ...
    @property
    def answers(self) -> _Described: ...
    @property
    def judge(self) -> _Preflight | None: ...
    @property
    def detectable(self) -> Sequence[_Described]: ...
    @property
    def gating(self) -> str | None: ...


def check_lines(checked: _Checked, *, with_labels: bool) -> list[str]:
    """The inputs counted (questions per type, corpus, run, answers; the labels when the
    configuration names a labels file, ``with_labels``), the judge's preflight (or that it was
    not checked) and what the gate can call per type."""
    inputs = checked.inputs
    golden = inputs.golden
    per_type = ", ".join(f"{n} {t}" for t, n in checked.per_type.items())
    lines = [f"questions: {len(golden.questions)} ({per_type})"]
    if len(checked.unlabelled):
        count = len(checked.unlabelled)
        lines.append(f"           relevant chunks not labelled for {count} (judged only)")
    lines.append(f"corpus:    {len(golden.corpus)} chunks in {checked.documents} documents")
    lines.append(f"run:       {len(inputs.run.records)} answers from {inputs.run_source}")
    lines.append(f"answers:   {checked.answers.describe()}")
    if with_labels:
        labels = inputs.labels
        lines.append(f"labels:    {len(labels.current)} from {checked.labellers} labeller(s)")
        lines += [f"           {line}" for line in labels.retired_lines()]
    lines += _judge_lines(checked.judge)
    lines.append("the gate can call (docs/gate.md):")
    lines += [f"  {seen.describe()}" for seen in checked.detectable]
    if checked.gating is not None:
        lines.append(f"  warning: {checked.gating}")
    return lines


def _judge_lines(preflight: _Preflight | None) -> list[str]:
    if preflight is None:
        return ["judge:     not checked (--no-judge)"]
    return [
        f"judge:     {preflight.judge}",
        f"           ({preflight.reason})",
        f"cache:     {preflight.cached} of {preflight.total} answers judged already "
        f"(from the cache); {preflight.to_judge} to judge",
        # chunk grades, correctness: when they are on
        *(f"           {count.line()}" for count in preflight.further),
    ]
