"""The spans of an OTLP JSON trace file (``resourceSpans[].scopeSpans[].spans[]``), one
``TracesData`` a line as the collector's file exporter writes them, or one document: each with
its ids checked, its attributes decoded from OTLP's ``AnyValue`` and its place in the file."""

from __future__ import annotations

import base64
import math
import re
from pathlib import Path
from typing import Any, NamedTuple

from judge.inputs.foreign.records import shown
from judge.io.jsonl import parse_json_line, read_jsonl
from judge.io.state import StateFile, load_json_document
from judge.io.text import read_text

SPAN_KIND = "openinference.span.kind"
_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")

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


class Ids:
    """How a file's ids are written (hex or base64, counted) and its refused spans, grouped by
    cause: one problem line per cause, with the count and the first places."""

    #: Places shown per cause.
    SHOWN = 3

    def __init__(self) -> None:
        self.spans = 0
        """Spans read with valid ids."""
        self.base64 = 0
        """Of those, the ones whose ids are written in base64."""
        self._seen_base64 = False
        self._refused: dict[tuple[str, str], list[str]] = {}

    def counted(self) -> None:
        """One more span read; in base64 if any of its ids read since the last one was."""
        self.spans += 1
        self.base64 += self._seen_base64
        self._seen_base64 = False

    def read(self, value: object, size: int) -> str | None:
        """An id of ``size`` bytes as lower-case hex: written as ``2 * size`` hex digits (OTLP
        JSON) or as the base64 of its bytes (protobuf's JSON mapping); None when it is neither."""
        if not isinstance(value, str):
            return None
        if len(value) == 2 * size and _HEX.fullmatch(value):
            return value.lower()
        if len(value) == 4 * math.ceil(size / 3) and _BASE64.fullmatch(value):
            raw = base64.b64decode(value)
            if len(raw) == size:
                self._seen_base64 = True
                return raw.hex()
        return None

    def refuse(self, field: str, problem: str, where: str) -> None:
        """A span refused for ``problem`` in ``field``; ``where`` is its place."""
        cause = problem.split(", not ")[0]
        self._refused.setdefault((field, cause), []).append(f"{where}\0{problem}")

    def problems(self) -> list[str]:
        """One line per cause: the first place and value, then how many more and where."""
        lines = []
        for (field, _), found in self._refused.items():
            where, problem = found[0].split("\0", 1)
            more = [place.split("\0", 1)[0] for place in found[1 : 1 + self.SHOWN]]
            line = f"{where}: {field}: {problem}"
            if len(found) > 1:
                shown_more = ", ".join(more) + (", ..." if len(found) > 1 + self.SHOWN else "")
                line += f" ({len(found)} spans in all; also {shown_more})"
            lines.append(line)
        return lines


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


def read_spans(
    path: Path, max_mb: float, problems: list[str], notes: list[str] | None = None
) -> list[Span]:
    """Every span of the file that has valid ids, in file order; what is wrong with the others
    (a batch without ``resourceSpans``, a span that is not an object or has bad ids) goes to
    ``problems``, located: one line per cause, with its count and first places (an export
    whose every id is wrong is one line, not one per span). ``notes`` gets how the ids were
    written (hex, as the collector writes them; base64, as protobuf's ``MessageToJson``)."""
    batches, text = _trace_batches(path, max_mb)
    ids = Ids()
    spans = _batch_spans(path, batches, text, ids, problems)
    problems.extend(ids.problems())
    if notes is not None and ids.base64:
        notes.append(
            f"{path}: the ids of {ids.base64} of {ids.spans} span(s) are written in base64 "
            "(protobuf's JSON mapping, as MessageToJson writes them) and were read as their hex"
        )
    return spans


def _batch_spans(
    path: Path, batches: list[tuple[int | None, Any]], text: str, ids: Ids, problems: list[str]
) -> list[Span]:
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
                    span = _span(item, path, line, text, here, ids)
                    if span is not None:
                        spans.append(span)
    return spans


def _span(item: Any, path: Path, line: int | None, text: str, here: str, ids: Ids) -> Span | None:
    if not isinstance(item, dict):
        ids.refuse("span", "not a JSON object", here)
        return None
    span_id, trace_id = item.get("spanId"), item.get("traceId")
    where = here
    if line is None and isinstance(span_id, str) and span_id:  # a document: find the span's line
        found = text.find(f'"{span_id}"')
        if found >= 0:
            where = f"{path}:{text.count(chr(10), 0, found) + 1}"
    trace_hex, span_hex = ids.read(trace_id, 16), ids.read(span_id, 8)
    bad = [
        (field, f"must be {size * 2} hex digits or the base64 of {size} bytes, not {shown(value)}")
        for field, value, size, read in (
            ("traceId", trace_id, 16, trace_hex),
            ("spanId", span_id, 8, span_hex),
        )
        if read is None
    ]
    if trace_hex is None or span_hex is None:
        for field, problem in bad:
            ids.refuse(field, problem, where)
        return None
    parent = item.get("parentSpanId")
    parent_hex = ids.read(parent, 8) if isinstance(parent, str) and parent else None
    ids.counted()
    attributes = item.get("attributes", [])
    name = item.get("name")
    return Span(
        where=f"{where}: trace {trace_hex}",
        trace=trace_hex,
        span=span_hex,
        parent=parent_hex,
        name=name if isinstance(name, str) else "",
        start=_nanos(item.get("startTimeUnixNano")),
        end=_nanos(item.get("endTimeUnixNano")),
        attrs=_attributes(attributes) if isinstance(attributes, list) else {},
        error=_error_of(item.get("status")),
    )
