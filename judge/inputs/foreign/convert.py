"""Another tool's records (``read.read_foreign``) → the lines of a golden set, a corpus and a run
in the harness's formats (``golden/README.md``). This module decides what the harness needs that
the source leaves implicit, the same way on every import:

- **ids from content.** A chunk's id is derived from its normalised text (``chunk_id_of``), so
  a re-import writes the same files byte for byte and the same text retrieved for two questions
  is one chunk; a question's id from its text, or from the source's own id (``--id-column``). A
  ranking keeps the exact text the system saw when it differs from the corpus'
  (``retrieved[].text``), so the judge sees what the generator saw.
- **types** from a column (``--type-column``) or one default (``--type``);
- **out of scope** where the source says so: the type column names an out-of-scope type, the
  answerable column says false, or the reference answer is a refusal (``textnorm.refusal_match``:
  a refusal phrase where a refusal stands, not anywhere) or empty. The explicit columns decide
  over what is inferred (``_type_of``); where they disagree the import warns and goes on. An empty reference counts only in a file where some reference is not empty: a dataset
  without references says nothing about scope. Out-of-scope questions get the configuration's
  out-of-scope type (``out_of_scope`` by default) and ``relevant_chunks: []``.
- **relevant chunks** from the source's relevant texts (Ragas ``reference_contexts``, DeepEval
  ``context``); without them ``null``: judged, retrieval not scored.

Every problem of the file (the reader's and this stage's) is raised at once, located, before
anything is written; each line is refused here where the JSONL loader would refuse it. Writing
the files is the wiring's job (``judge.pipeline.imports``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from judge.config import DEFAULT_QUESTION_TYPES, Config
from judge.errors import InputError
from judge.hashing import text_sha256
from judge.inputs.foreign.records import ForeignRecord, Retrieved, Tool
from judge.io.jsonl import checked_line
from judge.io.text import id_problem
from judge.io.validation import in_line_order
from judge.textnorm import REFUSAL_MARKERS, normalise, refusal_match

#: Hex digits of the sha256 in a derived id: 48 bits, no collision in any corpus of a size a
#: golden set has (a million chunks collide with a probability of about 2 in a million).
ID_HEX = 12
DEFAULT_TYPE = "factual"
DEFAULT_OUT_OF_SCOPE = "out_of_scope"


def chunk_id_of(text: str) -> str:
    """The chunk id of a text: ``c-`` and the first ``ID_HEX`` hex digits of the sha256 of its
    normalised form (``textnorm.normalise``). Derived from content, so a re-import gives the
    same ids and one text retrieved for two questions (or with other spacing) is one chunk."""
    return "c-" + text_sha256(normalise(text))[:ID_HEX]


def question_id_of(text: str) -> str:
    """A question id from the question's text (``q-`` + hex), for sources that have no id of
    their own: stable over re-imports and over nights (a trace id is new every night)."""
    return "q-" + text_sha256(normalise(text))[:ID_HEX]


# --- types and scope --------------------------------------------------------------------------


class ImportSettings(NamedTuple):
    """What the configuration (or its defaults) says about types and refusals."""

    question_types: tuple[str, ...] | None
    """The allowed types; None: no configuration, any type is taken."""
    out_of_scope: str
    refusals: Sequence[str]
    default_type: str


def import_settings(config: Config | None, default_type: str | None) -> ImportSettings:
    """The settings of an import: the configuration's types, out-of-scope type and refusal
    phrases (None: the defaults), and the type of a question nothing else types (``--type``)."""
    if config is None:
        return ImportSettings(
            None, DEFAULT_OUT_OF_SCOPE, REFUSAL_MARKERS, default_type or DEFAULT_TYPE
        )
    data = config.data
    allowed = data.question_types
    answerable = [t for t in allowed if t not in data.out_of_scope_types]
    chosen = default_type or (DEFAULT_TYPE if DEFAULT_TYPE in allowed else answerable[0])
    if chosen not in allowed:
        raise InputError(
            [
                f"--type {chosen}: not one of the configured data.question_types "
                f"({', '.join(allowed)}); choose one, or add it to judge.toml"
            ]
        )
    refusals = config.judge.lexical.refusal_phrases or REFUSAL_MARKERS
    return ImportSettings(allowed, data.out_of_scope_types[0], refusals, chosen)


def _refusal_reference(
    record: ForeignRecord, settings: ImportSettings, references_given: bool
) -> str | None:
    """Why the record's reference answer says "out of scope", or None: it is empty (in a file
    where some reference is not), or it reads as a refusal, with the phrase and where it
    matched (``textnorm.refusal_match``: "No. The Day Pass does not cover …" does not)."""
    reference = record.reference
    if reference is None:
        return None
    if references_given and not reference.strip():
        return "the reference answer is empty"
    match = refusal_match(reference, settings.refusals)
    return None if match is None else f"the reference answer reads as a refusal ({match.where()})"


def _type_of(
    record: ForeignRecord,
    settings: ImportSettings,
    references_given: bool,
    problems: list[str],
    warnings: list[str],
) -> str | None:
    """The record's question type, out of scope where the source says so (module docstring).

    The explicit columns decide over what is inferred: a type or answerable column over a
    refusal reference, relevant chunks (reference contexts) over a refusal reference; of two
    explicit columns that disagree, the one that says out of scope. Where they disagree the
    record is imported as the deciding one says, with a warning that names both (and the
    refusal phrase and where it matched)."""
    oos, where = settings.out_of_scope, record.where
    named = record.qtype.strip() if record.qtype is not None else None
    allowed = settings.question_types
    if named is not None and allowed is not None and named not in allowed:
        problems.append(
            f"{where}: type column: '{named}' is not one of the configured "
            f"data.question_types ({', '.join(allowed)}); add it to judge.toml or rename it "
            "in the file"
        )
        return None
    refusal = _refusal_reference(record, settings, references_given)
    if named is not None:
        named_oos = named == oos or (allowed is None and named == DEFAULT_OUT_OF_SCOPE)
        if record.answerable is not None and record.answerable == named_oos:
            said = "true" if record.answerable else "false"
            decides = "type" if named_oos else "answerable"
            warnings.append(
                f"{where}: the answerable column says {said}, but the type column says "
                f"'{named}'; imported as out of scope ('{oos}'), as the {decides} column says"
            )
            return oos
        if refusal is not None and not named_oos:
            warnings.append(
                f"{where}: {refusal}, but the type column says '{named}'; imported as '{named}'"
            )
        return oos if named_oos else named
    if record.answerable is not None:
        if refusal is not None and record.answerable:
            warnings.append(
                f"{where}: {refusal}, but the answerable column says true; imported as "
                f"'{settings.default_type}'"
            )
        return settings.default_type if record.answerable else oos
    if refusal is not None and record.relevant:
        warnings.append(
            f"{where}: {refusal}, but relevant chunks are given (reference contexts); imported "
            f"as '{settings.default_type}' with them (a type or answerable column decides)"
        )
        return settings.default_type
    return oos if refusal is not None else settings.default_type


def ordered_types(questions: list[dict[str, Any]], settings: ImportSettings) -> tuple[str, ...]:
    """The types for ``data.question_types``: the configuration's, or (without one) those the
    import gave, the default types' order first, with the out-of-scope type always there."""
    if settings.question_types is not None:
        return settings.question_types
    present = dict.fromkeys(q["type"] for q in questions)
    present[settings.out_of_scope] = None
    known = [t for t in DEFAULT_QUESTION_TYPES if t in present]
    return (*known, *(t for t in present if t not in known))


