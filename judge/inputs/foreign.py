"""Datasets and traces written by other tools, read into one neutral record per question.

Three sources, each read to its published schema (``docs/imports.md`` cites them):

- **Ragas** evaluation datasets (``SingleTurnSample``: ``user_input``, ``retrieved_contexts``,
  ``response``, ``reference``, ``reference_contexts``), as ``EvaluationDataset.to_jsonl`` and
  ``to_csv`` write them (a list cell in CSV is Python's ``str()`` of the list, since
  ``csv.DictWriter`` writes every value with ``str``), a JSON array, or Parquet;
- **DeepEval** test cases and goldens (``input``, ``actual_output``, ``expected_output``,
  ``retrieval_context``, ``context``), as ``EvaluationDataset.save_as`` writes them: a JSON
  array, JSONL or CSV (the last two join a list with ``|``);
- **OpenTelemetry** traces in OTLP JSON (``resourceSpans[].scopeSpans[].spans[]``, what the
  collector's file exporter writes, one ``TracesData`` a line) with OpenInference attributes:
  one question per trace.

A reader only reads: every row or span it cannot use is one located problem
(``FILE:LINE: field: what to do``), all of a file's raised together as one ``InputError``.
Turning the records into a golden set, a corpus and a run (ids, types, out-of-scope) is
``judge.pipeline.imports``' job. The tools' files are not ours, so a column a reader does not
know is not an error (a Ragas result file carries its metric scores as columns): the reader
names the columns it ignored in one warning, which also catches a misspelt optional column.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from judge.errors import InputError
from judge.formatting import csv_field_limit
from judge.hashing import text_sha256
from judge.io.jsonl import MAX_RECORD_MB, parse_json_line, read_jsonl
from judge.io.state import StateFile, load_json_document
from judge.io.text import DEFAULT_MAX_FILE_MB, check_readable, read_text
from judge.textnorm import normalise

Tool = Literal["ragas", "deepeval", "otel"]
TOOLS: tuple[Tool, ...] = ("ragas", "deepeval", "otel")

#: Hex digits of the sha256 in a derived id: 48 bits, no collision in any corpus of a size a
#: golden set has (a million chunks collide with a probability of about 2 in a million).
ID_HEX = 12


def chunk_id_of(text: str) -> str:
    """The chunk id of a text: ``c-`` and the first ``ID_HEX`` hex digits of the sha256 of its
    normalised form (``textnorm.normalise``). Derived from content, so a re-import gives the
    same ids and one text retrieved for two questions (or with other spacing) is one chunk."""
    return "c-" + text_sha256(normalise(text))[:ID_HEX]


def question_id_of(text: str) -> str:
    """A question id from the question's text (``q-`` + hex), for sources that have no id of
    their own: stable over re-imports and over nights (a trace id is new every night)."""
    return "q-" + text_sha256(normalise(text))[:ID_HEX]


class Retrieved(NamedTuple):
    """One retrieved text, best first, as the source gave it."""

    text: str
    score: float | None = None
    doc: str | None = None
    """The source's document id (an OpenInference ``document.id``), or None."""


class ForeignRecord(NamedTuple):
    """One question as another tool recorded it: what every reader produces."""

    where: str
    """``FILE:LINE`` (and the trace, for spans): the prefix of every problem about it."""
    question: str
    answer: str | None
    """None when the source records the question as failed (``failure`` says why)."""
    retrieved: tuple[Retrieved, ...]
    relevant: tuple[str, ...] | None
    """Texts of the chunks that answer the question (Ragas ``reference_contexts``, DeepEval
    ``context``); None when the source does not say."""
    reference: str | None
    """The reference answer; None when the source has none for this question."""
    qtype: str | None = None
    """The value of the type column (``--type-column``), when one was named."""
    answerable: bool | None = None
    """The value of the answerable column (``--answerable-column``), when one was named."""
    source_id: str | None = None
    """The value of the id column (``--id-column``), when one was named."""
    failure: str | None = None


class Columns(NamedTuple):
    """Columns (or, for traces, root-span attributes) that the user names on the command line."""

    type_column: str | None = None
    id_column: str | None = None
    answerable_column: str | None = None

    def named(self) -> dict[str, str]:
        """Option → column, for the columns given."""
        options = {
            "--type-column": self.type_column,
            "--id-column": self.id_column,
            "--answerable-column": self.answerable_column,
        }
        return {option: column for option, column in options.items() if column is not None}


