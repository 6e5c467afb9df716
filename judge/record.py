"""The run record: one typed, versioned account of one judged run (like inspect_ai's EvalLog).

``judge.pipeline.evaluate`` builds it (``judge.pipeline.build``), ``report.json`` is its dump
(``record_json``), and ``judge.folders.read_record`` reads a folder's ``report.json`` back
into the same object. Every view (report.md, review.html, verdicts.csv, the console summary, JUnit, the JSON
summary) is a function of it, so the same words count the same things everywhere: the review
reasons of a question (``QuestionRow.triage``) are computed once, here, and every view counts
those.

What it holds, in the order of ``report.json``:

- ``format_version`` (first, as in every file the harness writes), ``manifest``, ``entry`` (the
  run's history line);
- ``questions``: one row per golden question, in golden-set order: what the judge saw, the
  verdict, the adapter's failure, why it needs review;
- ``tables``: the per-type tables as rows (judge, retrieval, and per split);
- ``rule``, ``comparisons`` (with the last compatible run), ``baseline`` (with the pinned
  baseline), ``gate`` (the checks the nightly and CI read), ``prompt_edit``;
- ``agreement``: the audit summary and the corrected estimates, as data.

Derived for machines and left out when read back (they follow from the rest):
``adapter_failed``, ``needs_review``, ``regressions``.

Older folders (format 1 wrote ``report.json`` without the questions) are refused in one line
that says what to do.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    SkipValidation,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticSerializationError

from judge.audit.chunk_agreement import ChunkAgreement, CorrectedRecall
from judge.audit.types import AuditResult
from judge.errors import ConfigError
from judge.jsonl import StateFile, checked_document_text, checked_size, json_document_text

# Re-exported: the views read the record's further judgements through the record's types.
from judge.judging.types import ChunkGrade as ChunkGrade
from judge.judging.types import CorrectnessVerdict as CorrectnessVerdict
from judge.judging.types import TaskJudgement, Verdict
from judge.results.chunk_grades import MissingLabel
from judge.results.compare import (
    SECTIONS,
    Change,
    Flip,
    GateRule,
    MetricValues,
    QuestionValues,
    Section,
    SectionComparison,
)
from judge.results.diagnosis import Diagnosis, TypeDiagnosis, summarise
from judge.results.gate import Gate
from judge.results.history import HistoryEntry
from judge.results.item_record import ItemRecord
from judge.results.manifest import FORMAT_VERSION, Manifest
from judge.results.review import NO_TRIAGE, Triage
from judge.results.tables import TypeTable
from judge.results.tokens import TokenCount, TokenTotals, count_of, token_totals
from judge.results.values import question_values

#: ``report.json``: the run record, of the manifest's format version (read by
#: ``judge.folders.read_record``, written by ``record_json``).
REPORT_FILE = StateFile(
    what="report.json",
    remedy="write it again with 'judge report FOLDER' (from the folder's run and the cache)",
    current=FORMAT_VERSION,
    error=ConfigError,
)

#: ``values.json``: the run's values question by question (``Record.values``), kept apart from
#: the record so that later runs' comparisons (the last run, the season's twenty) read a few
#: numbers per question instead of validating whole records.
VALUES_FILE = StateFile(
    what="values.json",
    remedy="write it again with 'judge report FOLDER' (from the folder's run and the cache)",
    current=FORMAT_VERSION,
    error=ConfigError,
)


class SavedValues(BaseModel):
    """``values.json``: ``QuestionValues`` as a document of its own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: int = FORMAT_VERSION
    types: dict[str, str]
    values: dict[Section, MetricValues]

    def question_values(self) -> QuestionValues:
        return QuestionValues(dict(self.types), {s: self.values.get(s, {}) for s in SECTIONS})


