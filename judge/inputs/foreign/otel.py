"""OpenTelemetry traces with OpenInference attributes, read into one record per trace: the
root span's input as the question, the retriever's (or reranker's) documents as the ranking,
the root's output (or the last LLM span's) as the answer."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.errors import InputError
from judge.inputs.foreign.records import (
    NO_COLUMNS,
    Columns,
    ForeignRead,
    ForeignRecord,
    Retrieved,
    shown,
)
from judge.inputs.foreign.spans import Span, read_spans
from judge.io.text import DEFAULT_MAX_FILE_MB

#: Keys under which a JSON ``input.value`` / ``output.value`` holds the text, in order.
QUESTION_KEYS = ("question", "query", "input", "user_input", "query_str", "prompt", "message")
ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
_DOCUMENT = re.compile(r"^(?P<prefix>.+)\.(?P<index>\d+)\.document\.(?P<field>content|id|score)$")


def read_otel(
    path: Path, columns: Columns = NO_COLUMNS, max_mb: float = DEFAULT_MAX_FILE_MB
) -> ForeignRead:
    """One record per trace that has OpenInference spans: its root span's input as the
    question, its documents as the ranking, its answer (``_answer``); traces with no
    OpenInference span (an HTTP call in the same file) are skipped with a warning."""
    problems: list[str] = []
    notes: list[str] = []
    spans = read_spans(path, max_mb, problems, notes)
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
    warnings = notes
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
    if not tops:  # every OpenInference span lies below another: their parents form a loop
        looped = [span for span in spans if span.kind]
        problems.append(
            f"{looped[0].where}: no root span: every OpenInference span has an OpenInference "
            f"parent ({', '.join(f'{s.label()} under {s.parent}' for s in looped[:4])}), so "
            "the parents form a loop; export the trace again (a parentSpanId names the span "
            "that started this one)"
        )
        return None
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
            f"{side}.value: JSON with no text under any of {', '.join(keys)} ({shown(value)})"
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
    """The record of one trace, or None with its problems: the root span's question, the
    ranking, the answer (or why the trace failed) and the named attributes of the root."""
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
    retrieved = _ranking(ranked, problems)
    answer, failure = _answer_or_failure(root, ranked, problems)
    values = _root_columns(root, columns, problems)
    answerable = _root_flag(root, columns, problems)
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


def _ranking(ranked: list[Span], problems: list[str]) -> list[Retrieved]:
    """The trace's ranking: the RERANKER spans' output documents when there are any (what the
    generator was given), else the RETRIEVER spans' documents; spans in start order."""
    rerankers = [s for s in ranked if s.kind == "RERANKER"]
    sources = (
        [(s, "reranker.output_documents") for s in rerankers]
        if rerankers
        else [(s, "retrieval.documents") for s in ranked if s.kind == "RETRIEVER"]
    )
    return [doc for span, prefix in sources for doc in _documents(span, prefix, problems)]


def _answer_or_failure(
    root: Span, ranked: list[Span], problems: list[str]
) -> tuple[str | None, str | None]:
    """The trace's answer (``_answer``), or, without one, the first span that ended in ERROR as
    the question's failure; a trace with neither is a problem."""
    answer, notes = _answer(root, ranked)
    if answer is not None:
        return answer, None
    failed = [s for s in ranked if s.error]
    if failed:
        return None, f"{failed[0].label()}: {failed[0].error}"
    problems.extend(f"{root.where}: {note}" for note in notes)
    problems.append(
        f"{root.where}: no answer: neither the root span's output.value nor an LLM "
        "span's llm.output_messages or output.value holds text"
    )
    return None, None


def _root_columns(root: Span, columns: Columns, problems: list[str]) -> dict[str, Any]:
    """Option → value of the named type and id attributes of the root span; one that is
    missing or not a string (or number) is a problem."""
    named = columns.named()
    values = {
        option: root.attrs.get(column)
        for option, column in named.items()
        if option != "--answerable-column"
    }
    for option, value in values.items():
        if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
            problems.append(
                f"{root.where}: {root.label()}: {named[option]} ({option}): missing or not a "
                "string attribute of the root span"
            )
    return values


def _root_flag(root: Span, columns: Columns, problems: list[str]) -> bool | None:
    """The named answerable attribute of the root span (None when none is named); one that is
    not a bool is a problem."""
    if columns.answerable_column is None:
        return None
    flag = root.attrs.get(columns.answerable_column)
    if isinstance(flag, bool):
        return flag
    problems.append(
        f"{root.where}: {root.label()}: {columns.answerable_column} "
        "(--answerable-column): must be a bool attribute of the root span"
    )
    return None
