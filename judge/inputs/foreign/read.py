"""Reading another tool's file by the tool's name: the tables' reader (Ragas, DeepEval) or the
traces' (OpenTelemetry)."""

from __future__ import annotations

from pathlib import Path

from judge.inputs.foreign.otel import read_otel
from judge.inputs.foreign.records import NO_COLUMNS, Columns, ForeignRead, Tool
from judge.inputs.foreign.tables import TABLES, read_table
from judge.io.text import DEFAULT_MAX_FILE_MB


def read_foreign(
    tool: Tool, path: Path, columns: Columns = NO_COLUMNS, max_mb: float = DEFAULT_MAX_FILE_MB
) -> ForeignRead:
    """Read ``path`` as ``tool`` writes it. A file that cannot be read at all raises
    ``InputError``; a bad row or trace is a problem in the result, every one of them."""
    if tool == "otel":
        return read_otel(path, columns, max_mb)
    return read_table(TABLES[tool], path, columns, max_mb)
