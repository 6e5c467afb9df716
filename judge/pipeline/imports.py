"""``judge import ragas|deepeval|otel FILE``: another tool's dataset or traces → a golden set,
a corpus and a run in the harness's formats (``golden/README.md``), and the ``[data]`` lines
that point ``judge.toml`` at them.

The wiring only: the settings from the configuration, the reader (``judge.inputs.foreign.read``)
and the conversion (``judge.inputs.foreign.convert``: ids from content, types, out of scope,
relevant chunks; every problem of the file raised at once, located, before anything is
written). The three files are then written to a staging folder beside their place, loaded back
by the loaders ``judge check`` uses (so what is written is what the harness accepts) and renamed
into place; existing files are refused unless ``replace``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NamedTuple

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
from judge.inputs.foreign.records import Columns, Tool
from judge.inputs.golden import GoldenSet, load_corpus, load_questions
from judge.inputs.runs import load_run
from judge.io.text import DEFAULT_MAX_FILE_MB

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
    settings = import_settings(config, default_type)
    targets = _targets(out_dir, replace)
    limit = max_file_mb or (config.data.max_file_mb if config else DEFAULT_MAX_FILE_MB)
    columns = Columns(type_column, id_column, answerable_column)
    read = read_foreign(tool, source, columns, limit)
    warnings = list(read.warnings)
    converted = convert(read.records, settings, list(read.problems), warnings, source)
    types = ordered_types(converted.questions, settings)
    texts = file_texts(converted, tool, source)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(texts, targets, types, settings.out_of_scope)
    if relative_to is None:
        relative_to = config.source.parent if config and config.source else Path.cwd()
    lines = data_lines(targets, types, settings.out_of_scope, relative_to)
    return _imported(converted, targets, types, settings, lines, warnings)


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
