"""The candidates file of ``judge golden propose``: questions proposed for the golden set, each
with what verification found and what a person decided (docs/golden.md).

One JSON object a line (``Candidate``), in rank order, rejected ones included with their
reasons so that the counts per check can be read back from the file alone. ``judge golden
review`` writes the ``decision`` of each candidate a person looked at; ``judge golden accept``
adds the accepted ones to the questions file. The file is never the golden set: nothing is
measured against it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from judge.errors import InputError
from judge.inputs.golden import Chunk, Split
from judge.inputs.runs import RunRecord
from judge.io.jsonl import read_jsonl, write_jsonl
from judge.io.text import DEFAULT_MAX_FILE_MB, Id, StrictBool, StrictFloat, StrictRecord
from judge.io.validation import parse_records

ReviewDecision = Literal["accept", "reject"]
Source = Literal["questions", "corpus"]


class Candidate(StrictRecord):
    """One proposed question, verified (``rejected`` empty) or not (its reasons)."""

    candidate_id: Id
    """Stable: a hash of the source, its id there and the question (``judge.results.propose``)."""
    type: str
    question: str
    relevant_chunks: tuple[Id, ...] | None = None
    """The chunks proposed as answering it; ``[]`` for out of scope, null when none was found."""
    answerable: StrictBool
    answer_span: str = ""
    """Drafted: the span of the cited chunk holding the answer (the limit, for a negative one)."""
    source: Source
    source_id: str = ""
    """The user question's id (``--from-questions``), or the chunk it was drafted from."""
    score: StrictFloat = 0.0
    """How much it adds (rank order, highest first): ``judge.results.candidates.ADDS``."""
    adds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    """``check: detail`` per failed check; empty when it passed every one."""
    decision: ReviewDecision | None = None
    """What a person decided (``judge golden review`` or by hand); null while undecided."""


def is_candidates_file(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> bool:
    """Whether ``path`` is a candidates file (a JSONL whose first line has ``candidate_id``),
    not a ``missing-labels`` file: what ``judge golden accept`` is given."""
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    lines = read_jsonl(path, max_mb)
    return bool(lines) and isinstance(lines[0].value, dict) and "candidate_id" in lines[0].value


def load_candidates(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> list[Candidate]:
    """Read and validate a candidates file; every problem at once as ``FILE:LINE: ...``."""
    problems: list[str] = []
    records = parse_records(path, read_jsonl(path, max_mb), Candidate, problems)
    seen: dict[str, int] = {}
    for line, candidate in records:
        first = seen.setdefault(candidate.candidate_id, line)
        if first != line:
            problems.append(
                f"{path}:{line}: duplicate candidate_id '{candidate.candidate_id}' (first on "
                f"line {first}); keep one of the two"
            )
    if problems:
        raise InputError(problems)
    return [candidate for _, candidate in records]


def save_candidates(path: Path, candidates: Sequence[Candidate]) -> None:
    """Write the candidates file whole and atomically (``judge.io.jsonl.write_jsonl``)."""
    write_jsonl(path, candidates)


def check_name(reason: str) -> str:
    """The check of a rejection reason (``span_absent: ...`` → ``span_absent``)."""
    return reason.split(":", 1)[0]


def rejection_counts(candidates: Sequence[Candidate]) -> Counter[str]:
    """How many candidates each check rejected (a candidate counts once per check it failed)."""
    return Counter(
        name for c in candidates for name in dict.fromkeys(check_name(r) for r in c.rejected)
    )


# --- the real questions to propose from -------------------------------------------------------


class UserQuestion(NamedTuple):
    """One real question to propose from."""

    id: str
    question: str
    type: str | None
    """The type the file gives; None: guessed (``judge.results.propose.guess_type``)."""


class _LoggedQuestion(StrictRecord):
    """A line of a question log: a question, and whatever a golden question may also hold
    (``judge import otel``'s questions.jsonl is a log as it is)."""

    question: str
    id: Id | None = None
    type: str | None = None
    relevant_chunks: tuple[Id, ...] | None = None
    answerable: StrictBool | None = None
    split: Split | None = None
    tags: tuple[str, ...] = ()
    reference_answer: str | None = None


def read_question_log(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> list[UserQuestion]:
    """The questions of a JSONL log (``{"question": ...}`` a line, ``id`` and ``type``
    optional: a line without an id is ``u<line>``), every problem at once."""
    problems: list[str] = []
    records = parse_records(path, read_jsonl(path, max_mb), _LoggedQuestion, problems)
    out: list[UserQuestion] = []
    seen: dict[str, int] = {}
    for line, record in records:
        if not record.question.strip():
            problems.append(f"{path}:{line}: question: must not be empty")
            continue
        qid = record.id or f"u{line}"
        first = seen.setdefault(qid, line)
        if first != line:
            problems.append(f"{path}:{line}: duplicate id '{qid}' (first on line {first})")
        out.append(UserQuestion(qid, record.question, record.type))
    if problems:
        raise InputError(problems)
    return out


def read_run_records(
    path: Path, ids: set[str], corpus: dict[str, Chunk], max_mb: float = DEFAULT_MAX_FILE_MB
) -> dict[str, RunRecord]:
    """The records of a run file for the questions ``ids`` (a run of more questions is fine:
    the others are not read), each of its chunks checked against the corpus."""
    problems: list[str] = []
    lines = [line for line in read_jsonl(path, max_mb) if "run_meta" not in line.value]
    records = parse_records(path, lines, RunRecord, problems)
    out: dict[str, RunRecord] = {}
    for line, record in records:
        if record.id not in ids:
            continue
        unknown = [r.chunk_id for r in record.retrieved if r.chunk_id not in corpus]
        if unknown:
            problems.append(
                f"{path}:{line}: retrieved: not in the corpus: {', '.join(unknown)}; is this "
                "the run of this corpus?"
            )
        out[record.id] = record
    if problems:
        raise InputError(problems)
    return out
