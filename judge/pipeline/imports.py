"""``judge import ragas|deepeval|otel FILE``: another tool's dataset or traces → a golden set,
a corpus and a run in the harness's formats (``golden/README.md``), and the ``[data]`` lines
that point ``judge.toml`` at them.

The reader (``judge.inputs.foreign``) gives one neutral record per question; this module
decides what the harness needs that the source leaves implicit, the same way on every import:

- **ids from content.** A chunk's id is derived from its normalised text
  (``foreign.chunk_id_of``), so a re-import writes the same files byte for byte and the same
  text retrieved for two questions is one chunk; a question's id from its text, or from the
  source's own id (``--id-column``). A ranking keeps the exact text the system saw when it
  differs from the corpus' (``retrieved[].text``), so the judge sees what the generator saw.
- **types** from a column (``--type-column``) or one default (``--type``);
- **out of scope** where the source says so: the answerable column says false, the type column
  names an out-of-scope type, or the reference answer is a refusal (``textnorm.is_refusal``) or
  empty. An empty reference counts only in a file where some reference is not empty: a dataset
  without references says nothing about scope. Out-of-scope questions get the configuration's
  out-of-scope type (``out_of_scope`` by default) and ``relevant_chunks: []``.
- **relevant chunks** from the source's relevant texts (Ragas ``reference_contexts``, DeepEval
  ``context``); without them ``null``: judged, retrieval not scored.

Every problem of the file is raised at once, located, before anything is written. The three
files are then written to a staging folder beside their place, loaded back by the loaders
``judge check`` uses (so what is written is what the harness accepts) and renamed into place;
existing files are refused unless ``replace``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from judge.config import DEFAULT_QUESTION_TYPES, Config, DataConfig
from judge.errors import InputError
from judge.inputs.foreign import (
    Columns,
    ForeignRecord,
    Tool,
    chunk_id_of,
    question_id_of,
    read_foreign,
)
from judge.inputs.golden import GoldenSet, load_corpus, load_questions
from judge.inputs.runs import load_run
from judge.io.jsonl import checked_line
from judge.io.text import DEFAULT_MAX_FILE_MB, id_problem
from judge.io.validation import in_line_order
from judge.textnorm import REFUSAL_MARKERS, is_refusal

#: The files an import writes into its folder, in the order ``[data]`` names them.
FILE_NAMES = {"questions": "questions.jsonl", "corpus": "corpus.jsonl", "run": "run.jsonl"}
DEFAULT_TYPE = "factual"
DEFAULT_OUT_OF_SCOPE = "out_of_scope"


class ImportedFiles(NamedTuple):
    """What an import wrote, and what to tell the user."""

    questions: Path
    corpus: Path
    run: Path
    per_type: dict[str, int]
    """Questions per type, in the order of ``question_types``."""
    chunks: int
    failed: int
    """Questions the source records as failed (in ``run_meta.failed``: reported, not scored)."""
    unlabelled: int
    """Answerable questions whose relevant chunks the source does not give (judged only)."""
    question_types: tuple[str, ...]
    out_of_scope_type: str
    data_lines: list[str]
    """The ``[data]`` table to paste into judge.toml."""
    warnings: list[str]


class _Settings(NamedTuple):
    """What the configuration (or its defaults) says about types and refusals."""

    question_types: tuple[str, ...] | None
    """The allowed types; None: no configuration, any type is taken."""
    out_of_scope: str
    refusals: Sequence[str]
    default_type: str


def _settings(config: Config | None, default_type: str | None) -> _Settings:
    if config is None:
        return _Settings(None, DEFAULT_OUT_OF_SCOPE, REFUSAL_MARKERS, default_type or DEFAULT_TYPE)
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
    return _Settings(allowed, data.out_of_scope_types[0], refusals, chosen)


def _type_of(
    record: ForeignRecord, settings: _Settings, references_given: bool, problems: list[str]
) -> str | None:
    """The record's question type, out of scope where the source says so (module docstring)."""
    oos = settings.out_of_scope
    named = record.qtype.strip() if record.qtype is not None else None
    allowed = settings.question_types
    if named is not None and allowed is not None and named not in allowed:
        problems.append(
            f"{record.where}: type column: '{named}' is not one of the configured "
            f"data.question_types ({', '.join(allowed)}); add it to judge.toml or rename it "
            "in the file"
        )
        return None
    named_oos = named is not None and (
        named == oos or (settings.question_types is None and named == DEFAULT_OUT_OF_SCOPE)
    )
    if record.answerable is True and named_oos:
        problems.append(
            f"{record.where}: answerable column says true, but the type column says "
            f"'{named}' (out of scope); correct one of them"
        )
        return None
    if record.answerable is False or named_oos:
        return oos
    if named is not None:
        return named
    reference = record.reference
    if reference is not None and (
        (references_given and not reference.strip()) or is_refusal(reference, settings.refusals)
    ):
        return oos
    return settings.default_type


