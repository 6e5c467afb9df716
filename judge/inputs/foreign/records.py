"""What every reader of another tool's file produces: one neutral record per question, the
columns the user names, and what a reader found (records, located problems, warnings)."""

from __future__ import annotations

import json
from typing import Literal, NamedTuple

Tool = Literal["ragas", "deepeval", "otel"]
TOOLS: tuple[Tool, ...] = ("ragas", "deepeval", "otel")


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


def shown(value: object, limit: int = 40) -> str:
    """A value as a message shows it: its JSON (else its ``str``), cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
