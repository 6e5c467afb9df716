"""Ragas evaluation datasets and DeepEval test cases and goldens: where each tool keeps each
part of a question (``TableSchema``), and the rows of its file (``table_files``) read into
records. A cell that cannot be used is a located problem; a column the schema does not know is
named in one warning."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from judge.errors import InputError
from judge.inputs.foreign.records import (
    NO_COLUMNS,
    Columns,
    ForeignRead,
    ForeignRecord,
    Retrieved,
    Tool,
    shown,
)
from judge.inputs.foreign.table_files import Row, table_rows
from judge.io.text import DEFAULT_MAX_FILE_MB


class TableSchema(NamedTuple):
    """Where one tool's table keeps each part of a question, and how it writes a list."""

    tool: str
    question: tuple[str, ...]
    """The column, then the names older versions of the tool used for it."""
    answer: tuple[str, ...]
    retrieved: tuple[str, ...]
    relevant: tuple[str, ...]
    reference: tuple[str, ...]
    ignored: frozenset[str]
    """Columns of the tool's schema that say nothing the harness uses."""
    text_list: Callable[[str], list[str] | None]
    """A list as the tool writes it in a CSV cell (and, for DeepEval, in JSONL); None: the
    cell does not hold one."""
    list_hint: str
    """How a list is written, for the message when a cell does not hold one."""
    multi_turn: str | None = None
    """A column that marks a multi-turn sample, which has no single question and answer."""


def _python_list(cell: str) -> list[str] | None:
    """A Ragas CSV list cell: ``str()`` of a Python list (``['a', "b's"]``), or a JSON array.
    Read with ``ast.literal_eval``, which evaluates literals only (no names, no calls)."""
    text = cell.strip()
    if not text.startswith("["):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            continue
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
    return None


def _pipe_list(cell: str) -> list[str]:
    """A DeepEval list cell: the items joined with ``|`` (``save_as`` for CSV and JSONL)."""
    return cell.split("|")


RAGAS = TableSchema(
    tool="Ragas",
    question=("user_input", "question"),
    answer=("response", "answer"),
    retrieved=("retrieved_contexts", "contexts"),
    relevant=("reference_contexts",),
    reference=("reference", "ground_truth"),
    ignored=frozenset(
        {
            "multi_responses",
            "rubric",
            "rubrics",
            "retrieved_context_ids",
            "reference_context_ids",
            "reference_tool_calls",
            "reference_topics",
            "persona_name",
            "query_style",
            "query_length",
            "synthesizer_name",
        }
    ),
    text_list=_python_list,
    list_hint="a list written as ['first', 'second'] (Ragas' to_csv) or as a JSON array",
)

DEEPEVAL = TableSchema(
    tool="DeepEval",
    question=("input",),
    answer=("actual_output",),
    retrieved=("retrieval_context",),
    relevant=("context",),
    reference=("expected_output",),
    ignored=frozenset(
        {
            "name",
            "comments",
            "source_file",
            "tools_called",
            "expected_tools",
            "additional_metadata",
            "custom_column_key_values",
            "token_cost",
            "completion_time",
            # DeepEval 4.3's save_as adds these two
            "input_token_count",
            "expectations",
            "scenario",
            "turns",
            "expected_outcome",
            "user_description",
        }
    ),
    text_list=_pipe_list,
    list_hint="a list (a JSON array, or the items joined with | as DeepEval's save_as writes them)",
    multi_turn="scenario",
)

TABLES: dict[Tool, TableSchema] = {"ragas": RAGAS, "deepeval": DEEPEVAL}


