"""``judge import ragas|deepeval|otel FILE``: another tool's dataset or traces → a golden set,
a corpus and a run in the harness's formats (``golden/README.md``), and the ``[data]`` lines
that point ``judge.toml`` at them.

The wiring only: the settings from the configuration, the reader (``judge.inputs.foreign.read``)
and the conversion (``judge.inputs.foreign.convert``: ids from content, types, out of scope,
relevant chunks; every problem of the file raised at once, located, before anything is
written). The three files are then written to a staging folder beside their place, loaded back
by the loaders ``judge check`` uses, with the same ``data.max_file_mb`` (so what is written is
what the harness accepts; a file over the limit is refused before anything is staged, naming
the input and the configured limit) and written in place of their targets (``write_atomic``: a
symlink stays a link); existing files are refused unless ``replace``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from judge.config import Config, DataConfig
from judge.errors import InputError
from judge.inputs.foreign.convert import (
    Converted,
    ImportSettings,
    convert,
    data_lines,
    file_texts,
    import_settings,
    ordered_types,
)
from judge.inputs.foreign.read import read_foreign
from judge.inputs.foreign.records import Columns, ForeignRecord, Tool
from judge.inputs.golden import GoldenSet, load_corpus, load_questions
from judge.inputs.runs import load_run
from judge.io.limits import DEFAULT_MAX_FILE_MB, file_size_problem
from judge.io.validation import describe_validation_error
from judge.io.write import check_writable, clear_stale_copies, write_atomic

#: The files an import writes into its folder, in the order ``[data]`` names them.
FILE_NAMES = {"questions": "questions.jsonl", "corpus": "corpus.jsonl", "run": "run.jsonl"}


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


#: Type names no question may have: ``all`` is every table's overall row (``DataConfig``).
RESERVED_TYPES = frozenset({"all"})


def _reserved_types(records: list[ForeignRecord]) -> list[str]:
    """A located line for each record whose type column names a reserved type."""
    return [
        f"{record.where}: type column: '{record.qtype.strip()}' is reserved for the overall row "
        "of every table; rename that type in the file"
        for record in records
        if record.qtype is not None and record.qtype.strip() in RESERVED_TYPES
    ]


def _check_sizes(
    texts: dict[str, str], targets: dict[str, Path], source: Path, limit: float
) -> None:
    """Refuse, before anything is written, a file the import would write over ``limit`` (the
    configured ``data.max_file_mb``, which ``judge check`` applies when it reads the file back):
    one line per file, naming the input and the limit."""
    problems = []
    for key, text in texts.items():
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        problem = file_size_problem(size, limit, targets[key].name)
        if problem is not None:
            problems.append(
                f"{source}: not imported: {problem}; raise data.max_file_mb in judge.toml, "
                "or import a smaller file"
            )
    if problems:
        raise InputError(problems)


def _staged_data(
    staged: dict[str, Path], types: tuple[str, ...], oos: str, limit: float
) -> DataConfig:
    """The ``[data]`` of the staged files, as ``judge check`` would read it; a type the source
    names that no configuration may hold (``all``, the overall row) is one located line."""
    try:
        return DataConfig(
            questions=staged["questions"],
            corpus=staged["corpus"],
            run=staged["run"],
            question_types=types,
            out_of_scope_types=(oos,),
            max_file_mb=limit,
        )
    except ValidationError as exc:
        problems = describe_validation_error(exc)
        raise InputError(
            [f"the imported types ({', '.join(types)}): {problem}" for problem in problems]
        ) from None


def _write(
    texts: dict[str, str], targets: dict[str, Path], types: tuple[str, ...], oos: str, limit: float
) -> None:
    """Stage the files beside their place, load them back as ``judge check`` does (with the
    same size limit), then write each in place of its target (``write_atomic``: a symlink stays
    a link, the mode is kept, a read-only file refused before anything is written): what is
    written is what the harness reads. A staging folder a killed import left is removed first.
    ``texts`` is emptied as the files are staged, so that the text is not held in memory
    while the staged files are loaded back."""
    folder = targets["questions"].parent
    for target in targets.values():
        check_writable(target)
    clear_stale_copies(folder / "import")
    staging = folder / f".import.{os.getpid()}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        staged = {key: staging / target.name for key, target in targets.items()}
        for key, path in staged.items():
            write_atomic(path, texts.pop(key))  # the text is on disk: not held while loading
        _load_back(_staged_data(staged, types, oos, limit), staging, targets, limit)
        for key, target in targets.items():
            write_atomic(target, staged[key].read_bytes())
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _load_back(data: DataConfig, staging: Path, targets: dict[str, Path], limit: float) -> None:
    """Load the staged files as ``judge check`` does; a refusal names the file it would have
    been (``--out``'s), not the staging copy that is about to be removed."""
    try:
        corpus = load_corpus(data.corpus, limit)
        questions = load_questions(data.questions, corpus, data)
        assert data.run is not None
        load_run(data.run, GoldenSet(questions, corpus, "", ""), limit)
    except InputError as exc:
        renamed = [_unstaged(problem, staging, targets) for problem in exc.problems]
        raise InputError(
            [f"not imported: {problem} (what judge check would say of it)" for problem in renamed]
        ) from None


def _unstaged(problem: str, staging: Path, targets: dict[str, Path]) -> str:
    for target in targets.values():
        problem = problem.replace(str(staging / target.name), str(target))
    return problem


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
    settings = import_settings(config, default_type)
    targets = _targets(out_dir, replace)
    limit = max_file_mb or (config.data.max_file_mb if config else DEFAULT_MAX_FILE_MB)
    columns = Columns(type_column, id_column, answerable_column)
    read = read_foreign(tool, source, columns, limit)
    warnings = list(read.warnings)
    problems = list(read.problems)
    if settings.question_types is None:  # else a type not configured is refused by convert
        problems += _reserved_types(read.records)
    converted = convert(read.records, settings, problems, warnings, source)
    del read  # the source's records: no longer needed, and as large as the file
    types = ordered_types(converted.questions, settings)
    texts = file_texts(converted, tool, source)
    _check_sizes(texts, targets, source, limit)
    if relative_to is None:
        relative_to = config.source.parent if config and config.source else Path.cwd()
    lines = data_lines(targets, types, settings.out_of_scope, relative_to)
    imported = _imported(converted, targets, types, settings, lines, warnings)
    del converted  # counted: only the files' text is kept while they are loaded back
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(texts, targets, types, settings.out_of_scope, limit)
    return imported


def _targets(out_dir: Path, replace: bool) -> dict[str, Path]:
    """The three files' places in ``out_dir``; refused when ``out_dir`` is a file, or (without
    ``replace``) when any of them exists."""
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
    return targets


def _imported(
    converted: Converted,
    targets: dict[str, Path],
    types: tuple[str, ...],
    settings: ImportSettings,
    lines: list[str],
    warnings: list[str],
) -> ImportedFiles:
    """What the import wrote, counted for the user."""
    questions = converted.questions
    per_type = {t: sum(q["type"] == t for q in questions) for t in types}
    unlabelled = sum(q["answerable"] and q["relevant_chunks"] is None for q in questions)
    return ImportedFiles(
        questions=targets["questions"],
        corpus=targets["corpus"],
        run=targets["run"],
        per_type=per_type,
        chunks=len(converted.corpus),
        failed=len(converted.failed),
        unlabelled=unlabelled,
        question_types=types,
        out_of_scope_type=settings.out_of_scope,
        data_lines=lines,
        warnings=warnings,
    )
