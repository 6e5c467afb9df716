"""``judge.inputs.candidates``: the candidates file round-trips, bad lines are located, a
candidates file is told from a missing-labels file, the question log and the run are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.inputs.candidates import (
    Candidate,
    check_name,
    is_candidates_file,
    load_candidates,
    read_question_log,
    read_run_records,
    rejection_counts,
    save_candidates,
)
from judge.inputs.golden import load_corpus
from tests.conftest import REPO

ONE = Candidate(
    candidate_id="c-1",
    type="factual",
    question="年額プランはいくら？",
    relevant_chunks=("pricing/yearly-plan",),
    answerable=True,
    source="questions",
    rejected=("covered: golden q01 is 0.90 similar", "leak: x", "leak: y"),
)


def test_the_file_round_trips_and_counts_each_check_once_per_candidate(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    save_candidates(path, [ONE, ONE.model_copy(update={"candidate_id": "c-2", "rejected": ()})])
    assert load_candidates(path)[0] == ONE
    assert is_candidates_file(path)
    assert "年額" in path.read_text(encoding="utf-8")  # real characters, not escapes
    assert rejection_counts(load_candidates(path)) == {"covered": 1, "leak": 1}
    assert check_name("span_absent: the span") == "span_absent"


def test_bad_lines_are_reported_at_once_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    good = ONE.model_dump_json()
    bad = json.dumps({**json.loads(good), "decision": "maybe"})
    path.write_text(f"{good}\n{bad}\n{good}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_candidates(path)
    problems = caught.value.problems
    assert any(p.startswith(f"{path}:2: decision") for p in problems)
    assert (
        f"{path}:3: duplicate candidate_id 'c-1' (first on line 1); keep one of the two" in problems
    )


def test_a_missing_labels_file_is_not_a_candidates_file(tmp_path: Path) -> None:
    labels = tmp_path / "missing-labels.jsonl"
    labels.write_text(
        '{"question_id": "q01", "chunk_id": "a", "confirmed": true}\n', encoding="utf-8"
    )
    assert not is_candidates_file(labels)
    assert not is_candidates_file(tmp_path / "missing-labels.csv")


def test_the_question_log_takes_plain_questions_and_an_imported_golden_file(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"question": "How do I reset it?"}\n{"id": "t9", "question": "Q?", "type": "factual"}\n',
        encoding="utf-8",
    )
    assert [(q.id, q.type) for q in read_question_log(log)] == [("u1", None), ("t9", "factual")]
    imported = read_question_log(REPO / "golden" / "sample" / "questions.jsonl")
    assert len(imported) == 30 and imported[0].type == "factual"
    log.write_text(
        '{"question": " "}\n{"question": "x", "typo": 1}\n{"id": "a", "question": "y"}\n{"id": "a", "question": "z"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_question_log(log)
    text = "\n".join(caught.value.problems)
    assert f"{log}:1: question: must not be empty" in text
    assert f"{log}:2:" in text and "typo" in text
    assert f"{log}:4: duplicate id 'a' (first on line 3)" in text


def test_the_run_is_read_for_the_logs_questions_only_and_checked_against_the_corpus(
    tmp_path: Path,
) -> None:
    corpus = load_corpus(REPO / "golden" / "sample" / "corpus.jsonl")
    run = REPO / "golden" / "sample" / "run.jsonl"
    assert list(read_run_records(run, {"q03", "q30"}, corpus)) == ["q03", "q30"]
    other = tmp_path / "run.jsonl"
    other.write_text(
        '{"id": "u1", "retrieved": [{"chunk_id": "nope/x"}], "answer": "a"}\n', encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        read_run_records(other, {"u1"}, corpus)
    assert caught.value.problems == [
        f"{other}:1: retrieved: not in the corpus: nope/x; is this the run of this corpus?"
    ]
