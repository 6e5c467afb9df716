"""An OTLP JSON trace file's spans (``judge.inputs.foreign.spans``): one document reads as its
lines do, each span located on its own line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.pipeline.imports import import_foreign
from tests.inputs.foreign.samples import DATA, lines


def test_a_trace_file_written_as_one_document_reads_as_its_lines_do(tmp_path: Path) -> None:
    batches = lines(DATA / "otel.jsonl")
    document = {"resourceSpans": [rs for batch in batches for rs in batch["resourceSpans"]]}
    source = tmp_path / "traces.json"
    source.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    from_document = import_foreign("otel", source, tmp_path / "a")
    from_lines = import_foreign("otel", DATA / "otel.jsonl", tmp_path / "b")
    for a, b in (
        (from_document.questions, from_lines.questions),
        (from_document.corpus, from_lines.corpus),
    ):
        assert a.read_bytes() == b.read_bytes()
    assert lines(from_document.run)[1:] == lines(from_lines.run)[1:]
    # a bad span in a document is located on its own line
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["attributes"] = [a for a in spans[0]["attributes"] if a["key"] != "input.value"]
    source.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    line = next(
        n
        for n, text in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        if spans[0]["spanId"] in text
    )
    with pytest.raises(InputError) as caught:
        import_foreign("otel", source, tmp_path / "c")
    assert caught.value.problems[0].startswith(f"{source}:{line}: trace {1:032x}: span 'rag.query'")