#: No column named: types from the default, ids from the question text.
NO_COLUMNS = Columns()


class ForeignRead(NamedTuple):
    """What a reader found: the records it could read, in file order; the problems of the rows
    or traces it could not (the caller adds its own and raises them together); warnings."""

    records: list[ForeignRecord]
    problems: list[str]
    warnings: list[str]


def read_foreign(
    tool: Tool, path: Path, columns: Columns = NO_COLUMNS, max_mb: float = DEFAULT_MAX_FILE_MB
) -> ForeignRead:
    """Read ``path`` as ``tool`` writes it. A file that cannot be read at all raises
    ``InputError``; a bad row or trace is a problem in the result, every one of them."""
    if tool == "otel":
        return read_otel(path, columns, max_mb)
    return read_table(TABLES[tool], path, columns, max_mb)


# --- tables: Ragas and DeepEval -------------------------------------------------------------


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


class Row(NamedTuple):
    """One row of a table file: where it is, its values, and whether they are all text (CSV)."""

    where: str
    values: dict[str, Any]
    text_cells: bool


#: What the JSON-array reader calls the file in its messages.
_JSON_ARRAY = StateFile(
    what="JSON file",
    remedy="save it again with the tool that wrote it (a JSON array of objects, one per row)",
)


def table_rows(path: Path, max_mb: float = DEFAULT_MAX_FILE_MB) -> list[Row]:
    """The rows of a table file, by its suffix: ``.jsonl``, ``.json`` (an array of objects, or
    JSONL written under that name), ``.csv``, ``.parquet``."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_rows(path, max_mb)
    if suffix == ".parquet":
        return _parquet_rows(path, max_mb)
    if suffix == ".json":
        text = read_text(path, max_mb)
        if text.lstrip().startswith("["):
            return _json_array_rows(path, text, max_mb)
    elif suffix != ".jsonl":
        raise InputError(
            [
                f"{path}: not a file this reader knows by its name; give a .jsonl, .json, .csv "
                "or .parquet file"
            ]
        )
    return [Row(f"{path}:{line.number}", line.value, False) for line in read_jsonl(path, max_mb)]


def _json_array_rows(path: Path, text: str, max_mb: float) -> list[Row]:
    value = load_json_document(path, _JSON_ARRAY._replace(max_mb=max_mb))
    if not isinstance(value, list):
        raise InputError([f"{path}: expected a JSON array of objects, got {type(value).__name__}"])
    if not value:
        raise InputError([f"{path}: no records (the array is empty)"])
    lines = _element_lines(text)
    rows: list[Row] = []
    problems: list[str] = []
    for index, item in enumerate(value):
        where = f"{path}:{lines[index]}" if len(lines) == len(value) else f"{path}: item {index}"
        if isinstance(item, dict):
            rows.append(Row(where, item, False))
        else:
            problems.append(f"{where}: expected a JSON object, got {type(item).__name__}")
    if problems:
        raise InputError(problems)
    return rows


def _element_lines(text: str) -> list[int]:
    """The line each element of a top-level JSON array starts on ([] when it cannot tell):
    Python's JSON reader gives no positions, so the array is walked element by element."""
    decoder = json.JSONDecoder()
    space = re.compile(r"[ \t\n\r]*")

    def skip(index: int) -> int:
        match = space.match(text, index)
        return match.end() if match else index

    lines: list[int] = []
    try:
        index = skip(0)
        if text[index] != "[":
            return []
        index, line, counted = skip(index + 1), 1, 0
        while text[index] != "]":
            line += text.count("\n", counted, index)
            counted = index
            lines.append(line)
            index = skip(decoder.raw_decode(text, index)[1])
            if text[index] == ",":
                index = skip(index + 1)
    except (ValueError, IndexError, RecursionError):
        return []
    return lines