# --- the records → the three files' records ---------------------------------------------------


class Converted(NamedTuple):
    """The three files' records, and what was learnt on the way."""

    questions: list[dict[str, Any]]
    corpus: dict[str, dict[str, Any]]
    run: list[dict[str, Any]]
    failed: dict[str, str]
    """Question id → why the source records it as failed (``run_meta.failed``)."""
    wheres: dict[str, str]
    """Question id → where its record came from (for a line too long to write)."""


class _Corpus:
    """The corpus an import builds: one chunk per normalised text, the first text and document
    id it was seen with kept; ``repeats`` counts texts a ranking listed twice."""

    def __init__(self) -> None:
        self.chunks: dict[str, dict[str, Any]] = {}
        self.repeats = 0

    def chunk(self, text: str, doc: str | None) -> str:
        """The id of ``text``'s chunk, added to the corpus on first sight."""
        chunk_id = chunk_id_of(text)
        if chunk_id not in self.chunks:
            self.chunks[chunk_id] = {"chunk_id": chunk_id, "doc": doc or chunk_id, "text": text}
        return chunk_id

    def ranking(self, retrieved: Sequence[Retrieved]) -> list[dict[str, Any]]:
        """A run record's ranking: one entry per chunk at its first (best) rank, with the text
        the system saw when the corpus holds it spaced otherwise."""
        ranking: list[dict[str, Any]] = []
        seen: set[str] = set()
        for item in retrieved:
            chunk_id = self.chunk(item.text, item.doc)
            if chunk_id in seen:
                self.repeats += 1
                continue
            seen.add(chunk_id)
            entry: dict[str, Any] = {"chunk_id": chunk_id}
            if item.score is not None:
                entry["score"] = item.score
            if self.chunks[chunk_id]["text"] != item.text:
                entry["text"] = item.text  # what the generator saw, if spaced otherwise
            ranking.append(entry)
        return ranking


