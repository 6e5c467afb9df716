"""The run record: one typed, versioned account of one judged run (like inspect_ai's EvalLog).

``judge.pipeline.evaluate`` builds it (``judge.record.build``), ``report.json`` is its dump
by pydantic's serializer (``judge.record.store.record_json``), and
``judge.record.store.read_record`` reads a folder's ``report.json`` back into the same object.
Every view (report.md, review.html, verdicts.csv, the console summary, JUnit, the JSON summary)
is a function of it alone, so the same words count the same things everywhere: the review
reasons of a question (``QuestionRow.triage``) are computed once, here, and every view counts
those. This module holds the types only; reading and writing them is ``judge.record.store``'s.

What it holds, in the order of ``report.json``:

- ``format_version`` (first, as in every file the harness writes), ``manifest``, ``entry`` (the
  run's history line);
- ``questions``: one row per golden question, in golden-set order: what the judge saw, the
  verdict, the adapter's failure, why it needs review, its chunk grades and correctness;
- ``tables``: the per-type tables as rows (judge, retrieval, and per split);
- ``rule``, ``comparisons`` (with the last compatible run), ``baseline`` (with the pinned
  baseline), ``season``, ``gate`` (the checks the nightly and CI read, the bars the run
  checked among them), ``prompt_edit``;
- ``chunks``: the chunk grades summarised;
- ``audit``: the agreement with the human labels and the corrected estimates, typed
  (``judge.audit.types.AuditResult.figures``).

Derived for machines (computed fields, written after the rest) and left out when read back
(they follow from the rest): ``adapter_failed``, ``needs_review``, ``regressions``.

A folder of format 2 reads as format 3 without its untyped agreement
(``judge.results.manifest.upgrade_format_2``); older folders (format 1 wrote ``report.json``
without the questions) are refused in one line that says what to do.
"""

from __future__ import annotations

import weakref
from typing import Annotated, Any, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainSerializer,
    computed_field,
    field_validator,
    model_validator,
)

from judge.audit.align import AdoptedPrompt
from judge.audit.chunk_agreement import ChunkAgreement, CorrectedRecall
from judge.audit.panel_agreement import PanelSummary
from judge.audit.types import AuditResult

# Re-exported: the views read the record's further judgements through the record's types.
from judge.judging.types import ChunkGrade as ChunkGrade
from judge.judging.types import CorrectnessVerdict as CorrectnessVerdict
from judge.judging.types import TaskJudgement, Verdict
from judge.results.chunk_grades import MissingLabel
from judge.results.compare import Change, GateRule, QuestionValues, SectionComparison
from judge.results.diagnosis import Diagnosis, TypeDiagnosis, summarise
from judge.results.flips import Flip
from judge.results.gate import Gate
from judge.results.history import HistoryEntry
from judge.results.item_record import ItemRecord
from judge.results.manifest import FORMAT_VERSION, Manifest
from judge.results.review import NO_TRIAGE, Triage
from judge.results.tables import TypeTable
from judge.results.tokens import TokenCount, TokenTotals, count_of, token_totals
from judge.results.values import question_values

#: The keys of report.json derived from the rest (written for machines, not read back).
DERIVED = ("adapter_failed", "needs_review", "regressions")


def plain(value: Any) -> Any:
    """A value as JSON data: named tuples as objects (not arrays), models as their dumps."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


_Plain = PlainSerializer(plain, when_used="json")


def _comparison_json(comp: SectionComparison) -> dict[str, Any]:
    return {
        "section": comp.section,
        "against": comp.baseline,
        "note": comp.note,
        "changes": [c.to_json() for c in comp.changes],
    }


Comparison = Annotated[SectionComparison, PlainSerializer(_comparison_json, when_used="json")]


class PromptEdit(NamedTuple):
    """What a prompt edit changed, against the run just before it."""

    previous_folder: str
    flips: list[Flip]
    agreement_before: float | None
    agreement_after: float | None
    labelled: int


class FailedAnswer(NamedTuple):
    """A golden question the RAG system gave no answer for: the adapter raised, timed out or
    returned something unusable."""

    question_id: str
    type: str
    error: str
    question: str


class RunDiff(NamedTuple):
    """Two runs compared question by question (``judge diff``)."""

    old: str
    new: str
    """The two folders' names."""
    differs: list[str]
    """What the two runs do not share: "golden set", "corpus", "judge configuration", ..."""
    rule: GateRule
    comparisons: list[SectionComparison]
    flips: list[Flip]
    answers_changed: tuple[str, ...] = ()
    """Question ids whose answer text differs (or that have an answer in one run only)."""
    retrieval_changed: tuple[str, ...] = ()
    """Question ids whose context chunks (ids, in rank order) differ."""