class _Built(NamedTuple):
    questions: list[dict[str, Any]]
    corpus: dict[str, dict[str, Any]]
    run: list[dict[str, Any]]
    failed: dict[str, str]
    wheres: dict[str, str]
    """Question id → where its record came from (for a line too long to write)."""


def _build(
    records: list[ForeignRecord],
    settings: _Settings,
    problems: list[str],
    warnings: list[str],
    source: Path,
) -> _Built:
    """The three files' records; every problem of every record (the reader's ``problems``
    and this stage's) raised together, in line order."""
    references_given = any(r.reference is not None and r.reference.strip() for r in records)
    corpus: dict[str, dict[str, Any]] = {}

    def chunk(text: str, doc: str | None) -> str:
        chunk_id = chunk_id_of(text)
        if chunk_id not in corpus:
            corpus[chunk_id] = {"chunk_id": chunk_id, "doc": doc or chunk_id, "text": text}
        return chunk_id

    questions: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    failed: dict[str, str] = {}
    first: dict[str, str] = {}
    repeats = 0
    for record in records:
        qid = record.source_id.strip() if record.source_id is not None else None
        if qid is not None and (problem := id_problem(qid)) is not None:
            problems.append(f"{record.where}: id column: '{qid}' {problem}")
            continue
        if qid is None:
            qid = question_id_of(record.question)
        if qid in first:
            what = "id" if record.source_id is not None else "question (the same text)"
            problems.append(
                f"{record.where}: the same {what} as {first[qid]}; a golden set asks each "
                "question once: drop one, or name an id column (--id-column)"
            )
            continue
        first[qid] = record.where
        qtype = _type_of(record, settings, references_given, problems)
        if qtype is None:
            continue
        answerable = qtype != settings.out_of_scope
        relevant: list[str] | None = None
        if not answerable:
            if record.relevant:
                problems.append(
                    f"{record.where}: relevant chunks given (reference contexts), but the "
                    "question is out of scope (its type, answerable column or refusal "
                    "reference says so); remove them, or correct the type"
                )
                continue
            relevant = []
        elif record.relevant:
            relevant = list(dict.fromkeys(chunk(text, None) for text in record.relevant))
        ranking: list[dict[str, Any]] = []
        seen: set[str] = set()
        for item in record.retrieved:
            chunk_id = chunk(item.text, item.doc)
            if chunk_id in seen:
                repeats += 1
                continue
            seen.add(chunk_id)
            entry: dict[str, Any] = {"chunk_id": chunk_id}
            if item.score is not None:
                entry["score"] = item.score
            if corpus[chunk_id]["text"] != item.text:
                entry["text"] = item.text  # what the generator saw, if spaced otherwise
            ranking.append(entry)
        question: dict[str, Any] = {
            "id": qid,
            "type": qtype,
            "question": record.question,
            "relevant_chunks": relevant,
            "answerable": answerable,
        }
        if record.reference is not None and record.reference.strip():
            question["reference_answer"] = record.reference
        questions.append(question)
        if record.answer is None:
            failed[qid] = record.failure or "the source records no answer"
        else:
            run.append({"id": qid, "retrieved": ranking, "answer": record.answer})
    if problems:
        raise InputError(in_line_order(source, problems))
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
    return _Built(questions, corpus, run, failed, first)


def _ordered_types(questions: list[dict[str, Any]], settings: _Settings) -> tuple[str, ...]:
    """The types for ``data.question_types``: the configuration's, or (without one) those the
    import gave, the default types' order first, with the out-of-scope type always there."""
    if settings.question_types is not None:
        return settings.question_types
    present = dict.fromkeys(q["type"] for q in questions)
    present[settings.out_of_scope] = None
    known = [t for t in DEFAULT_QUESTION_TYPES if t in present]
    return (*known, *(t for t in present if t not in known))


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


