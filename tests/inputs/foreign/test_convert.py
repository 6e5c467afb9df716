"""The conversion of another tool's records (``judge.inputs.foreign.convert``): ids from content,
types and ids from columns, out of scope from the source, relevant chunks, what the system saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.config import load_config
from judge.errors import InputError
from judge.inputs.foreign.convert import chunk_id_of, question_id_of
from judge.pipeline.imports import import_foreign
from tests.inputs.foreign.samples import DATA, lines, write_rows


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
    source = write_rows(tmp_path / "cases.jsonl", rows)
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
    write_rows(source, rows)
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


def test_relevant_chunks_for_an_out_of_scope_question_are_refused(tmp_path: Path) -> None:
    """Relevant chunks for a question its answerable column calls out of scope: refused (the
    explicit column and the labels disagree, and one of them would be lost)."""
    rows = [
        {
            "input": "Q",
            "actual_output": "I don't know.",
            "retrieval_context": ["x"],
            "context": ["x"],
            "ok": False,
        },
    ]
    source = write_rows(tmp_path / "d.jsonl", rows)
    with pytest.raises(InputError, match=r"d.jsonl:1: relevant chunks given .* out of scope"):
        import_foreign("deepeval", source, tmp_path / "a", answerable_column="ok")


#: A reference answer that says what the product does not do: no refusal (issue 33).
DAY_PASS = "No. The Day Pass does not cover the e-bike surcharge; it is charged per ride."
SURCHARGE = "E-bikes cost a surcharge of 1 euro per ride, on every pass including the Day Pass."


@pytest.mark.parametrize("tool", ["ragas", "deepeval"])
def test_a_reference_saying_what_the_product_does_not_cover_imports(
    tmp_path: Path, tool: str
) -> None:
    question = "Does the Day Pass cover e-bikes?"
    row = (
        {
            "user_input": question,
            "retrieved_contexts": [SURCHARGE],
            "reference_contexts": [SURCHARGE],
            "response": DAY_PASS,
            "reference": DAY_PASS,
        }
        if tool == "ragas"
        else {
            "input": question,
            "actual_output": DAY_PASS,
            "expected_output": DAY_PASS,
            "retrieval_context": [SURCHARGE],
            "context": [SURCHARGE],
        }
    )
    imported = import_foreign(tool, write_rows(tmp_path / "s.jsonl", [row]), tmp_path / "out")
    (first,) = lines(imported.questions)
    assert (first["type"], first["answerable"]) == ("factual", True)
    assert first["relevant_chunks"] == [chunk_id_of(SURCHARGE)]
    assert imported.warnings == []


def test_a_refusal_reference_with_relevant_chunks_warns_and_imports_them(tmp_path: Path) -> None:
    """The explicit labels decide over a refusal inferred from the reference; the warning names
    the phrase and where it matched."""
    rows = [
        {
            "user_input": "Q",
            "retrieved_contexts": ["x"],
            "reference_contexts": ["x"],
            "response": "I don't know.",
            "reference": "I don't know.",
        },
        {
            "user_input": "Q2",
            "retrieved_contexts": ["y"],
            "response": "A",
            "reference": "わかりません。",
        },
    ]
    source = write_rows(tmp_path / "d.jsonl", rows)
    imported = import_foreign("ragas", source, tmp_path / "a")
    assert [(q["type"], q["relevant_chunks"]) for q in lines(imported.questions)] == [
        ("factual", [chunk_id_of("x")]),
        ("out_of_scope", []),
    ]
    assert imported.warnings == [
        f'{source}:1: the reference answer reads as a refusal ("i don\'t know" at the start of '
        "sentence 1), but relevant chunks are given (reference contexts); imported as 'factual' "
        "with them (a type or answerable column decides)"
    ]


def test_columns_that_disagree_warn_and_the_one_saying_out_of_scope_decides(
    tmp_path: Path,
) -> None:
    rows = [
        {
            "input": "Q1",
            "actual_output": "A",
            "retrieval_context": ["x"],
            "kind": "out_of_scope",
            "ok": True,
        },
        {
            "input": "Q2",
            "actual_output": "A",
            "retrieval_context": ["x"],
            "kind": "factual",
            "ok": False,
        },
        {
            "input": "Q3",
            "actual_output": "A",
            "retrieval_context": ["x"],
            "kind": "factual",
            "ok": True,
            "expected_output": "The manual does not cover this.",
        },
    ]
    source = write_rows(tmp_path / "c.jsonl", rows)
    imported = import_foreign(
        "deepeval", source, tmp_path / "a", type_column="kind", answerable_column="ok"
    )
    assert [(q["type"], q["answerable"]) for q in lines(imported.questions)] == [
        ("out_of_scope", False),
        ("out_of_scope", False),
        ("factual", True),
    ]
    assert imported.warnings == [
        f"{source}:1: the answerable column says true, but the type column says 'out_of_scope'; "
        "imported as out of scope ('out_of_scope'), as the type column says",
        f"{source}:2: the answerable column says false, but the type column says 'factual'; "
        "imported as out of scope ('out_of_scope'), as the answerable column says",
        f'{source}:3: the reference answer reads as a refusal ("does not cover" at the start of '
        "sentence 1), but the type column says 'factual'; imported as 'factual'",
    ]
    # Without a type column, the answerable column decides over a Japanese refusal reference.
    row = {"input": "Q4", "actual_output": "A", "retrieval_context": ["x"], "ok": True}
    row["expected_output"] = "申し訳ありませんが、ヘルプに記載がありません。"
    source = write_rows(tmp_path / "j.jsonl", [row])
    imported = import_foreign("deepeval", source, tmp_path / "b", answerable_column="ok")
    assert [q["type"] for q in lines(imported.questions)] == ["factual"]
    assert imported.warnings == [
        f'{source}:1: the reference answer reads as a refusal ("記載がありません" at the start of '
        "sentence 1), but the answerable column says true; imported as 'factual'"
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
    run = lines(import_foreign("ragas", write_rows(tmp_path / "s.jsonl", rows), tmp_path / "b").run)
    chunk = chunk_id_of("Hold Reset.")
    assert run[1]["retrieved"] == [{"chunk_id": chunk}]
    assert run[2]["retrieved"] == [{"chunk_id": chunk, "text": "Hold Reset."}]
