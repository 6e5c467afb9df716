"""Runs: what the RAG system retrieved and answered for each golden question.

"Run" has one meaning in this package, the one it has in IR evaluation: a system's output for
a set of questions. A run is either a JSONL file the user's system wrote (an optional
``{"run_meta": {...}}`` header line, then one record per question), or produced by calling the
user's ``module:function`` adapter (``judge.inputs.adapter``). Either way it is validated
against the golden set. (What ``judge run`` writes is a *report folder*: ``judge.results``.)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from judge.errors import InputError
from judge.inputs.golden import GoldenSet
from judge.io.jsonl import read_jsonl, write_jsonl
from judge.io.text import (
    DEFAULT_MAX_FILE_MB,
    Id,
    IsoDatetime,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictRecord,
)
from judge.io.validation import describe_validation_error, parse_records
from judge.textnorm import same_name, shown_name

JsonScalar = str | StrictInt | StrictFloat | StrictBool | None


class RunSettings(BaseModel):
    """The settings of the RAG system that move its numbers, as a run states them: a run is
    compared with an earlier one whatever these are, and the comparison says which changed
    (``judge.results.history``). Recorded in each history line; None: not stated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    embedding_model: str | None = None
    embedding_version: str | None = None
    chunking: dict[str, JsonScalar] = Field(default_factory=dict)
    generator_model: str | None = None
    embedding_dimension: int | None = None
    embedding_canary: str | None = None
    """A digest of the canary vectors (``canary_digest``): a change with the same embedder
    name is a silently updated model or index."""

    @model_serializer(mode="wrap")
    def _provenance_only_when_stated(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The index provenance is written only when the run stated it: a history line of a run
        without it stays as it was (and readable by a judge from before these fields)."""
        data = handler(self)
        for name in ("embedding_dimension", "embedding_canary"):
            if isinstance(data, dict) and data.get(name) is None:
                data.pop(name, None)
        return data


#: At most this many canary vectors (a few fixed texts, embedded each night).
MAX_CANARIES = 16
#: Canary values are compared rounded to this many decimals, so that the last bits a float
#: printed by another library may differ in do not count as a change.
CANARY_DECIMALS = 4


def canary_digest(canaries: list[list[float]]) -> str:
    """A short digest of the canary vectors, each value rounded to ``CANARY_DECIMALS``: equal
    for the same embedder on the same texts, different when the model's vectors moved."""
    text = ";".join(
        ",".join(f"{round(v, CANARY_DECIMALS) + 0.0:.{CANARY_DECIMALS}f}" for v in vector)
        for vector in canaries
    )
    return "c:" + hashlib.sha256(text.encode("ascii")).hexdigest()[:12]


class RunMeta(StrictRecord):
    """What produced the run; shown in reports so that two runs can be told apart."""

    system: str = "unknown"
    embedding_model: str | None = None
    """The embedding model of the index and of the queries (each side may be stated apart)."""
    embedding_version: str | None = None
    index_embedding_model: str | None = None
    """The model the index (the chunks) was embedded with, when stated apart from the queries'."""
    query_embedding_model: str | None = None
    """The model the queries are embedded with, when stated apart from the index's."""
    index_embedding_version: str | None = None
    query_embedding_version: str | None = None
    chunking: dict[str, JsonScalar] = Field(default_factory=dict)
    """Chunking settings, e.g. method, max_chars, overlap."""
    generator_model: str | None = None
    embedding_dimension: StrictInt | None = Field(default=None, gt=0)
    """The dimension of the embedder's vectors (index provenance; docs/history.md)."""
    embedding_canaries: list[list[StrictFloat]] | None = Field(
        default=None, max_length=MAX_CANARIES
    )
    """Vectors of a few fixed texts, embedded by the system each night: compared with the
    previous run's (by ``canary_digest``), they show an embedder that changed under the same
    name. Each must have ``embedding_dimension`` values (all one length when it is not stated),
    none NaN or infinite."""
    created_at: IsoDatetime | None = None
    notes: str | None = None
    adapter: str | None = None
    """The ``module:function`` that produced the run, when the harness produced it."""
    failed: dict[str, str] = Field(default_factory=dict)
    """Questions the adapter raised for: id → error. They are reported, not scored."""

    @model_validator(mode="after")
    def _canaries_well_formed(self) -> RunMeta:
        canaries = self.embedding_canaries
        if not canaries:
            return self
        size = self.embedding_dimension or len(canaries[0])
        for index, vector in enumerate(canaries):
            if len(vector) != size:
                raise ValueError(
                    f"embedding_canaries[{index}] has {len(vector)} values and the embedding "
                    f"dimension is {size}: write each canary as the embedder's whole vector"
                )
            bad = next((i for i, v in enumerate(vector) if not math.isfinite(v)), None)
            if bad is not None:
                raise ValueError(
                    f"embedding_canaries[{index}][{bad}] is {vector[bad]}: a canary value must "
                    "be a finite number (the embedder returned a broken vector)"
                )
        return self

    def _sides(self, what: str) -> tuple[tuple[str, str | None], tuple[str, str | None]]:
        """(field, value) of the index side and of the query side of ``embedding_<what>``: a
        side's own field, else the shared one."""
        shared = f"embedding_{what}"
        sides = []
        for side in ("index", "query"):
            own = f"{side}_embedding_{what}"
            value = getattr(self, own)
            sides.append((own, value) if value is not None else (shared, getattr(self, shared)))
        return sides[0], sides[1]

    def embedding_mismatch(self) -> str | None:
        """Why the run cannot be measured when the index and the queries were embedded with two
        models (or two versions of one), or None. Vectors of two embedding models are not
        comparable, yet nothing fails: the article's accident, where recall quietly collapsed."""
        for what in ("model", "version"):
            (index_field, index), (query_field, query) = self._sides(what)
            # compared as users mean names: case, full-width letters, surrounding spaces
            if index is not None and query is not None and not same_name(index, query):
                return (
                    f"run_meta: the index was embedded with {what} '{shown_name(index)}' "
                    f"({index_field}) and the queries with '{shown_name(query)}' "
                    f"({query_field}): their vectors are not "
                    "comparable, so retrieval would be measured on a broken index; embed both "
                    f"with one {what} (or correct run_meta)"
                )
        return None

    def settings(self) -> RunSettings:
        """The settings compared between runs: the embedding model and version (of both sides,
        the same once ``embedding_mismatch`` is None), the chunking and the generator."""
        (_, index_model), (_, query_model) = self._sides("model")
        (_, index_version), (_, query_version) = self._sides("version")
        return RunSettings(
            embedding_model=query_model if query_model is not None else index_model,
            embedding_version=query_version if query_version is not None else index_version,
            chunking=self.chunking,
            generator_model=self.generator_model,
            embedding_dimension=self.embedding_dimension,
            embedding_canary=(
                canary_digest(self.embedding_canaries) if self.embedding_canaries else None
            ),
        )


class RetrievedChunk(StrictRecord):
    """One ranked retrieval result."""

    chunk_id: Id
    score: StrictFloat | None = None
    """A JSON number (``0.9``, or an integer such as ``1``); ``"0.9"`` or ``true`` is refused."""
    text: str | None = None
    """The text the generator saw; when absent it is taken from the corpus."""


class RunRecord(StrictRecord):
    """One question's retrieval results (best first) and the generated answer."""

    id: Id
    retrieved: tuple[RetrievedChunk, ...]
    answer: str

    @field_validator("answer")
    @classmethod
    def _answer_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class _Header(StrictRecord):
    run_meta: RunMeta


class Run(NamedTuple):
    """A validated run."""

    meta: RunMeta
    records: dict[str, RunRecord]


def validate_run(
    run: Run,
    golden: GoldenSet,
    where: Callable[[str], str] = lambda qid: qid,
    invalid_ids: frozenset[str] = frozenset(),
) -> None:
    """Check a run against the golden set; raise every problem at once.

    ``where(question_id)`` gives the location prefix for a record (``file:line`` for files);
    ``invalid_ids`` are records already reported as malformed (not reported again as missing).
    """
    problems = []
    golden_ids = {q.id for q in golden.questions}
    corpus = golden.corpus.keys()
    for qid, record in run.records.items():
        if qid not in golden_ids:
            problems.append(f"{where(qid)}: id: '{qid}' is not a golden question")
        ranked = [item.chunk_id for item in record.retrieved]
        distinct = set(ranked)
        if len(distinct) == len(ranked) and distinct <= corpus:
            continue  # nothing to say about its ranking (the common case, decided in C)
        seen: set[str] = set()
        for rank, item in enumerate(record.retrieved, start=1):
            if item.chunk_id in seen:
                problems.append(
                    f"{where(qid)}: retrieved: chunk '{item.chunk_id}' appears twice in the "
                    f"ranking for question '{qid}' (again at rank {rank})"
                )
            seen.add(item.chunk_id)
            if item.chunk_id not in golden.corpus:
                problems.append(
                    f"{where(qid)}: retrieved: chunk '{item.chunk_id}' (rank {rank}) "
                    "is not in the corpus"
                )
    accounted = run.records.keys() | run.meta.failed.keys() | invalid_ids
    missing = [q.id for q in golden.questions if q.id not in accounted]
    if missing:
        problems.append(
            f"the run has no record for {len(missing)} golden question(s): {', '.join(missing)}"
        )
    if problems:
        raise InputError(problems)


def load_run(path: Path, golden: GoldenSet, max_mb: float = DEFAULT_MAX_FILE_MB) -> Run:
    """Read a run file and validate it against the golden set."""
    lines = read_jsonl(path, max_mb)
    meta = RunMeta()
    header = lines[0].number
    if "run_meta" in lines[0].value:
        try:
            meta = _Header.model_validate(lines[0].value).run_meta
        except ValidationError as exc:
            raise InputError(
                [f"{path}:{lines[0].number}: {p}" for p in describe_validation_error(exc)]
            ) from None
        lines = lines[1:]
    problems: list[str] = []
    mismatch = meta.embedding_mismatch()
    if mismatch is not None:  # the run is refused before anything is scored
        problems.append(f"{path}:{header}: {mismatch}")
    parsed = parse_records(path, lines, RunRecord, problems)
    records: dict[str, RunRecord] = {}
    line_of: dict[str, int] = {}
    for number, record in parsed:
        if record.id in records:
            problems.append(
                f"{path}:{number}: duplicate id '{record.id}' (first on line {line_of[record.id]})"
            )
            continue
        records[record.id] = record
        line_of[record.id] = number
    run = Run(meta, records)
    # Every line that validated has its id among the records (kept, or a duplicate of one).
    malformed = (
        frozenset(str(line.value.get("id")) for line in lines) - records.keys()
        if len(parsed) < len(lines)
        else frozenset()
    )
    try:
        validate_run(run, golden, lambda qid: f"{path}:{line_of.get(qid, '?')}", malformed)
    except InputError as exc:
        problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return run


def run_lines(run: Run) -> list[BaseModel | dict[str, Any]]:
    """The lines of a run file: the header, then one record per question."""
    header: dict[str, Any] = {"run_meta": run.meta.model_dump(mode="json", exclude_none=True)}
    return [header, *run.records.values()]


def save_run(run: Run, path: Path) -> None:
    """Write a run file (header line first) atomically."""
    write_jsonl(path, run_lines(run))