def _question_id(record: ForeignRecord, first: dict[str, str], problems: list[str]) -> str | None:
    """The record's question id (its id column's, else from its text), or None with a problem:
    an id the harness cannot take, or one an earlier record (``first``) already has."""
    qid = record.source_id.strip() if record.source_id is not None else None
    if qid is not None and (problem := id_problem(qid)) is not None:
        problems.append(f"{record.where}: id column: '{qid}' {problem}")
        return None
    if qid is None:
        qid = question_id_of(record.question)
    if qid in first:
        what = "id" if record.source_id is not None else "question (the same text)"
        problems.append(
            f"{record.where}: the same {what} as {first[qid]}; a golden set asks each "
            "question once: drop one, or name an id column (--id-column)"
        )
        return None
    first[qid] = record.where
    return qid


def _relevant(
    record: ForeignRecord, answerable: bool, corpus: _Corpus, problems: list[str]
) -> tuple[bool, list[str] | None]:
    """Whether the record's relevant texts can be taken, and its ``relevant_chunks``: ``[]``
    out of scope (where relevant texts are a problem), their chunk ids, or None (not given)."""
    if not answerable:
        if record.relevant:
            problems.append(
                f"{record.where}: relevant chunks given (reference contexts), but the "
                "question is out of scope (its type or answerable column says so); remove "
                "them, or correct the type"
            )
            return False, None
        return True, []
    if record.relevant:
        return True, list(dict.fromkeys(corpus.chunk(text, None) for text in record.relevant))
    return True, None


def _question(
    record: ForeignRecord, qid: str, qtype: str, answerable: bool, relevant: list[str] | None
) -> dict[str, Any]:
    """The golden set's line of one question (a reference answer only when there is one)."""
    question: dict[str, Any] = {
        "id": qid,
        "type": qtype,
        "question": record.question,
        "relevant_chunks": relevant,
        "answerable": answerable,
    }
    if record.reference is not None and record.reference.strip():
        question["reference_answer"] = record.reference
    return question