def _csv_rows(path: Path, max_mb: float) -> list[Row]:
    text = read_text(path, max_mb)
    rows: list[Row] = []
    problems: list[str] = []
    with csv_field_limit(MAX_RECORD_MB * 1024 * 1024):
        reader = csv.DictReader(io.StringIO(text, newline=""))
        try:
            header = reader.fieldnames or []
        except csv.Error as exc:
            raise InputError([f"{path}:{reader.line_num}: not valid CSV ({exc})"]) from None
        if not header:
            raise InputError([f"{path}: no records (the file is empty)"])
        seen: set[str] = set()
        for name in header:
            if name in seen:
                problems.append(f"{path}:1: column '{name}' appears twice in the header")
            seen.add(name)
        while True:
            start = reader.line_num + 1
            try:
                values = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                problems.append(f"{path}:{start}: not valid CSV ({exc}); fix the quoting")
                break
            if None in values:
                problems.append(
                    f"{path}:{start}: {len(header) + len(values[None])} cells, but the header "
                    f"has {len(header)} columns; quote the cells that hold commas"
                )
                continue
            rows.append(Row(f"{path}:{start}", {k: v for k, v in values.items()}, True))
    if problems:
        raise InputError(problems)
    if not rows:
        raise InputError([f"{path}: no records (only a header)"])
    return rows


