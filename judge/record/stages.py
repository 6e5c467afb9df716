"""What a run's stages hand to the record's build (``judge.record.build``): the inputs and
retrieval (``Measured``), the verdicts and further judgements with who gave them (``Judged``),
and what the run is compared with (``Earlier``). Plain data, filled by the wiring
(``judge.pipeline``); a live run and a re-rendered folder both come with a ``Judged``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.grading import Fingerprint
from judge.judging.types import ChunkGrade, ContextChunk, CorrectnessVerdict, Verdict
from judge.record.model import Record
from judge.results.baseline import Baseline
from judge.results.compare import QuestionValues
from judge.results.gate import Gate
from judge.results.history import HistoryEntry
from judge.results.manifest import JudgeInfo
from judge.results.tables import TypeTable
from judge.retrieval import RetrievalScores


class TaskResults(NamedTuple):
    """One further judgement's results as the record keeps them (``TaskDef.per_question``),
    the record row's field that holds them, and the fingerprint they were cached under."""

    row_field: str
    per_question: Mapping[str, Any]
    fingerprint: Fingerprint


class Judged(NamedTuple):
    """What the judge stage hands to the report: the verdicts and who gave them, and the
    results of the further judgements that ran."""

    verdicts: dict[str, Verdict]
    judge: JudgeInfo
    fingerprint: Fingerprint
    seconds: float
    tasks: Mapping[str, TaskResults] = MappingProxyType({})
    """Per further judgement that ran (``chunk``, ``correctness``, ...), its results; a
    judgement that was off is not in it."""
    shown: Mapping[str, Sequence[ContextChunk]] = MappingProxyType({})
    """Per question id, the chunks its judge was shown (the items' contexts, built once by
    ``build_items``); a question not in it has its context built from the run again."""

    def of(self, task: str) -> Mapping[str, Any]:
        """Per question id, a judgement's results (empty: it was off)."""
        found = self.tasks.get(task)
        return MappingProxyType({}) if found is None else found.per_question

    @property
    def chunk_grades(self) -> Mapping[str, tuple[ChunkGrade, ...]]:
        """Per question id, the grades of its retrieved chunks (empty: chunk grading off)."""
        return self.of("chunk")

    @property
    def correctness(self) -> Mapping[str, CorrectnessVerdict]:
        """Per question id, its correctness verdict (empty: correctness off)."""
        return self.of("correctness")


class Earlier(NamedTuple):
    """What a run is compared with, read by the wiring once per command and handed down:
    the history, the pinned baseline, and earlier runs' records by folder name."""

    history: list[HistoryEntry]
    baseline: Baseline | None
    record: Callable[[str], Record | None]
    """An earlier run's record by folder name (read once per folder), or None when it is
    gone, damaged or of another format: the comparison then falls back to an older run."""
    values: Callable[[str], QuestionValues | None]
    """An earlier run's values question by question (its ``values.json``), None likewise: what
    the comparisons read (the last run, the season's runs), cheaper than a whole record."""
    gate: Callable[[str], Gate | None] | None = None
    """An earlier run's gate (its record's, read alone when the record is not read already),
    None likewise: what the notes of the falls that ended read (None here: from ``record``)."""


class Measured(NamedTuple):
    """The inputs and retrieval of one run, as the report needs them."""

    golden: GoldenSet
    run: Run
    run_source: str
    scores: RetrievalScores
    retrieval: TypeTable