class QuestionRow(BaseModel):
    """One golden question in a run: the one per-question shape every view reads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    type: str
    split: str
    question: str
    status: str
    """The verdict's status (``ok``, ``parse_error``, ...), ``adapter_failed`` (no answer) or
    ``not_judged``."""
    item: ItemRecord | None
    """What the judge saw, with the retrieval values and the human labels (None: no answer)."""
    verdict: Verdict | None
    failure: str | None = None
    """The adapter's error, for a question it gave no answer for."""
    triage: Annotated[Triage, _Plain] = NO_TRIAGE
    """Why a person should look at it (no flags: nothing to look at): ``judge.results.review``,
    the one definition every view counts."""
    diagnosis: Diagnosis = "not judged"
    """Where the answer went wrong, if it did (``judge.results.diagnosis``): computed once, in
    ``judge.record.rows``; every view reads it, none derives it again."""
    chunk_grades: tuple[ChunkGrade, ...] | None = None
    """The judge's grades of the retrieved chunks, in rank order (None: chunk grading off or
    no answer; ``judge.judging.tasks.chunk``, whose ``row_field`` this is)."""
    correctness: CorrectnessVerdict | None = None
    """The answer against the reference answer (None: correctness off or not asked;
    ``judge.judging.tasks.correctness``)."""
    judgements: dict[str, tuple[TaskJudgement, ...]] | None = None
    """The results of the judgements without a field of their own (``[judge.tasks.<name>]``),
    by task, in item order (None: none of them ran). The chunk grades and correctness keep
    typed fields: the views read them."""


class ChunkSummary(BaseModel):
    """What the judge's chunk grades say about the run (``[judge.chunks]`` on): judged retrieval
    numbers (``judge.results.chunk_grades``), possible missing labels, and the grades against the
    golden labels with the corrected recall (``judge.audit.chunk_agreement``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    depth: int
    """How many of each answered question's top chunks were graded."""
    relevant_grade: int
    """A chunk graded at least this counts as relevant."""
    graded: int
    """Chunks graded (every status)."""
    not_ok: int
    """Of those, without a usable grade (parse error, backend error, truncated)."""
    judged: TypeTable
    """Judged retrieval of every answerable question whose chunks were graded."""
    judged_unlabelled: TypeTable
    """The same, over the questions without chunk labels alone."""
    missing: list[MissingLabel]
    agreement: ChunkAgreement
    corrected_k: int
    corrected: dict[str, CorrectedRecall]
    """Per type then ``all``: the mean human recall@``corrected_k``, corrected (PPI)."""
    texts: dict[str, str] = {}
    """The corpus text of every chunk in ``missing``, by chunk id: a chunk graded deeper than
    ``context_k`` is in no answer's context, and ``missing-labels.csv`` and review.html show it
    to the reviewer who decides on it (empty in records written before it was kept)."""