def convert(
    records: list[ForeignRecord],
    settings: ImportSettings,
    problems: list[str],
    warnings: list[str],
    source: Path,
) -> Converted:
    """The three files' records; every problem of every record (the reader's ``problems``
    and this stage's) raised together, in line order. Warnings are added to ``warnings``."""
    references_given = any(r.reference is not None and r.reference.strip() for r in records)
    corpus = _Corpus()
    questions: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    failed: dict[str, str] = {}
    first: dict[str, str] = {}
    for record in records:
        qid = _question_id(record, first, problems)
        qtype = (
            None
            if qid is None
            else _type_of(record, settings, references_given, problems, warnings)
        )
        if qid is None or qtype is None:
            continue
        answerable = qtype != settings.out_of_scope
        taken, relevant = _relevant(record, answerable, corpus, problems)
        if not taken:
            continue
        ranking = corpus.ranking(record.retrieved)
        questions.append(_question(record, qid, qtype, answerable, relevant))
        if record.answer is None:
            failed[qid] = record.failure or "the source records no answer"
        else:
            run.append({"id": qid, "retrieved": ranking, "answer": record.answer})
    if problems:
        raise InputError(in_line_order(source, problems))
    warnings.extend(_warnings(questions, run, corpus.repeats, source))
    return Converted(questions, corpus.chunks, run, failed, first)


def _warnings(
    questions: list[dict[str, Any]], run: list[dict[str, Any]], repeats: int, source: Path
) -> list[str]:
    """What the user should know about a converted file: texts a ranking listed twice, and
    relevant chunks that no ranking retrieved (their ids were cut from other texts)."""
    warnings = []
    if repeats:
        warnings.append(
            f"{source}: {repeats} time(s) a ranking listed one text twice (the same after "
            "normalising); kept its first, best rank"
        )
    labelled = {c for q in questions for c in q["relevant_chunks"] or ()}
    retrieved = {entry["chunk_id"] for record in run for entry in record["retrieved"]}
    if labelled and not labelled & retrieved:
        warnings.append(
            f"{source}: none of the relevant chunks (reference contexts) is among the "
            "retrieved texts, so every recall will be 0: were they cut from other chunks "
            "than the index's? Chunk ids come from the text (docs/imports.md)"
        )
    return warnings


# --- the files' text and the [data] lines ------------------------------------------------------


def file_texts(converted: Converted, tool: Tool, source: Path) -> dict[str, str]:
    """The three files' text (keys ``questions``, ``corpus``, ``run``), each line refused where
    the JSONL loader would refuse it."""
    meta: dict[str, Any] = {
        "system": f"{tool} import",
        "notes": f"imported by 'judge import {tool}' from {source.name}",
    }
    if converted.failed:
        meta["failed"] = converted.failed
    corpus = "".join(
        checked_line(chunk, f"{source}: chunk {chunk_id}")
        for chunk_id, chunk in converted.corpus.items()
    )
    wheres = converted.wheres
    questions = "".join(checked_line(q, wheres[q["id"]]) for q in converted.questions)
    run = checked_line({"run_meta": meta}, f"{source}: run_meta") + "".join(
        checked_line(r, wheres[r["id"]]) for r in converted.run
    )
    return {"questions": questions, "corpus": corpus, "run": run}


def _toml(value: str | Sequence[str]) -> str:
    """A TOML string or array of strings (TOML's basic strings take JSON's escapes)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"


def data_lines(
    paths: dict[str, Path], types: Sequence[str], out_of_scope: str, relative_to: Path
) -> list[str]:
    """The ``[data]`` table for judge.toml, paths relative to the folder it will be in."""
    lines = ["[data]"]
    for key, path in paths.items():
        shown = os.path.relpath(path.absolute(), relative_to.absolute())
        lines.append(f"{key} = {_toml(Path(shown).as_posix())}")
    lines.append(f"question_types = {_toml(types)}")
    lines.append(f"out_of_scope_types = {_toml([out_of_scope])}")
    return lines