def _texts(built: _Built, tool: Tool, source: Path) -> dict[str, str]:
    """The three files' text, each line refused where the JSONL loader would refuse it."""
    meta: dict[str, Any] = {
        "system": f"{tool} import",
        "notes": f"imported by 'judge import {tool}' from {source.name}",
    }
    if built.failed:
        meta["failed"] = built.failed
    corpus = "".join(
        checked_line(chunk, f"{source}: chunk {chunk_id}")
        for chunk_id, chunk in built.corpus.items()
    )
    questions = "".join(checked_line(q, built.wheres[q["id"]]) for q in built.questions)
    run = checked_line({"run_meta": meta}, f"{source}: run_meta") + "".join(
        checked_line(r, built.wheres[r["id"]]) for r in built.run
    )
    return {"questions": questions, "corpus": corpus, "run": run}


def _write(
    texts: dict[str, str], targets: dict[str, Path], types: tuple[str, ...], oos: str
) -> None:
    """Stage the files beside their place, load them back as ``judge check`` does, then
    rename each into place: what is written is what the harness reads."""
    folder = targets["questions"].parent
    staging = folder / f".import-{os.getpid()}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        staged = {key: staging / target.name for key, target in targets.items()}
        for key, path in staged.items():
            with path.open("w", encoding="utf-8") as handle:
                handle.write(texts[key])
                handle.flush()
                os.fsync(handle.fileno())
        data = DataConfig(
            questions=staged["questions"],
            corpus=staged["corpus"],
            run=staged["run"],
            question_types=types,
            out_of_scope_types=(oos,),
        )
        corpus = load_corpus(data.corpus)
        questions = load_questions(data.questions, corpus, data)
        golden = GoldenSet(questions, corpus, "", "")
        assert data.run is not None
        load_run(data.run, golden)
        for key, path in staged.items():
            os.replace(path, targets[key])
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def import_foreign(
    tool: Tool,
    source: Path,
    out_dir: Path,
    *,
    config: Config | None = None,
    default_type: str | None = None,
    type_column: str | None = None,
    id_column: str | None = None,
    answerable_column: str | None = None,
    replace: bool = False,
    relative_to: Path | None = None,
    max_file_mb: float | None = None,
) -> ImportedFiles:
    """Read ``source`` as ``tool`` writes it and write ``questions.jsonl``, ``corpus.jsonl`` and
    ``run.jsonl`` into ``out_dir``.

    ``config``: its question types, out-of-scope type and refusal phrases are used (None: the
    defaults, and any type a type column names). ``default_type``: the type of a question no
    column types and the source does not mark out of scope (``factual``). ``type_column``,
    ``id_column``, ``answerable_column``: columns of a table (attributes of a trace's root span)
    that hold each question's type, its id, and whether it is answerable. ``relative_to``: the
    folder of the judge.toml the ``[data]`` lines are for (default: the configuration's, else
    the current directory). Raises ``InputError`` with every problem, before writing anything.
    """
    settings = _settings(config, default_type)
    targets = {key: out_dir / name for key, name in FILE_NAMES.items()}
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError([f"{out_dir}: not a folder; give --out a folder to write the files to"])
    existing = [path for path in targets.values() if path.exists() or path.is_symlink()]
    if existing and not replace:
        raise InputError(
            [
                f"{path}: exists; give --replace to overwrite it, or another --out"
                for path in existing
            ]
        )
    limit = max_file_mb or (config.data.max_file_mb if config else DEFAULT_MAX_FILE_MB)
    columns = Columns(type_column, id_column, answerable_column)
    read = read_foreign(tool, source, columns, limit)
    warnings = list(read.warnings)
    built = _build(read.records, settings, list(read.problems), warnings, source)
    types = _ordered_types(built.questions, settings)
    texts = _texts(built, tool, source)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(texts, targets, types, settings.out_of_scope)
    if relative_to is None:
        relative_to = config.source.parent if config and config.source else Path.cwd()
    per_type = {t: sum(q["type"] == t for q in built.questions) for t in types}
    unlabelled = sum(q["answerable"] and q["relevant_chunks"] is None for q in built.questions)
    return ImportedFiles(
        questions=targets["questions"],
        corpus=targets["corpus"],
        run=targets["run"],
        per_type=per_type,
        chunks=len(built.corpus),
        failed=len(built.failed),
        unlabelled=unlabelled,
        question_types=types,
        out_of_scope_type=settings.out_of_scope,
        data_lines=data_lines(targets, types, settings.out_of_scope, relative_to),
        warnings=warnings,
    )