class Tables(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: TypeTable
    retrieval: TypeTable
    splits: dict[str, TypeTable]
    """Judge tables per split (tune, holdout) when the golden set has splits."""


#: The last record's ``values()``, beside a weak reference to that record (frozen: the same
#: record, the same values). Not a private attribute: pydantic compares those, and a record that
#: was asked for its values would no longer equal the same record read back. Weak: holding the
#: record until the process ends made its last garbage collection walk every row (0.6 s).
_LAST_VALUES: tuple[weakref.ref[Record], QuestionValues] | None = None


class Record(BaseModel):
    """Everything one judged run measured, compared and concluded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: int = FORMAT_VERSION
    manifest: Manifest
    entry: HistoryEntry
    questions: list[QuestionRow]
    tables: Tables
    rule: Annotated[GateRule, _Plain] = GateRule()
    """The rule the comparisons were made with (margins, minimum questions)."""
    comparisons: list[Comparison]
    baseline: list[Comparison]
    season: list[Comparison] = []
    """Tonight and the last nights against the season of earlier compatible runs
    (``judge.results.season``), per section, once there are enough of them."""
    gate: Annotated[Gate, _Plain]
    prompt_edit: Annotated[PromptEdit | None, _Plain] = None
    chunks: ChunkSummary | None = None
    """The judge's chunk grades summarised (None: chunk grading off)."""
    audit: Annotated[AuditResult | None, _Plain] = None
    """Agreement with the human labels and the corrected estimates, when there are labels for
    these answers: the audit's figures (``AuditResult.figures``), which report.md and the
    console show (``judge audit`` lists the disagreements, from the labels file)."""
    adopted_prompt: Annotated[AdoptedPrompt | None, _Plain] = None
    """The run's prompt as ``judge align`` adopted it, with its held-out agreement beside the
    previous prompt's (None: the prompt was not written by ``judge align``)."""
    panel: Annotated[PanelSummary | None, _Plain] = None
    """The newest ``judge panel`` of the run's exact answers: members, κ, disputed answers."""

    # --- derived, for machines: written after the record's own keys, dropped when read ------

    @computed_field(alias="adapter_failed")  # type: ignore[prop-decorator]
    @property
    def derived_adapter_failed(self) -> dict[str, str]:
        """``adapter_failed`` in report.json: question id → the adapter's error."""
        return {f.question_id: f.error for f in self.adapter_failed}

    @computed_field(alias="needs_review")  # type: ignore[prop-decorator]
    @property
    def derived_needs_review(self) -> dict[str, list[str]]:
        """``needs_review`` in report.json: question id → why a person should look at it."""
        return {row.question_id: list(row.triage.reasons) for row in self.needs_review}

    @computed_field(alias="regressions")  # type: ignore[prop-decorator]
    @property
    def derived_regressions(self) -> int:
        """``regressions`` in report.json: how many changes the gate counts as regressions."""
        return len(self.regressions)

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(key in data for key in DERIVED):
            data = {k: v for k, v in data.items() if k not in DERIVED}
        return _from_the_first_gate(data)

    @field_validator("comparisons", "baseline", "season", mode="before")
    @classmethod
    def _comparisons_from_json(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [_comparison_from_json(c) if isinstance(c, dict) else c for c in value]
        return value

    # --- what views read ----------------------------------------------------------------------

    @property
    def judge(self) -> TypeTable:
        return self.tables.judge

    @property
    def retrieval(self) -> TypeTable:
        return self.tables.retrieval

    @property
    def splits(self) -> dict[str, TypeTable]:
        return self.tables.splits

    @property
    def verdicts(self) -> list[Verdict]:
        """The verdicts, in golden-set order."""
        return [row.verdict for row in self.questions if row.verdict is not None]

    @property
    def items(self) -> list[ItemRecord]:
        """What the judge saw, for every judged question, in golden-set order."""
        return [row.item for row in self.questions if row.item is not None and row.verdict]

    @property
    def adapter_failed(self) -> list[FailedAnswer]:
        """The golden questions without an answer, in golden-set order."""
        return [
            FailedAnswer(row.question_id, row.type, row.failure, row.question)
            for row in self.questions
            if row.failure is not None
        ]

    @property
    def unjudged(self) -> list[Verdict]:
        """The answers the judge gave no verdict for (status not ok), in golden-set order."""
        return [v for v in self.verdicts if v.status != "ok"]

    @property
    def regressions(self) -> list[Change]:
        return [
            c
            for comp in [*self.comparisons, *self.baseline, *self.season]
            for c in comp.regressions
        ]

    def values(self) -> QuestionValues:
        """The run's values question by question (``judge.results.values``): what paired
        comparisons with other runs are made of. Derived once for the record a command works
        on (values.json and the history page's marks both ask: ``_LAST_VALUES``)."""
        global _LAST_VALUES
        if _LAST_VALUES is not None and _LAST_VALUES[0]() is self:
            return _LAST_VALUES[1]
        values = question_values(
            self.items,
            {v.question_id: v for v in self.verdicts},
            {row.question_id: row.correctness for row in self.questions if row.correctness},
        )
        _LAST_VALUES = (weakref.ref(self), values)
        return values

    def remember_values(self, values: QuestionValues) -> None:
        """Take ``values`` as this record's ``values()``: the builder derived them from the same
        items, verdicts and correctness for its comparisons (``tests/record/test_build.py``
        checks that they are equal), so values.json and the marks need not derive them again."""
        global _LAST_VALUES
        _LAST_VALUES = (weakref.ref(self), values)

    @property
    def diagnoses(self) -> list[TypeDiagnosis]:
        """Per question type: the counts of each diagnosis and which layer to fix first
        (``judge.results.diagnosis.summarise``), from the rows' ``diagnosis``: derived, never
        stored (report.json holds the rows)."""
        config = self.manifest.config
        return summarise(
            ((row.type, row.diagnosis) for row in self.questions),
            types=config.data.question_types,
            out_of_scope_types=config.data.out_of_scope_types,
            context_k=config.retrieval.context_k,
        )

    @property
    def tokens(self) -> TokenTotals:
        """Prompt and completion tokens and judge seconds per question type and in all
        (``judge.results.tokens``), from the verdicts: derived, never stored here (the
        manifest keeps a copy for readers of manifest.json alone)."""
        return token_totals(
            self.verdicts,
            {row.question_id: row.type for row in self.questions},
            self.manifest.config.data.question_types,
        )

    @property
    def further_tokens(self) -> dict[str, TokenCount]:
        """The further judgements' tokens and seconds over the run (``chunk grades``,
        ``correctness``), for those that ran: what they cost beside the answers'."""
        grades = [g for row in self.questions for g in row.chunk_grades or ()]
        verdicts = [row.correctness for row in self.questions if row.correctness is not None]
        out = {}
        if self.chunks is not None:
            out["chunk grades"] = count_of(grades)
        if verdicts:
            out["correctness"] = count_of(verdicts)
        return out

    @property
    def needs_review(self) -> list[QuestionRow]:
        """The judged questions a person should look at: the one list every view counts."""
        return [
            row for row in self.questions if row.triage.needs_review and row.verdict is not None
        ]


def _from_the_first_gate(data: Any) -> Any:
    """A record of this format written before the season gate (issue 19) read as today's: its
    rule had ``min_questions`` (now ignored), and a move beyond the margin in a small type was
    ``too_few`` (now ``listed``). Its changes have no exact p-values: they read as 1 (no
    evidence), which is what the old rule's decisions did not need. Anything else is left to
    the model, which refuses what it does not know."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    rule = data.get("rule")
    if isinstance(rule, dict) and "min_questions" in rule:
        data["rule"] = {k: v for k, v in rule.items() if k != "min_questions"}

    def change(c: Any) -> Any:
        if isinstance(c, dict) and c.get("direction") == "too_few":
            return {**c, "direction": "listed"}
        return c

    for key in ("comparisons", "baseline", "season"):
        comps = data.get(key)
        if isinstance(comps, list):
            data[key] = [
                {**comp, "changes": [change(c) for c in comp.get("changes", [])]}
                if isinstance(comp, dict) and isinstance(comp.get("changes"), list)
                else comp
                for comp in comps
            ]
    gate = data.get("gate")
    if isinstance(gate, dict):
        data["gate"] = {
            **gate,
            **{
                k: [change(c) for c in gate[k]]
                for k in ("regressions", "listed")
                if isinstance(gate.get(k), list)
            },
        }
    return data


def _comparison_from_json(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "section": data["section"],
        "baseline": data["against"],
        "changes": data["changes"],
        "note": data["note"],
    }
