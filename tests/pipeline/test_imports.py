"""``judge import``: files other tools write, imported into a golden set, corpus and run that
``judge check`` accepts and the lexical judge judges; located problems; stable re-imports.

The sample files under ``tests/data/foreign/`` are written the way each tool's own writer
writes them (docs/imports.md cites the writers): Ragas' ``to_jsonl`` and ``to_csv``
(``csv.DictWriter``, a list cell as ``str(list)``), DeepEval's ``save_as`` as JSON, CSV and
JSONL (lists joined with ``|``), and OTLP JSON lines as the collector's file exporter writes
them, with OpenInference attributes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config, load_config
from judge.errors import InputError
from judge.inputs.foreign.convert import chunk_id_of, question_id_of
from judge.pipeline.check import check
from judge.pipeline.evaluate import evaluate
from judge.pipeline.imports import ImportedFiles, import_foreign

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "foreign"

#: (tool, file, questions per type, out-of-scope question, chunks): counted by hand from the files.
SAMPLES = [
    ("ragas", "ragas.jsonl", {"factual": 3, "out_of_scope": 1}, "Does it work with Starlink?", 5),
    ("ragas", "ragas.csv", {"factual": 3, "out_of_scope": 1}, "Windows版はありますか", 4),
    (
        "deepeval",
        "deepeval.json",
        {"factual": 3, "out_of_scope": 1},
        "Can I get a trade-in discount?",
        5,
    ),
    (
        "deepeval",
        "deepeval.csv",
        {"factual": 3, "out_of_scope": 1},
        "Can I get a trade-in discount?",
        5,
    ),
    (
        "deepeval",
        "deepeval.jsonl",
        {"factual": 3, "out_of_scope": 1},
        "Can I get a trade-in discount?",
        5,
    ),
    ("otel", "otel.jsonl", {"factual": 3, "out_of_scope": 0}, None, 5),
]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def config_for(imported: ImportedFiles, folder: Path) -> Config:
    """A judge.toml beside the imported folder, its [data] table the one the import printed."""
    toml = folder / "judge.toml"
    toml.write_text(
        "\n".join(imported.data_lines)
        + f'\n\n[judge]\ncache_path = "{folder / "cache.sqlite3"}"\n'
        + f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
        + f'\n[reports]\ndir = "{folder / "reports"}"\n',
        encoding="utf-8",
    )
    return load_config(toml)


@pytest.mark.parametrize(("tool", "name", "per_type", "out_of_scope", "chunks"), SAMPLES)
def test_each_sample_imports_into_files_check_accepts_and_the_lexical_judge_judges(
    tmp_path: Path,
    tool: Any,
    name: str,
    per_type: dict[str, int],
    out_of_scope: str | None,
    chunks: int,
) -> None:
    imported = import_foreign(tool, DATA / name, tmp_path / "imported", relative_to=tmp_path)
    assert imported.per_type == per_type
    assert imported.chunks == chunks
    assert imported.data_lines[:4] == [
        "[data]",
        'questions = "imported/questions.jsonl"',
        'corpus = "imported/corpus.jsonl"',
        'run = "imported/run.jsonl"',
    ]
    config = config_for(imported, tmp_path)
    checked = check(config)
    assert sum(checked.per_type.values()) == 4 if tool != "otel" else 3
    questions = lines(imported.questions)
    oos = [q for q in questions if not q["answerable"]]
    if out_of_scope is None:
        assert oos == []
    else:
        assert [q["question"] for q in oos] == [out_of_scope]
        assert oos[0]["type"] == "out_of_scope" and oos[0]["relevant_chunks"] == []
    result = evaluate(config, backend="lexical")
    statuses = [row.status for row in result.report.questions]
    assert statuses == ["ok"] * len(questions)


def test_the_imported_files_hold_what_the_source_says(tmp_path: Path) -> None:
    imported = import_foreign("ragas", DATA / "ragas.jsonl", tmp_path / "out")
    firmware = (
        "The current firmware is v2.1.4. The router checks for updates every night at 3 a.m. "
        "and installs them automatically."
    )
    first = lines(imported.questions)[0]
    assert first == {
        "id": question_id_of("whats the current firmware version?"),
        "type": "factual",
        "question": "whats the current firmware version?",
        "relevant_chunks": [chunk_id_of(firmware)],
        "answerable": True,
        "reference_answer": "v2.1.4.",
    }
    run = lines(imported.run)
    assert run[0] == {
        "run_meta": {
            "system": "ragas import",
            "notes": "imported by 'judge import ragas' from ragas.jsonl",
        }
    }
    assert run[1]["retrieved"][0] == {"chunk_id": chunk_id_of(firmware)}
    corpus = {c["chunk_id"]: c for c in lines(imported.corpus)}
    # one chunk for the text retrieved for three questions; its own document without a doc id
    assert corpus[chunk_id_of(firmware)] == {
        "chunk_id": chunk_id_of(firmware),
        "doc": chunk_id_of(firmware),
        "text": firmware,
    }
    assert chunk_id_of(firmware) == "c-7338bba27f3a"  # pinned: the id scheme must not drift


def test_a_chunk_has_one_id_whichever_tool_it_came_from(tmp_path: Path) -> None:
    ids = [
        {c["chunk_id"] for c in lines(import_foreign(tool, DATA / name, tmp_path / tool).corpus)}
        for tool, name in (
            ("ragas", "ragas.jsonl"),
            ("deepeval", "deepeval.json"),
            ("otel", "otel.jsonl"),
        )
    ]
    assert "c-7338bba27f3a" in ids[0] & ids[2]  # the firmware chunk, from Ragas and from a trace
    assert ids[0] & ids[1]  # the mesh and bands chunks, from Ragas and DeepEval


@pytest.mark.parametrize(("tool", "name"), [(s[0], s[1]) for s in SAMPLES])
def test_a_reimport_writes_the_same_files_byte_for_byte(
    tmp_path: Path, tool: Any, name: str
) -> None:
    first = import_foreign(tool, DATA / name, tmp_path / "a")
    before = {p: p.read_bytes() for p in (first.questions, first.corpus, first.run)}
    again = import_foreign(tool, DATA / name, tmp_path / "a", replace=True)
    assert {p: p.read_bytes() for p in (again.questions, again.corpus, again.run)} == before
    elsewhere = import_foreign(tool, DATA / name, tmp_path / "b")
    assert elsewhere.questions.read_bytes() == before[first.questions]


def test_existing_files_are_refused_unless_replace_and_left_as_they_were(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.jsonl").write_text("mine\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", DATA / "ragas.jsonl", out)
    assert caught.value.problems == [
        f"{out / 'run.jsonl'}: exists; give --replace to overwrite it, or another --out"
    ]
    assert (out / "run.jsonl").read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in out.iterdir()) == ["run.jsonl"]
    file = tmp_path / "a-file"
    file.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="not a folder"):
        import_foreign("ragas", DATA / "ragas.jsonl", file)


def test_bad_rows_are_reported_at_once_located_and_nothing_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", DATA / "ragas-bad.jsonl", out)
    path = DATA / "ragas-bad.jsonl"
    assert [p.split(": ", 2)[:2] for p in caught.value.problems] == [
        [f"{path}:2", "response"],
        [f"{path}:3", "retrieved_contexts"],
        [f"{path}:4", "retrieved_contexts[1]"],
    ]
    assert "run the questions through your system first" in caught.value.problems[0]
    assert not out.exists()


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


def test_a_csv_row_after_a_cell_of_several_lines_is_located_on_its_own_line(tmp_path: Path) -> None:
    source = tmp_path / "dataset.csv"
    source.write_text(
        "user_input,retrieved_contexts,response,reference\n"
        '"Q one","[\'first line\\nsecond\']",A one,R\n'  # a Python-escaped newline: one line
        '"Q two","[\'a chunk\']","an answer\nover two lines",R\n'  # a newline in a cell
        '"Q three","not a list",A three,R\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", source, tmp_path / "out")
    assert caught.value.problems == [
        f"{source}:5: retrieved_contexts: must be a list written as ['first', 'second'] "
        '(Ragas\' to_csv) or as a JSON array, not "not a list"'
    ]


def test_out_of_scope_from_an_empty_reference_only_where_some_reference_is_given(
    tmp_path: Path,
) -> None:
    rows = [
        {"user_input": "Q1", "retrieved_contexts": ["x"], "response": "A1", "reference": ""},
        {"user_input": "Q2", "retrieved_contexts": ["y"], "response": "A2"},
    ]
    source = tmp_path / "none.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # no reference anywhere: an empty one says nothing about scope
    assert import_foreign("ragas", source, tmp_path / "a").per_type == {
        "factual": 2,
        "out_of_scope": 0,
    }
    rows.append(
        {"user_input": "Q3", "retrieved_contexts": ["z"], "response": "A3", "reference": "R"}
    )
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    questions = lines(import_foreign("ragas", source, tmp_path / "b").questions)
    assert [(q["question"], q["type"], q["relevant_chunks"]) for q in questions] == [
        ("Q1", "out_of_scope", []),
        ("Q2", "factual", None),  # no reference at all: not known, so answerable
        ("Q3", "factual", None),
    ]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_types_and_ids_from_columns_checked_against_the_configuration(tmp_path: Path) -> None:
    rows = [
        {
            "input": "How do I pair?",
            "actual_output": "Press Pair.",
            "retrieval_context": ["Pair."],
            "kind": "procedural",
            "case": "pair-1",
            "ok": True,
        },
        {
            "input": "Alexa?",
            "actual_output": "Not covered.",
            "retrieval_context": ["Pair."],
            "kind": "factual",
            "case": "alexa",
            "ok": False,
        },
        {
            "input": "Price?",
            "actual_output": "$99.",
            "retrieval_context": ["$99."],
            "kind": "pricing",
            "case": "price",
            "ok": True,
        },
    ]
    source = _write(tmp_path / "cases.jsonl", rows)
    imported = import_foreign(
        "deepeval",
        source,
        tmp_path / "a",
        type_column="kind",
        id_column="case",
        answerable_column="ok",
    )
    questions = lines(imported.questions)
    assert [(q["id"], q["type"], q["answerable"]) for q in questions] == [
        ("pair-1", "procedural", True),
        ("alexa", "out_of_scope", False),
        ("price", "pricing", True),
    ]
    assert imported.question_types == ("procedural", "out_of_scope", "pricing")
    toml = tmp_path / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "q.jsonl"\ncorpus = "c.jsonl"\n'
        'question_types = ["factual", "procedural", "unanswerable"]\n'
        'out_of_scope_types = ["unanswerable"]\n',
        encoding="utf-8",
    )
    config = load_config(toml)
    with pytest.raises(InputError) as caught:
        import_foreign("deepeval", source, tmp_path / "b", config=config, type_column="kind")
    assert caught.value.problems == [
        f"{source}:3: type column: 'pricing' is not one of the configured data.question_types "
        "(factual, procedural, unanswerable); add it to judge.toml or rename it in the file"
    ]
    rows[2]["kind"] = "factual"
    _write(source, rows)
    imported = import_foreign(
        "deepeval",
        source,
        tmp_path / "c",
        config=config,
        type_column="kind",
        answerable_column="ok",
    )
    # the configuration's out-of-scope type, and its types in its order
    assert [q["type"] for q in lines(imported.questions)] == [
        "procedural",
        "unanswerable",
        "factual",
    ]
    assert imported.data_lines[-2:] == [
        'question_types = ["factual", "procedural", "unanswerable"]',
        'out_of_scope_types = ["unanswerable"]',
    ]
    assert imported.data_lines[1] == 'questions = "c/questions.jsonl"'  # beside that judge.toml


def test_column_problems_are_located(tmp_path: Path) -> None:
    rows = [
        {"input": "Q1", "actual_output": "A", "retrieval_context": [], "case": "a b", "ok": True},
        {"input": "Q1", "actual_output": "A", "retrieval_context": [], "case": "b", "ok": True},
        {"input": "Q2", "actual_output": "A", "retrieval_context": [], "case": "b", "ok": True},
        {"input": "Q3", "actual_output": "A", "retrieval_context": [], "case": 3, "ok": "yes"},
    ]
    source = _write(tmp_path / "cases.jsonl", rows)
    with pytest.raises(InputError) as caught:
        import_foreign("deepeval", source, tmp_path / "a", id_column="case", answerable_column="ok")
    problems = caught.value.problems
    assert [p.split(": ")[0] for p in problems] == [f"{source}:{n}" for n in (1, 3, 4)]
    assert problems[0].startswith(f"{source}:1: id column: 'a b' contains U+0020 (a space)")
    assert problems[1] == (
        f"{source}:3: the same id as {source}:2; a golden set asks each question once: drop "
        "one, or name an id column (--id-column)"
    )
    assert problems[2] == f'{source}:4: ok (--answerable-column): must be true or false, not "yes"'
    with pytest.raises(InputError) as caught:
        import_foreign("deepeval", source, tmp_path / "a", type_column="kind")
    assert caught.value.problems[0].startswith(
        f"{source}: --type-column kind: no such column (the file has: "
    )
    with pytest.raises(InputError) as caught:  # without an id column: one question text twice
        import_foreign("deepeval", _write(source, rows[1:3] + rows[1:2]), tmp_path / "a")
    assert caught.value.problems == [
        f"{source}:3: the same question (the same text) as {source}:1; a golden set asks each "
        "question once: drop one, or name an id column (--id-column)"
    ]


def test_relevant_chunks_for_an_out_of_scope_question_are_refused(tmp_path: Path) -> None:
    rows = [
        {
            "user_input": "Q",
            "retrieved_contexts": ["x"],
            "reference_contexts": ["x"],
            "response": "I don't know.",
            "reference": "I don't know.",
        },
    ]
    source = _write(tmp_path / "d.jsonl", rows)
    with pytest.raises(InputError, match=r"d.jsonl:1: relevant chunks given .* out of scope"):
        import_foreign("ragas", source, tmp_path / "a")


def test_unknown_columns_and_unretrieved_references_are_warned_about(tmp_path: Path) -> None:
    rows = [
        {
            "user_input": "Q1",
            "retrieved_contexts": ["a b"],
            "reference_contexts": ["other text"],
            "response": "A1",
            "reference": "R",
            "faithfulness": 0.5,
            "refrence": "typo",
        },
    ]
    source = _write(tmp_path / "result.jsonl", rows)
    imported = import_foreign("ragas", source, tmp_path / "a")
    assert imported.warnings == [
        f"{source}: ignored column(s) that are not in the Ragas schema: faithfulness, refrence (a "
        "misspelt one? docs/imports.md lists what is read)",
        f"{source}: none of the relevant chunks (reference contexts) is among the retrieved "
        "texts, so every recall will be 0: were they cut from other chunks than the index's? "
        "Chunk ids come from the text (docs/imports.md)",
    ]


def test_the_same_text_spaced_otherwise_is_one_chunk_and_the_run_keeps_what_was_seen(
    tmp_path: Path,
) -> None:
    imported = import_foreign("ragas", DATA / "ragas.csv", tmp_path / "a")
    assert imported.warnings == [
        f"{DATA / 'ragas.csv'}: 1 time(s) a ranking listed one text twice (the same after "
        "normalising); kept its first, best rank"
    ]
    rows = [
        {"user_input": "Q1", "retrieved_contexts": ["Hold  Reset."], "response": "A"},
        {"user_input": "Q2", "retrieved_contexts": ["Hold Reset."], "response": "B"},
    ]
    run = lines(import_foreign("ragas", _write(tmp_path / "s.jsonl", rows), tmp_path / "b").run)
    chunk = chunk_id_of("Hold Reset.")
    assert run[1]["retrieved"] == [{"chunk_id": chunk}]
    assert run[2]["retrieved"] == [{"chunk_id": chunk, "text": "Hold Reset."}]


def test_multi_turn_deepeval_rows_are_refused(tmp_path: Path) -> None:
    rows = [{"scenario": "A user asks twice", "turns": [], "expected_outcome": "help"}]
    source = _write(tmp_path / "convo.jsonl", rows)
    with pytest.raises(InputError, match=r"convo.jsonl:1: scenario: a multi-turn sample"):
        import_foreign("deepeval", source, tmp_path / "a")


def test_parquet_without_an_engine_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pandas as pd

    def no_engine(*_: object, **__: object) -> None:
        # What pandas raises when neither pyarrow nor fastparquet is installed (pyarrow is,
        # here: the Ray extra brings it), so the path runs on every machine.
        raise ImportError("Unable to find a usable engine; tried using: 'pyarrow', 'fastparquet'.")

    monkeypatch.setattr(pd, "read_parquet", no_engine)
    source = tmp_path / "dataset.parquet"
    source.write_bytes(b"PAR1")
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", source, tmp_path / "a")
    assert caught.value.problems == [
        f"{source}: reading Parquet needs pyarrow (or fastparquet), which is not installed "
        "here; install it into judge's environment (pip install pyarrow), or save the dataset "
        "as JSONL or CSV (Ragas: EvaluationDataset.to_jsonl)"
    ]


def test_parquet_is_read(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pandas as pd

    rows = [
        json.loads(line) for line in (DATA / "ragas.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    source = tmp_path / "dataset.parquet"
    pd.DataFrame(rows).to_parquet(source)
    from_parquet = import_foreign("ragas", source, tmp_path / "a")
    from_jsonl = import_foreign("ragas", DATA / "ragas.jsonl", tmp_path / "b")
    assert from_parquet.questions.read_bytes() == from_jsonl.questions.read_bytes()


def test_an_unknown_file_kind_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "dataset.xlsx"
    source.write_bytes(b"")
    with pytest.raises(InputError, match=r"give a \.jsonl, \.json, \.csv or \.parquet file"):
        import_foreign("ragas", source, tmp_path / "a")


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