def _parquet_rows(path: Path, max_mb: float) -> list[Row]:
    """Parquet through pandas, when an engine (pyarrow or fastparquet) is installed: the
    harness does not depend on one, so without it the file is refused in one line."""
    import pandas as pd

    check_readable(path, max_mb)
    try:
        frame = pd.read_parquet(path)
    except ImportError:
        raise InputError(
            [
                f"{path}: reading Parquet needs pyarrow (or fastparquet), which is not "
                "installed here; install it into judge's environment (pip install pyarrow), "
                "or save the dataset as JSONL or CSV (Ragas: EvaluationDataset.to_jsonl)"
            ]
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError([f"{path}: not a Parquet file this reader can open ({exc})"]) from None
    return [
        Row(f"{path}: row {number}", {str(k): _plain(v) for k, v in record.items()}, False)
        for number, record in enumerate(frame.to_dict("records"), start=1)
    ]


def _plain(value: Any) -> Any:
    """A Parquet cell as JSON would hold it: arrays as lists, missing values as None."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


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
            self.problem(f"{name}: must be a string, not {_shown(value)}")
        elif required is not None:
            self.problem(f"{name}: missing or empty; {required}")
        return None

    def optional_text(self, names: tuple[str, ...]) -> str | None:
        """A text that may be empty (a reference: empty means something); None when absent."""
        name, value = self._find(names)
        if value is None or isinstance(value, str):
            return value
        self.problem(f"{name}: must be a string, not {_shown(value)}")
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
                self.problem(f"{name}: must be {self.schema.list_hint}, not {_shown(value)}")
                return None
            value = parsed
        if value is None:
            if required is not None:
                self.problem(f"{name}: missing; {required}")
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.problem(f"{name}: must be a list of strings, not {_shown(value)}")
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
                self.problem(f"{column} ({option}): must be a string, not {_shown(value)}")
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
        self.problem(f"{column} ({option}): must be true or false, not {_shown(value)}")
        return None


_BOOLS = {"true": True, "false": False}


def _shown(value: object, limit: int = 40) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


# --- traces: OTLP JSON with OpenInference attributes ----------------------------------------

SPAN_KIND = "openinference.span.kind"
#: Keys under which a JSON ``input.value`` / ``output.value`` holds the text, in order.
QUESTION_KEYS = ("question", "query", "input", "user_input", "query_str", "prompt", "message")
ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
_HEX = re.compile(r"[0-9a-fA-F]+")
_DOCUMENT = re.compile(r"^(?P<prefix>.+)\.(?P<index>\d+)\.document\.(?P<field>content|id|score)$")

#: What the document reader calls the file in its messages.
_TRACE_FILE = StateFile(
    what="trace file",
    remedy="export it again (OTLP JSON: the collector's file exporter, or one TracesData object)",
)


class Span(NamedTuple):
    """One span of a trace file, with its attributes decoded from OTLP's ``AnyValue``."""

    where: str
    trace: str
    span: str
    parent: str | None
    name: str
    start: int
    end: int
    attrs: dict[str, Any]
    error: str | None
    """The span's status message when its status is ERROR, else None."""

    @property
    def kind(self) -> str | None:
        kind = self.attrs.get(SPAN_KIND)
        return kind.upper() if isinstance(kind, str) else None

    def label(self) -> str:
        return f"span '{self.name}' ({self.span})"


def _any_value(value: Any) -> Any:
    """OTLP JSON's ``AnyValue`` as a Python value (``intValue`` is a string in OTLP JSON)."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        number = value["doubleValue"]
        if isinstance(number, int | float) and not isinstance(number, bool):
            return float(number)
        try:
            return float(number)
        except (TypeError, ValueError):
            return None
    if "arrayValue" in value:
        items = (
            value["arrayValue"].get("values", []) if isinstance(value["arrayValue"], dict) else []
        )
        return [_any_value(item) for item in items] if isinstance(items, list) else None
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"]
        items = kvlist.get("values", []) if isinstance(kvlist, dict) else []
        return _attributes(items) if isinstance(items, list) else None
    return None


def _attributes(items: list[Any]) -> dict[str, Any]:
    return {
        item["key"]: _any_value(item.get("value"))
        for item in items
        if isinstance(item, dict) and isinstance(item.get("key"), str)
    }


def _nanos(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    try:
        return int(value) if isinstance(value, int | str) else 0
    except ValueError:
        return 0


def _error_of(status: Any) -> str | None:
    """The span's status message when its status code is ERROR (2, or its enum name)."""
    if not isinstance(status, dict) or status.get("code") not in (2, "STATUS_CODE_ERROR"):
        return None
    message = status.get("message")
    return message if isinstance(message, str) and message.strip() else "the span ended in ERROR"


def _trace_batches(path: Path, max_mb: float) -> tuple[list[tuple[int | None, Any]], str]:
    """The file's ``TracesData`` objects with their line (None: one document over many lines),
    and the file's text (to find a span's line in such a document)."""
    text = read_text(path, max_mb)
    first = next((line for line in text.split("\n") if line.strip()), "")
    value, problem = parse_json_line(first)
    if problem is None and isinstance(value, dict):  # JSON lines: the collector's file exporter
        return [(line.number, line.value) for line in read_jsonl(path, max_mb)], text
    document = load_json_document(path, _TRACE_FILE._replace(max_mb=max_mb))
    return [(None, document)], text


def _spans(path: Path, max_mb: float, problems: list[str]) -> list[Span]:
    batches, text = _trace_batches(path, max_mb)
    spans: list[Span] = []
    for line, batch in batches:
        here = f"{path}:{line}" if line is not None else str(path)
        resource_spans = batch.get("resourceSpans") if isinstance(batch, dict) else None
        if not isinstance(resource_spans, list):
            problems.append(
                f"{here}: resourceSpans: missing; an OTLP JSON trace file holds TracesData "
                "objects (resourceSpans[].scopeSpans[].spans[]), one a line"
            )
            continue
        for resource in resource_spans:
            scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
            for scope in scopes if isinstance(scopes, list) else []:
                items = scope.get("spans") if isinstance(scope, dict) else None
                for item in items if isinstance(items, list) else []:
                    span = _span(item, path, line, text, here, problems)
                    if span is not None:
                        spans.append(span)
    return spans


def _span(
    item: Any, path: Path, line: int | None, text: str, here: str, problems: list[str]
) -> Span | None:
    if not isinstance(item, dict):
        problems.append(f"{here}: a span is not a JSON object")
        return None
    span_id, trace_id = item.get("spanId"), item.get("traceId")
    where = here
    if line is None and isinstance(span_id, str) and span_id:  # a document: find the span's line
        found = text.find(f'"{span_id}"')
        if found >= 0:
            where = f"{path}:{text.count(chr(10), 0, found) + 1}"
    bad = [
        f"{field}: must be {digits} hex digits (OTLP JSON writes ids in hex), not {_shown(value)}"
        for field, value, digits in (("traceId", trace_id, 32), ("spanId", span_id, 16))
        if not (isinstance(value, str) and len(value) == digits and _HEX.fullmatch(value))
    ]
    if bad:
        problems.extend(f"{where}: {problem}" for problem in bad)
        return None
    assert isinstance(span_id, str) and isinstance(trace_id, str)
    parent = item.get("parentSpanId")
    attributes = item.get("attributes", [])
    name = item.get("name")
    return Span(
        where=f"{where}: trace {trace_id.lower()}",
        trace=trace_id.lower(),
        span=span_id.lower(),
        parent=parent.lower() if isinstance(parent, str) and parent else None,
        name=name if isinstance(name, str) else "",
        start=_nanos(item.get("startTimeUnixNano")),
        end=_nanos(item.get("endTimeUnixNano")),
        attrs=_attributes(attributes) if isinstance(attributes, list) else {},
        error=_error_of(item.get("status")),
    )


def read_otel(
    path: Path, columns: Columns = NO_COLUMNS, max_mb: float = DEFAULT_MAX_FILE_MB
) -> ForeignRead:
    """One record per trace that has OpenInference spans: its root span's input as the
    question, its documents as the ranking, its answer (``_answer``); traces with no
    OpenInference span (an HTTP call in the same file) are skipped with a warning."""
    problems: list[str] = []
    spans = _spans(path, max_mb, problems)
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace, []).append(span)
    records: list[ForeignRecord] = []
    skipped = no_retrieval = 0
    for trace_spans in traces.values():
        if not any(span.kind for span in trace_spans):
            skipped += 1
            continue
        record = _trace_record(trace_spans, columns, problems)
        if record is not None:
            records.append(record)
            no_retrieval += not record.retrieved
    if not records and not problems:
        raise InputError(
            [
                f"{path}: no trace with OpenInference spans ({len(spans)} span(s) in "
                f"{len(traces)} trace(s)); instrument the RAG system with OpenInference "
                "(openinference.span.kind on each span)"
            ]
        )
    warnings = []
    if skipped:
        warnings.append(f"{path}: skipped {skipped} trace(s) without OpenInference spans")
    if no_retrieval:
        warnings.append(
            f"{path}: {no_retrieval} trace(s) have no RETRIEVER (or RERANKER) span with "
            "documents: their ranking is empty"
        )
    return ForeignRead(records, problems, warnings)