class _Cells:
    """The fields of one row, each read once; what is wrong goes to ``problems``."""

    def __init__(self, row: Row, schema: TableSchema, problems: list[str]) -> None:
        self.row = row
        self.schema = schema
        self.problems = problems

    def _find(self, names: tuple[str, ...]) -> tuple[str, Any]:
        for name in names:
            if self.row.values.get(name) is not None:
                return name, self.row.values[name]
        return names[0], None

    def problem(self, text: str) -> None:
        self.problems.append(f"{self.row.where}: {text}")

    def text(self, names: tuple[str, ...], required: str | None) -> str | None:
        """A text field; blank or missing is a problem when ``required`` says why it is needed."""
        name, value = self._find(names)
        if isinstance(value, str) and value.strip():
            return value
        if value is not None and not isinstance(value, str):
            self.problem(f"{name}: must be a string, not {shown(value)}")
        elif required is not None:
            self.problem(f"{name}: missing or empty; {required}")
        return None

    def optional_text(self, names: tuple[str, ...]) -> str | None:
        """A text that may be empty (a reference: empty means something); None when absent."""
        name, value = self._find(names)
        if value is None or isinstance(value, str):
            return value
        self.problem(f"{name}: must be a string, not {shown(value)}")
        return None

    def texts(self, names: tuple[str, ...], required: str | None) -> tuple[str, ...] | None:
        """A list of texts, none blank; in a CSV cell written as the tool writes a list."""
        name, value = self._find(names)
        if isinstance(value, str) and (self.row.text_cells or self.schema is DEEPEVAL):
            if not value.strip():
                # An empty cell: the tool wrote an empty list (DeepEval joins [] into ""), or
                # None (csv writes None as ""): nothing retrieved, or no relevant chunks given.
                return () if required is not None else None
            parsed = self.schema.text_list(value)
            if parsed is None:
                self.problem(f"{name}: must be {self.schema.list_hint}, not {shown(value)}")
                return None
            value = parsed
        if value is None:
            if required is not None:
                self.problem(f"{name}: missing; {required}")
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.problem(f"{name}: must be a list of strings, not {shown(value)}")
            return None
        blank = [index for index, item in enumerate(value) if not item.strip()]
        for index in blank:
            self.problem(f"{name}[{index}]: an empty text; remove it from the list")
        return None if blank else tuple(value)

    def column(self, column: str | None, option: str) -> str | None:
        """A named column's value as text (a number in JSON becomes its digits)."""
        if column is None:
            return None
        value = self.row.values.get(column)
        if isinstance(value, bool) or not isinstance(value, str | int):
            if value is None or (isinstance(value, str) and not value.strip()):
                self.problem(f"{column} ({option}): missing or empty")
            else:
                self.problem(f"{column} ({option}): must be a string, not {shown(value)}")
            return None
        text = str(value)
        if not text.strip():
            self.problem(f"{column} ({option}): missing or empty")
            return None
        return text

    def flag(self, column: str | None, option: str) -> bool | None:
        """A named true/false column: a JSON bool, or ``true``/``false`` in a text cell."""
        if column is None:
            return None
        value = self.row.values.get(column)
        if isinstance(value, bool):
            return value
        if self.row.text_cells and isinstance(value, str) and value.strip().lower() in _BOOLS:
            return _BOOLS[value.strip().lower()]
        self.problem(f"{column} ({option}): must be true or false, not {shown(value)}")
        return None


_BOOLS = {"true": True, "false": False}


def read_table(
    schema: TableSchema,
    path: Path,
    columns: Columns = NO_COLUMNS,
    max_mb: float = DEFAULT_MAX_FILE_MB,
) -> ForeignRead:
    """Read a Ragas or DeepEval table (``table_rows``) into records and problems."""
    rows = table_rows(path, max_mb)
    problems: list[str] = []
    present = {name for row in rows for name, value in row.values.items() if value is not None}
    for option, column in columns.named().items():
        if column not in present:
            shown = ", ".join(sorted(present)) or "none"
            problems.append(f"{path}: {option} {column}: no such column (the file has: {shown})")
    if problems:
        raise InputError(problems)
    records = [_table_record(row, schema, columns, problems) for row in rows]
    used = {
        *schema.question,
        *schema.answer,
        *schema.retrieved,
        *schema.relevant,
        *schema.reference,
        *schema.ignored,
        *columns.named().values(),
    }
    warnings = []
    unknown = sorted(present - used)
    if unknown:
        warnings.append(
            f"{path}: ignored column(s) that are not in the {schema.tool} schema: "
            f"{', '.join(unknown)} (a misspelt one? docs/imports.md lists what is read)"
        )
    return ForeignRead([r for r in records if r is not None], problems, warnings)


def _table_record(
    row: Row, schema: TableSchema, columns: Columns, problems: list[str]
) -> ForeignRecord | None:
    cells = _Cells(row, schema, problems)
    before = len(problems)
    if schema.multi_turn is not None and row.values.get(schema.multi_turn):
        cells.problem(
            f"{schema.multi_turn}: a multi-turn sample has no single question and answer to "
            "judge; import single-turn test cases"
        )
        return None
    question = cells.text(schema.question, "the question is what the golden set asks")
    answer = cells.text(
        schema.answer,
        "the answer your system gave is what is judged: run the questions through your "
        "system first, then save the test cases with their answers",
    )
    retrieved = cells.texts(
        schema.retrieved,
        "what your system retrieved is what is measured and what the judge sees "
        "(write [] when it retrieved nothing)",
    )
    relevant = cells.texts(schema.relevant, None)
    reference = cells.optional_text(schema.reference)
    qtype = cells.column(columns.type_column, "--type-column")
    source_id = cells.column(columns.id_column, "--id-column")
    answerable = cells.flag(columns.answerable_column, "--answerable-column")
    if len(problems) > before or question is None or answer is None or retrieved is None:
        return None
    return ForeignRecord(
        where=row.where,
        question=question,
        answer=answer,
        retrieved=tuple(Retrieved(text) for text in retrieved),
        relevant=relevant,
        reference=reference,
        qtype=qtype,
        answerable=answerable,
        source_id=source_id,
    )
