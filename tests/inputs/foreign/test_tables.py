"""Ragas and DeepEval tables read into records (``judge.inputs.foreign.tables``): bad rows and
columns located, multi-turn rows refused, unknown columns named in a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.errors import InputError
from judge.pipeline.imports import import_foreign
from tests.inputs.foreign.samples import DATA, write_rows


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


def test_column_problems_are_located(tmp_path: Path) -> None:
    rows = [
        {"input": "Q1", "actual_output": "A", "retrieval_context": [], "case": "a b", "ok": True},
        {"input": "Q1", "actual_output": "A", "retrieval_context": [], "case": "b", "ok": True},
        {"input": "Q2", "actual_output": "A", "retrieval_context": [], "case": "b", "ok": True},
        {"input": "Q3", "actual_output": "A", "retrieval_context": [], "case": 3, "ok": "yes"},
    ]
    source = write_rows(tmp_path / "cases.jsonl", rows)
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
        import_foreign("deepeval", write_rows(source, rows[1:3] + rows[1:2]), tmp_path / "a")
    assert caught.value.problems == [
        f"{source}:3: the same question (the same text) as {source}:1; a golden set asks each "
        "question once: drop one, or name an id column (--id-column)"
    ]


def test_multi_turn_deepeval_rows_are_refused(tmp_path: Path) -> None:
    rows = [{"scenario": "A user asks twice", "turns": [], "expected_outcome": "help"}]
    source = write_rows(tmp_path / "convo.jsonl", rows)
    with pytest.raises(InputError, match=r"convo.jsonl:1: scenario: a multi-turn sample"):
        import_foreign("deepeval", source, tmp_path / "a")


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
    source = write_rows(tmp_path / "result.jsonl", rows)
    imported = import_foreign("ragas", source, tmp_path / "a")
    assert imported.warnings == [
        f"{source}: ignored column(s) that are not in the Ragas schema: faithfulness, refrence (a "
        "misspelt one? docs/imports.md lists what is read)",
        f"{source}: none of the relevant chunks (reference contexts) is among the retrieved "
        "texts, so every recall will be 0: were they cut from other chunks than the index's? "
        "Chunk ids come from the text (docs/imports.md)",
    ]


def test_deepeval_4_3_fields_are_read_and_not_used(tmp_path: Path) -> None:
    """DeepEval 4.3's save_as writes input_token_count and expectations: known, not warned of."""
    rows = [
        {
            "input": "Does the Day Pass cover e-bikes?",
            "actual_output": "No. The Day Pass does not cover the e-bike surcharge.",
            "retrieval_context": ["The Day Pass covers classic bikes only."],
            "input_token_count": 12,
            "expectations": None,
        },
    ]
    source = write_rows(tmp_path / "cases.jsonl", rows)
    imported = import_foreign("deepeval", source, tmp_path / "a")
    assert not [w for w in imported.warnings if "ignored column" in w]
    docs = (Path(__file__).resolve().parents[3] / "docs" / "imports.md").read_text(encoding="utf-8")
    assert "`input_token_count`" in docs and "`expectations`" in docs
