"""The golden set: questions and corpus chunks, strictly validated (labels: ``judge.inputs.labels``).

Formats are described field by field in ``golden/README.md``. Loaders collect every problem in
a file (``file:line: field: what is wrong``) and raise them together in one ``InputError``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import Field, field_validator

from judge.config import DataConfig
from judge.errors import InputError
from judge.hashing import tagged_hash
from judge.io.jsonl import read_jsonl
from judge.io.text import DEFAULT_MAX_FILE_MB, Id, StrictBool, StrictRecord
from judge.io.validation import in_line_order, parse_records
from judge.textnorm import normalise, same_name

Split = Literal["tune", "holdout"]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class GoldenQuestion(StrictRecord):
    """One golden question."""

    id: Id
    """No whitespace, control or invisible characters (it is a field of the TREC files)."""
    type: str
    """One of the configured question types (default: factual, procedural, negative, out_of_scope)."""
    question: str
    relevant_chunks: tuple[Id, ...] | None
    """Chunk ids that answer the question; empty exactly for unanswerable questions; null when
    nobody has labelled them (the answer is judged, retrieval is not scored)."""
    answerable: StrictBool
    """False exactly for out-of-scope questions."""
    split: Split | None = None
    """tune (used while iterating) or holdout (run rarely, so nobody tunes to it)."""
    tags: tuple[str, ...] = ()
    reference_answer: str | None = None

    _question = field_validator("question", "id")(_not_blank)


class Chunk(StrictRecord):
    """One corpus chunk. ``chunk_id`` is a stable slug (document + heading), never positional."""

    chunk_id: Id
    """No whitespace, control or invisible characters (it is a field of the TREC files)."""
    doc: str = Field(min_length=1)
    heading: str | None = None
    text: str

    _text = field_validator("text", "chunk_id")(_not_blank)


class GoldenSet(NamedTuple):
    """Validated questions and corpus, with content hashes for comparing runs."""

    questions: tuple[GoldenQuestion, ...]
    corpus: dict[str, Chunk]
    questions_hash: str
    """Hash of the questions' content (not of the file's bytes): formatting does not change it."""
    corpus_hash: str

    def by_id(self) -> dict[str, GoldenQuestion]:
        return {q.id: q for q in self.questions}


def _duplicates(path: Path, keyed: Sequence[tuple[int, str]], what: str) -> list[str]:
    seen: dict[str, int] = {}
    problems = []
    for line, key in keyed:
        if key in seen:
            problems.append(f"{path}:{line}: duplicate {what} '{key}' (first on line {seen[key]})")
        else:
            seen[key] = line
    return problems


def load_corpus(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> dict[str, Chunk]:
    """Load and validate corpus chunks, keyed by chunk id (file order kept)."""
    problems: list[str] = []
    records = parse_records(path, read_jsonl(path, max_mb), Chunk, problems)
    problems += _duplicates(path, [(n, c.chunk_id) for n, c in records], "chunk_id")
    if problems:
        raise InputError(problems)
    return {chunk.chunk_id: chunk for _, chunk in records}


def load_questions(
    path: Path, corpus: dict[str, Chunk], data: DataConfig
) -> tuple[GoldenQuestion, ...]:
    """Load golden questions and check them against the allowed types and the corpus."""
    problems: list[str] = []
    records = parse_records(path, read_jsonl(path, data.max_file_mb), GoldenQuestion, problems)
    problems += _duplicates(path, [(n, q.id) for n, q in records], "question id")
    allowed = ", ".join(data.question_types)
    records = [(line, _typed_as_configured(q, data.question_types)) for line, q in records]
    for line, q in records:
        where = f"{path}:{line}"
        if q.type not in data.question_types:
            problems.append(f"{where}: type: '{q.type}' is not one of {allowed}")
            continue
        unanswerable = q.type in data.out_of_scope_types
        if unanswerable and q.answerable:
            problems.append(f"{where}: answerable: must be false for type '{q.type}'")
        if not unanswerable and not q.answerable:
            problems.append(
                f"{where}: answerable: false is only for out-of-scope types "
                f"({', '.join(data.out_of_scope_types)}); '{q.type}' questions must be answerable"
            )
        if q.relevant_chunks is None:
            if not q.answerable:
                problems.append(
                    f"{where}: relevant_chunks: must be [] for an unanswerable question"
                )
            continue
        if q.answerable and not q.relevant_chunks:
            problems.append(
                f"{where}: relevant_chunks: an answerable question needs at least one "
                "(or null when they are not known: then retrieval is not scored)"
            )
        if not q.answerable and q.relevant_chunks:
            problems.append(f"{where}: relevant_chunks: must be empty for an unanswerable question")
        if len(set(q.relevant_chunks)) != len(q.relevant_chunks):
            problems.append(f"{where}: relevant_chunks: lists a chunk id twice")
        unknown = [c for c in q.relevant_chunks if c not in corpus]
        if unknown:
            problems.append(
                f"{where}: relevant_chunks: not in the corpus: {', '.join(unknown)} "
                "(a chunk id changed? ids must stay stable across re-chunking)"
            )
    if problems:
        raise InputError(in_line_order(path, problems))
    return tuple(q for _, q in records)


def _typed_as_configured(question: GoldenQuestion, types: Sequence[str]) -> GoldenQuestion:
    """``question`` with its type spelled as ``data.question_types`` spells it, when the two
    are one name as users mean it (``same_name``: "Factual " or "ｆａｃｔｕａｌ" for "factual");
    as it is otherwise (an unknown type is refused by the caller)."""
    if question.type in types:
        return question
    named = next((t for t in types if same_name(t, question.type)), None)
    return question if named is None else question.model_copy(update={"type": named})


def load_golden(data: DataConfig) -> GoldenSet:
    """Load the corpus, then the questions validated against it."""
    corpus = load_corpus(data.corpus, data.max_file_mb)
    questions = load_questions(data.questions, corpus, data)
    return GoldenSet(
        questions=questions,
        corpus=corpus,
        questions_hash=tagged_hash([q.model_dump(mode="json") for q in questions], 16),
        corpus_hash=tagged_hash([c.model_dump(mode="json") for c in corpus.values()], 16),
    )


#: Questions shorter than this (normalised) are too generic to signal a leak.
LEAK_MIN_CHARS = 12


class Leak(NamedTuple):
    """A corpus document that quotes several golden questions verbatim."""

    doc: str
    question_ids: tuple[str, ...]


def find_leaks(golden: GoldenSet, min_questions: int = 2) -> list[Leak]:
    """Documents quoting ``min_questions`` or more golden questions verbatim.

    A test set leaking into the corpus (an FAQ page that copies the questions) makes retrieval
    look better than it is and pushes the real answer down. Matching is on normalised text
    (``textnorm.normalise``: NFKC, case-folded, whitespace and quote marks removed); it indexes
    each question by its first ``LEAK_MIN_CHARS`` characters, so one pass over the corpus finds
    every quote.
    """
    by_prefix: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for q in golden.questions:
        text = normalise(q.question)
        if len(text) >= LEAK_MIN_CHARS:
            by_prefix[text[:LEAK_MIN_CHARS]].append((q.id, text))
    docs: dict[str, list[str]] = defaultdict(list)
    for chunk in golden.corpus.values():
        docs[chunk.doc].append(normalise(chunk.text))
    leaks = []
    for doc, texts in docs.items():
        found: set[str] = set()
        for text in texts:
            for start in range(len(text) - LEAK_MIN_CHARS + 1):
                for qid, question in by_prefix.get(text[start : start + LEAK_MIN_CHARS], ()):
                    if text.startswith(question, start):
                        found.add(qid)
        if len(found) >= min_questions:
            leaks.append(Leak(doc, tuple(sorted(found))))
    return leaks