def _root(spans: list[Span], problems: list[str]) -> Span | None:
    """The trace's top OpenInference span: the one with no OpenInference span above it (the
    spans above it, an HTTP server span, are not the RAG system's); CHAIN or AGENT first."""
    by_id = {span.span: span for span in spans}

    def has_oi_ancestor(span: Span) -> bool:
        seen = {span.span}
        parent = by_id.get(span.parent) if span.parent else None
        while parent is not None and parent.span not in seen:
            if parent.kind:
                return True
            seen.add(parent.span)
            parent = by_id.get(parent.parent) if parent.parent else None
        return False

    tops = [span for span in spans if span.kind and not has_oi_ancestor(span)]
    chains = [span for span in tops if span.kind in ("CHAIN", "AGENT")]
    if len(tops) == 1 or len(chains) == 1:
        return tops[0] if len(tops) == 1 else chains[0]
    problems.append(
        f"{tops[0].where}: {len(tops)} OpenInference spans without a parent span "
        f"({', '.join(span.label() for span in tops[:4])}); a question is one trace with one "
        "root span (a CHAIN or AGENT around the retriever and the LLM): export whole traces"
    )
    return None


def _json_text(value: Any, keys: Sequence[str]) -> str | None:
    """The text inside a JSON ``input.value`` or ``output.value``: a string, the first of
    ``keys`` that holds one, an OpenAI response's first choice, or an object's only string."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return None
    for key in keys:
        if isinstance(value.get(key), str):
            return str(value[key])
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            return str(message["content"])
        if isinstance(choices[0].get("text"), str):
            return str(choices[0]["text"])
    strings = [item for item in value.values() if isinstance(item, str)]
    return strings[0] if len(strings) == 1 else None


def _value_text(span: Span, side: str, keys: Sequence[str]) -> tuple[str | None, str | None]:
    """``input.value`` or ``output.value`` as text, and why not when it is there but unusable.
    JSON (``<side>.mime_type`` application/json) is unwrapped (``_json_text``)."""
    value = span.attrs.get(f"{side}.value")
    if not isinstance(value, str) or not value.strip():
        return None, None
    if span.attrs.get(f"{side}.mime_type") != "application/json":
        return value, None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value, None  # labelled JSON but is not: the text as it is
    text = _json_text(parsed, keys)
    if text is None or not text.strip():
        return None, (
            f"{side}.value: JSON with no text under any of {', '.join(keys)} ({_shown(value)})"
        )
    return text, None


def _output_message(span: Span) -> str | None:
    """The last ``llm.output_messages.N.message.content`` of an LLM span."""
    contents: dict[int, str] = {}
    for key, value in span.attrs.items():
        match = re.fullmatch(r"llm\.output_messages\.(\d+)\.message\.content", key)
        if match and isinstance(value, str) and value.strip():
            contents[int(match[1])] = value
    return contents[max(contents)] if contents else None


def _answer(root: Span, spans: list[Span]) -> tuple[str | None, list[str]]:
    """The answer: the root span's output when it is text (the system's final answer, after
    any post-processing and whatever other LLM calls came after the answering one), else the
    output of the LLM span that ended last; and the problems found on the way."""
    text, problem = _value_text(root, "output", ANSWER_KEYS)
    notes = [f"{root.label()}: {problem}"] if problem else []
    if text is not None:
        return text, []
    llms = sorted((s for s in spans if s.kind == "LLM"), key=lambda s: (s.end, s.start))
    if llms:
        last = llms[-1]
        message = _output_message(last)
        if message is not None:
            return message, []
        text, problem = _value_text(last, "output", ANSWER_KEYS)
        if text is not None:
            return text, []
        if problem:
            notes.append(f"{last.label()}: {problem}")
    return None, notes


def _documents(span: Span, prefix: str, problems: list[str]) -> list[Retrieved]:
    """A span's documents, in index order: flattened (``<prefix>.N.document.content``, the
    OpenInference convention) or, as some exporters write them, a list of objects."""
    found: dict[int, dict[str, Any]] = {}
    listed = span.attrs.get(prefix)
    if isinstance(listed, list):
        for index, item in enumerate(listed):
            if isinstance(item, dict):
                found[index] = {k.removeprefix("document."): v for k, v in item.items()}
    for key, value in span.attrs.items():
        match = _DOCUMENT.match(key)
        if match and match["prefix"] == prefix:
            found.setdefault(int(match["index"]), {})[match["field"]] = value
    documents = []
    for index in sorted(found):
        fields, name = found[index], f"{prefix}.{index}.document"
        content, score, doc = fields.get("content"), fields.get("score"), fields.get("id")
        if not isinstance(content, str) or not content.strip():
            problems.append(
                f"{span.where}: {span.label()}: {name}.content: missing or empty; the judge "
                "reads the documents' text (record it: OpenInference's hide-outputs settings "
                "must be off)"
            )
            continue
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            problems.append(f"{span.where}: {span.label()}: {name}.score: must be a finite number")
            continue
        shown_id = str(doc) if isinstance(doc, str | int) and not isinstance(doc, bool) else None
        documents.append(
            Retrieved(content, None if score is None else float(score), shown_id or None)
        )
    return documents


def _trace_record(spans: list[Span], columns: Columns, problems: list[str]) -> ForeignRecord | None:
    before = len(problems)
    root = _root(spans, problems)
    if root is None:
        return None
    question, problem = _value_text(root, "input", QUESTION_KEYS)
    if question is None:
        problems.append(
            f"{root.where}: {root.label()}, the root: "
            + (problem or "input.value: missing; the question is the root span's input")
        )
    ranked = sorted(spans, key=lambda s: s.start)  # stable: file order among equal starts
    rerankers = [s for s in ranked if s.kind == "RERANKER"]
    sources = (
        [(s, "reranker.output_documents") for s in rerankers]
        if rerankers
        else [(s, "retrieval.documents") for s in ranked if s.kind == "RETRIEVER"]
    )
    retrieved = [doc for span, prefix in sources for doc in _documents(span, prefix, problems)]
    answer, notes = _answer(root, spans)
    failure = None
    if answer is None:
        failed = [s for s in ranked if s.error]
        if failed:
            failure = f"{failed[0].label()}: {failed[0].error}"
        else:
            problems.extend(f"{root.where}: {note}" for note in notes)
            problems.append(
                f"{root.where}: no answer: neither the root span's output.value nor an LLM "
                "span's llm.output_messages or output.value holds text"
            )
    attrs = root.attrs
    values = {
        option: attrs.get(column)
        for option, column in columns.named().items()
        if option != "--answerable-column"
    }
    for option, value in values.items():
        if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
            column = columns.named()[option]
            problems.append(
                f"{root.where}: {root.label()}: {column} ({option}): missing or not a string "
                "attribute of the root span"
            )
    answerable = None
    if columns.answerable_column is not None:
        flag = attrs.get(columns.answerable_column)
        if isinstance(flag, bool):
            answerable = flag
        else:
            problems.append(
                f"{root.where}: {root.label()}: {columns.answerable_column} "
                "(--answerable-column): must be a bool attribute of the root span"
            )
    if len(problems) > before or question is None:
        return None
    type_value = values.get("--type-column")
    id_value = values.get("--id-column")
    return ForeignRecord(
        where=root.where,
        question=question,
        answer=answer,
        retrieved=tuple(retrieved),
        relevant=None,
        reference=None,
        qtype=None if type_value is None else str(type_value),
        answerable=answerable,
        source_id=None if id_value is None else str(id_value),
        failure=failure,
    )
