"""OpenInference traces read into records (``judge.inputs.foreign.otel``): JSON values unwrapped,
the root's question, the ranking, the answer or the failure; bad spans and traces located."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.errors import InputError
from judge.inputs.foreign.convert import chunk_id_of, question_id_of
from judge.pipeline.evaluate import evaluate
from judge.pipeline.imports import import_foreign
from tests.inputs.foreign.samples import DATA, config_for, lines


def _trace(
    *spans: dict[str, Any],
) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def _span(
    sid: str, parent: str, kind: str | None, attrs: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    attributes = (
        [{"key": "openinference.span.kind", "value": {"stringValue": kind}}] if kind else []
    )
    for key, value in attrs.items():
        typed = (
            {"boolValue": value}
            if isinstance(value, bool)
            else {"doubleValue": value}
            if isinstance(value, float)
            else {"stringValue": value}
        )
        attributes.append({"key": key, "value": typed})
    return {
        "traceId": "ab" * 16,
        "spanId": sid * 16,
        "parentSpanId": parent and parent * 16,
        "name": f"s{sid}",
        "startTimeUnixNano": str(int(sid, 16)),
        "endTimeUnixNano": str(100 + int(sid, 16)),
        "attributes": attributes,
        **extra,
    }


def test_bad_spans_are_reported_located_by_line_and_trace(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        import_foreign("otel", DATA / "otel-bad.jsonl", tmp_path / "out")
    where = f"{DATA / 'otel-bad.jsonl'}:2: trace {4:032x}"
    assert caught.value.problems == [
        f"{where}: span 'rag.query' (0000000400000001), the root: input.value: missing; the "
        "question is the root span's input",
        f"{where}: span 'retrieve' (0000000400000002): retrieval.documents.0.document.content: "
        "missing or empty; the judge reads the documents' text (record it: OpenInference's "
        "hide-outputs settings must be off)",
    ]


def test_traces_unwrap_json_values_and_join_spans_from_several_lines(tmp_path: Path) -> None:
    imported = import_foreign("otel", DATA / "otel.jsonl", tmp_path / "a")
    questions = lines(imported.questions)
    run = lines(imported.run)
    # trace 2 records its input and output as JSON (input.mime_type application/json)
    assert questions[1]["question"] == "How many satellites can I add?"
    assert run[2]["answer"] == "Up to 4 Kestrel MX satellites."
    # trace 1's retriever span is on the file's second line, its root and LLM on the first
    assert [(r["score"]) for r in run[1]["retrieved"]] == [0.91, 0.55]
    assert questions[2]["question"] == "年払いにしたらいくらですか？"
    assert "年払い" in imported.questions.read_text(encoding="utf-8")  # real characters
    corpus = lines(imported.corpus)
    assert corpus[0]["doc"] == "firmware/current"  # the document.id


def test_a_trace_answer_prefers_the_root_output_then_the_last_llm_and_a_reranker_ranks(
    tmp_path: Path,
) -> None:
    trace = _trace(
        _span("a", "", None, {"http.route": "/ask"}),  # an HTTP span above the RAG system
        _span(
            "1",
            "a",
            "CHAIN",
            {"input.value": "Can I add a TP-Link Deco?", "golden.type": "negative"},
        ),
        _span(
            "2",
            "1",
            "RETRIEVER",
            {
                "retrieval.documents.0.document.content": "Only Kestrel MX.",
                "retrieval.documents.1.document.content": "Up to 4.",
            },
        ),
        _span(
            "3",
            "1",
            "RERANKER",
            {
                "reranker.output_documents.0.document.content": "Up to 4.",
                "reranker.output_documents.0.document.score": 0.2,
                "reranker.output_documents.1.document.content": "Only Kestrel MX.",
                "reranker.output_documents.1.document.score": 0.9,
            },
        ),
        _span("4", "1", "LLM", {"llm.output_messages.0.message.content": "No, only Kestrel MX."}),
        _span("5", "1", "LLM", {"output.value": "A check of the answer: fine."}),
    )
    source = tmp_path / "t.jsonl"
    source.write_text(json.dumps(trace) + "\n", encoding="utf-8")
    imported = import_foreign("otel", source, tmp_path / "a", type_column="golden.type")
    run = lines(imported.run)
    assert run[1]["answer"] == "A check of the answer: fine."  # no root output: the last LLM
    assert [r["chunk_id"] for r in run[1]["retrieved"]] == [
        chunk_id_of("Up to 4."),
        chunk_id_of("Only Kestrel MX."),
    ]
    assert lines(imported.questions)[0]["type"] == "negative"
    root = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    root["attributes"].append({"key": "output.value", "value": {"stringValue": "No."}})
    source.write_text(json.dumps(trace) + "\n", encoding="utf-8")
    run = lines(import_foreign("otel", source, tmp_path / "b").run)
    assert run[1]["answer"] == "No."  # the system's final answer, after its last LLM call


def test_a_failed_trace_is_a_failed_question_not_a_bad_one(tmp_path: Path) -> None:
    trace = _trace(
        _span(
            "1",
            "",
            "CHAIN",
            {"input.value": "What is WPA3?"},
            status={"code": 2, "message": "TimeoutError: generator"},
        ),
        _span("2", "1", "RETRIEVER", {"retrieval.documents.0.document.content": "WPA3 is on."}),
    )
    ok = _trace(
        _span("1", "", "CHAIN", {"input.value": "Is WPA3 on?", "output.value": "Yes."}),
    )
    ok["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "cd" * 16
    source = tmp_path / "t.jsonl"
    source.write_text(json.dumps(trace) + "\n" + json.dumps(ok) + "\n", encoding="utf-8")
    imported = import_foreign("otel", source, tmp_path / "a", relative_to=tmp_path)
    assert imported.failed == 1
    run = lines(imported.run)
    assert run[0]["run_meta"]["failed"] == {
        question_id_of("What is WPA3?"): "span 's1' (1111111111111111): TimeoutError: generator"
    }
    assert [r["id"] for r in run[1:]] == [question_id_of("Is WPA3 on?")]
    assert imported.warnings == [
        f"{source}: 1 trace(s) have no RETRIEVER (or RERANKER) span with documents: their "
        "ranking is empty"
    ]
    result = evaluate(config_for(imported, tmp_path), backend="lexical")
    assert sorted(row.status for row in result.report.questions) == ["adapter_failed", "ok"]


def test_a_trace_with_two_roots_or_no_answer_is_refused(tmp_path: Path) -> None:
    trace = _trace(
        _span("1", "", "LLM", {"input.value": "Q"}),
        _span("2", "", "RETRIEVER", {"input.value": "Q"}),
    )
    source = tmp_path / "t.jsonl"
    source.write_text(json.dumps(trace) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_foreign("otel", source, tmp_path / "a")
    assert caught.value.problems == [
        f"{source}:1: trace {'ab' * 16}: 2 OpenInference spans without a parent span (span 's1' "
        "(1111111111111111), span 's2' (2222222222222222)); a question is one trace with one "
        "root span (a CHAIN or AGENT around the retriever and the LLM): export whole traces"
    ]
    source.write_text(
        json.dumps(_trace(_span("1", "", "CHAIN", {"input.value": "Q"}))) + "\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"no answer: neither the root span's output\.value"):
        import_foreign("otel", source, tmp_path / "a")
    source.write_text('{"resourceSpans": "x"}\n{"other": 1}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_foreign("otel", source, tmp_path / "a")
    assert [p.split(": ")[0] for p in caught.value.problems] == [f"{source}:1", f"{source}:2"]