def values_json(record: Record) -> str:
    """``values.json`` of a record (checked by the one writer's rules, as report.json)."""
    values = record.values()
    # Built from the record's own typed values, not read: nothing to validate (reading it back
    # does, and checked_document_text below reads it back).
    saved = SavedValues.model_construct(types=values.types, values=dict(values.values))
    return checked_document_text(
        saved.model_dump_json() + "\n", VALUES_FILE, record.manifest.folder
    )


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
    ``judge.pipeline.build``; every view reads it, none derives it again."""
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


class Tables(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: TypeTable
    retrieval: TypeTable
    splits: dict[str, TypeTable]
    """Judge tables per split (tune, holdout) when the golden set has splits."""


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
    agreement: dict[str, Any] | None = None
    """Agreement with the human labels and the corrected estimates, when there are labels for
    these answers (``judge.audit.agreement.as_json``)."""
    # In memory only: what the live run computed the agreement from (the record on disk has
    # its data in ``agreement``).
    audit: SkipValidation[AuditResult | None] = Field(default=None, exclude=True)

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
        comparisons with other runs are made of."""
        return question_values(
            self.items,
            {v.question_id: v for v in self.verdicts},
            {row.question_id: row.correctness for row in self.questions if row.correctness},
        )

    @property
    def diagnoses(self) -> list[TypeDiagnosis]:
        """Per question type: the counts of each diagnosis and which layer to fix first
        (``judge.results.diagnosis.summarise``), from the rows' ``diagnosis``: derived, never
        stored (report.json holds the rows)."""
        config = self.manifest.config
        data, retrieval = config.get("data", {}), config.get("retrieval", {})
        return summarise(
            ((row.type, row.diagnosis) for row in self.questions),
            types=data.get("question_types", ()),
            out_of_scope_types=data.get("out_of_scope_types", ()),
            context_k=retrieval.get("context_k", 0),
        )

    @property
    def tokens(self) -> TokenTotals:
        """Prompt and completion tokens and judge seconds per question type and in all
        (``judge.results.tokens``), from the verdicts: derived, never stored here (the
        manifest keeps a copy for readers of manifest.json alone)."""
        return token_totals(
            self.verdicts,
            {row.question_id: row.type for row in self.questions},
            self.manifest.config.get("data", {}).get("question_types", ()),
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


class RowLines(NamedTuple):
    """Each question row's item and verdict encoded once, as one line of UTF-8 JSON each (None:
    the row has none), without their unset optional fields: the lines of ``items.jsonl`` and
    ``verdicts.jsonl``, which ``report.json``'s rows hold too (``record_json``). Bytes, as
    pydantic's serializer makes them and the files are written: the 45 MB of them in a
    10,000-question folder are neither decoded nor encoded again."""

    items: list[bytes | None]
    verdicts: list[bytes | None]

    def items_jsonl(self) -> bytes:
        """``items.jsonl``: the item of every judged question (``Record.items``)."""
        return b"".join(
            [
                item + b"\n"
                for item, verdict in zip(self.items, self.verdicts, strict=True)
                if item is not None and verdict is not None
            ]
        )

    def verdicts_jsonl(self) -> bytes:
        """``verdicts.jsonl``: every verdict (``Record.verdicts``)."""
        return b"".join([verdict + b"\n" for verdict in self.verdicts if verdict is not None])


def row_lines(record: Record) -> RowLines | None:
    """The rows' items and verdicts as JSON lines, each encoded once (None when one cannot be
    encoded, e.g. half a UTF-16 character: ``record_json`` and ``judge.jsonl.jsonl_text`` then
    each say which, their own way)."""
    rows = record.questions
    try:
        return RowLines(
            [None if r.item is None else _json(r.item, exclude_none=True) for r in rows],
            [None if r.verdict is None else _json(r.verdict, exclude_none=True) for r in rows],
        )
    except PydanticSerializationError:
        return None


def _json(model: BaseModel, **options: Any) -> bytes:
    """``model_dump_json`` as the UTF-8 bytes pydantic makes (not decoded to a string)."""
    return model.__pydantic_serializer__.to_json(model, **options)


def record_json(record: Record, lines: RowLines | None = None) -> bytes:
    """``report.json`` (UTF-8): the record, then what follows from it, for machines; refused,
    like every state file, when its own reader would refuse it.

    The record is indented, but each question row is one line: compact (a 10,000-question
    file is a quarter smaller), and a row is read, diffed and grepped as one line. Encoded by
    pydantic's own serializer, not ``json.dumps`` (whose indenting encoder is pure Python).
    A row's item and verdict are the lines of ``items.jsonl`` and ``verdicts.jsonl``
    (``lines``, from ``row_lines``: each encoded once for the three files), without their
    unset optional fields, which read back as the same values.

    The one writer's rules (``checked_document_text``) check everything but the rows by reading
    it back: that is where JSON of a shape the record does not fix can be (the recorded
    configuration, the fingerprints' parts) and so an integer the reader would refuse. A row holds
    only typed fields of fixed depth (``tests/test_record.py`` keeps it so), each value read
    under the same limits, so reading 10,000 rows back would prove nothing more; the whole
    file is still measured against the size limit, and half a UTF-16 character anywhere fails
    the encoding.
    """
    derived = {
        "adapter_failed": {f.question_id: f.error for f in record.adapter_failed},
        "needs_review": {row.question_id: row.triage.reasons for row in record.needs_review},
        "regressions": len(record.regressions),
    }
    where = record.manifest.folder
    try:
        head = record.model_dump_json(indent=2, by_alias=True, exclude={"questions"})
        lines = lines or row_lines(record)
        if lines is None:
            raise PydanticSerializationError("a row's item or verdict cannot be encoded")
        rows = [
            _row_json(row, item, verdict)
            for row, item, verdict in zip(
                record.questions, lines.items, lines.verdicts, strict=True
            )
        ]
    except PydanticSerializationError:  # half a UTF-16 character, too deep: the writer says which
        text = json_document_text(record, REPORT_FILE, where, by_alias=True, extra=derived)
        return text.encode("utf-8")
    tail = json.dumps(derived, ensure_ascii=False, indent=2)
    # Both are indented objects: "{\n  ...\n}". The derived keys go after the record's own.
    head = f"{head[:-2]},{tail[1:]}\n"
    checked_document_text(head, REPORT_FILE, where)
    # The rows go where the model has them, before the key that follows them.
    at = head.index(f'\n  "{_FIELD_AFTER_QUESTIONS}": ')
    data = b"".join(
        [
            head[:at].encode("utf-8"),
            b'\n  "questions": [\n',
            b",\n".join([b"    " + row for row in rows]),
            b"\n  ],",
            head[at:].encode("utf-8"),
        ]
    )
    return checked_size(data, REPORT_FILE, where)


def _row_json(row: QuestionRow, item: bytes | None, verdict: bytes | None) -> bytes:
    """A row as one JSON object, its item and verdict put in where the model has them (before
    the field that follows them). The first ``,"<that field>":`` is the key's: a quote inside a
    JSON string is escaped, so the text of a question cannot hold one."""
    rest = _json(row, by_alias=True, exclude=_ENCODED_APART)
    at = rest.index(_KEY_AFTER_VERDICT)
    return b"".join(
        [rest[:at], b',"item":', item or b"null", b',"verdict":', verdict or b"null", rest[at:]]
    )


_ROW_FIELDS = list(QuestionRow.model_fields)
_ENCODED_APART = {"item", "verdict"}
#: The key of the row field after ``verdict`` (``item`` comes just before it), as pydantic
#: writes it: where the two go back (tests/test_record.py holds the row's field order).
_KEY_AFTER_VERDICT = f',"{_ROW_FIELDS[_ROW_FIELDS.index("verdict") + 1]}":'.encode()

#: The record's field after ``questions``: where ``record_json`` puts the rows back.
_FIELD_AFTER_QUESTIONS = list(Record.model_fields)[list(Record.model_fields).index("questions") + 1]
