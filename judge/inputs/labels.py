"""Human labels: a person's faithfulness and relevance for one exact answer text.

A label may also carry ``correctness`` (0-2: the answer against the question's reference
answer, the optional axis of ``judge.axes``), given where the run judged correctness; a label
without it (every label written before correctness existed) is a label of the two axes only,
and the audit scores correctness only against the labels that carry it.

A label is valid only for the answer it was given for (``answer_sha256``). A label for a
question that is no longer in the golden set (a retired question) is kept in the file but left
out of every figure: every command skips it with a warning, ``judge check`` lists them, and a
rewrite of the file (``judge audit import``) keeps them.

``data.labels`` naming a file that does not exist is not "no labels": it is most likely a
wrong path. ``load_labels_if_any`` then returns no labels with ``missing`` set; ``judge check``
reports it as an error (``Labels.missing_problem``), other commands as a warning. An empty file
is the way to say "no labels yet".
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import Field

from judge.errors import InputError
from judge.io.json import UTF8_BOM
from judge.io.jsonl import read_jsonl
from judge.io.text import Id, IsoDatetime, StrictInt, StrictRecord, check_readable, text_problem
from judge.io.validation import in_line_order, parse_records


class LabelScores(StrictRecord):
    """Who scored a question's answer, and how (what a report folder keeps with each item)."""

    question_id: Id
    faithfulness: StrictInt = Field(ge=0, le=2)
    """0, 1 or 2: a JSON integer (``2``, never ``"2"``, ``2.0`` or ``true``)."""
    relevance: StrictInt = Field(ge=0, le=2)
    correctness: StrictInt | None = Field(default=None, ge=0, le=2)
    """0, 1 or 2 against the reference answer, when the labeller scored it (None: not scored;
    a labels file written before the axis existed has none)."""
    labeller: str = Field(min_length=1)
    note: str = ""
    labelled_at: IsoDatetime | None = None
    source: Literal["sheet", "terminal", "review"] | None = None
    """How the label was made: the blind CSV sheet or the terminal (items the labeller did not
    choose), or a mark on review.html (items a reviewer chose to open, often because triage
    flagged them: not a random sample, so corrected estimates leave them out). None in files
    written before labels recorded it."""


class HumanLabel(LabelScores):
    """A label as the labels file keeps it: the scores and the answer they are valid for."""

    answer_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """sha256 hex of the exact UTF-8 answer text that was labelled."""

    def scores(self) -> LabelScores:
        """The label without its answer hash. Its fields were validated when the label was
        read, so they are copied, not dumped and validated again (one per labelled item of
        every report)."""
        return LabelScores.model_construct(
            **{name: getattr(self, name) for name in LabelScores.model_fields}
        )


class Labels(NamedTuple):
    """The labels of a labels file, split by whether their question is still golden."""

    current: list[HumanLabel]
    retired: list[tuple[int, HumanLabel]]
    """(line, label) for questions no longer in the golden set: kept, never counted."""
    path: Path | None = None
    missing: bool = False
    """``data.labels`` names a file that does not exist (there are then no labels)."""

    def missing_problem(self) -> str | None:
        """What to say when ``data.labels`` names no file (``check``: an error), or None."""
        if not self.missing:
            return None
        return (
            f"{self.path}: data.labels names this file but it does not exist; fix the path in "
            "judge.toml, or create an empty file if there are no labels yet"
        )

    def warning(self) -> str | None:
        """One line for commands other than ``check`` (which lists retired labels and refuses
        a missing file), or None."""
        if self.missing:
            return f"{self.missing_problem()} (no labels are used)"
        if not self.retired:
            return None
        ids = sorted({label.question_id for _, label in self.retired})
        return (
            f"{self.path}: {len(self.retired)} label(s) for question(s) no longer in the golden "
            f"set were skipped ({', '.join(ids[:5])}{', …' if len(ids) > 5 else ''}); "
            "'judge check' lists them"
        )

    def retired_lines(self) -> list[str]:
        return [
            f"{self.path}:{line}: question_id '{label.question_id}' is no longer a golden id; "
            "the label is kept but not counted (delete the line if the question is gone for good)"
            for line, label in self.retired
        ]


NO_LABELS = Labels([], [])


def given_text_problems(
    labeller: str | None, note: str = "", note_field: str = "note"
) -> list[str]:
    """What is wrong with a labeller's name and a note as a person gave them (a sheet's
    cells, a marks file, ``--labeller``), one phrase each: control and invisible characters
    are refused there, when the label is made (``judge.io.text.text_problem``). A labels file
    read back is not held to it: a label stored by an earlier version stays readable."""
    problems = []
    name_problem = text_problem(labeller, one_line=True) if labeller else None
    if name_problem:
        problems.append(f"labeller {name_problem}")
    note_problem = text_problem(note, one_line=False) if note else None
    if note_problem:
        problems.append(f"{note_field} {note_problem}")
    return problems


def load_labels(path: Path, questions: Collection[str]) -> Labels:
    """Load human labels; conflicting duplicates are errors (every one reported at once).
    ``questions``: the golden set's ids (a label of another id is retired)."""
    problems: list[str] = []
    records = parse_records(path, read_jsonl(path), HumanLabel, problems)
    seen: dict[tuple[str, str, str], tuple[int, HumanLabel]] = {}
    retired: list[tuple[int, HumanLabel]] = []
    for line, label in records:
        if label.question_id not in questions:
            retired.append((line, label))
            continue
        key = (label.question_id, label.answer_sha256, label.labeller)
        if key in seen:
            first_line, first = seen[key]
            if (first.faithfulness, first.relevance, first.correctness) != (
                label.faithfulness,
                label.relevance,
                label.correctness,
            ):
                problems.append(
                    f"{path}:{line}: conflicts with line {first_line}: labeller '{label.labeller}' "
                    f"scored the same answer to '{label.question_id}' differently; keep one"
                )
        else:
            seen[key] = (line, label)
    if problems:
        raise InputError(in_line_order(path, problems))
    return Labels([label for _, label in seen.values()], retired, path)


def load_labels_if_any(path: Path | None, questions: Collection[str]) -> Labels:
    """Labels from ``data.labels``; none yet (no setting, an empty file) is none, and a file
    that does not exist is none with ``missing`` set (the caller reports it)."""
    if path is None:
        return Labels([], [], path)
    if not os.path.lexists(path):
        return Labels([], [], path, missing=True)
    check_readable(path)  # a symlink, a folder or an oversized file: refused, never "none"
    with path.open("rb") as handle:
        head = handle.read(64 * 1024).removeprefix(UTF8_BOM)  # an editor's empty file
        blank = not head.strip() and not handle.read(1)
    if blank:
        return Labels([], [], path)
    return load_labels(path, questions)


def labels_by_answer(labels: list[HumanLabel]) -> dict[tuple[str, str], list[HumanLabel]]:
    """Labels grouped by (question id, answer hash): the answer each is valid for."""
    grouped: dict[tuple[str, str], list[HumanLabel]] = {}
    for label in labels:
        grouped.setdefault((label.question_id, label.answer_sha256), []).append(label)
    return grouped
