"""``judge.judging.tasks.chunk``: a reply is a grade only when complete and valid, the
schemas are the payloads, keys are stable, the items are the top chunks of answered
questions, the fingerprints of the tasks never meet, and grading asks each chunk once."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.config import load_config
from judge.judging.backends.base import BackendIdentity
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import judge_fingerprint
from judge.judging.tasks.chunk import (
    ChunkItem,
    build_chunk_items,
    chunk_fingerprint,
    chunk_key,
    chunk_schema,
    grade_for,
)
from judge.judging.tasks.correctness import (
    correctness_fingerprint,
    correctness_key,
    correctness_schema,
)
from judge.judging.tasks.registry import TASKS, load_task_prompt
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO
from tests.judging.further import cached_grades, grade_chunks
from tests.judging.tasks.samples import ANSWER, CHUNK, CORRECTNESS, ITEM, Counting, reply


@pytest.mark.parametrize(
    ("text", "finish", "status", "problem"),
    [
        ('{"grade": 2, "reason": "part of the answer"}', "stop", "ok", None),
        ('{"grade": 2.0, "reason": "r"}', "stop", "parse_error", "grade: Value error"),
        ('{"grade": "2", "reason": "r"}', "stop", "parse_error", "grade: Value error"),
        ('{"grade": true, "reason": "r"}', "stop", "parse_error", "grade: Value error"),
        ('{"grade": 4, "reason": "r"}', "stop", "parse_error", "grade: Input should be 0, 1, 2"),
        ('{"grade": -1, "reason": "r"}', "stop", "parse_error", "grade: Input should be"),
        ('{"reason": "r"}', "stop", "parse_error", "grade: Field required"),
        ('{"grade": 1}', "stop", "parse_error", "reason: Field required"),
        ('{"grade": 1, "reason": "r", "score": 1}', "stop", "parse_error", "score: Extra inputs"),
        ('{"grade": 1, "reason": "' + "x" * 301 + '"}', "stop", "parse_error", "reason: String"),
        ('Sure! {"grade": 1, "reason": "r"}', "stop", "parse_error", "not JSON: Expecting value"),
        ('{"grade": 1, "reason": "r"} and more', "stop", "parse_error", "not JSON: Extra data"),
        ('{"grade": 3, "reason": "cut', "length", "parse_error", "finish_reason 'length'"),
    ],
)
def test_a_chunk_reply_is_a_grade_only_when_complete_and_valid(
    text: str, finish: str, status: str, problem: str | None
) -> None:
    grade = grade_for(ITEM, reply(text, finish), cached=False)
    assert grade.status == status
    assert (grade.question_id, grade.chunk_id, grade.rank) == ("q1", "pricing/plans", 2)
    assert grade.raw_reply == text
    if problem is None:
        assert (grade.grade, grade.reason, grade.error) == (2, "part of the answer", None)
    else:
        assert grade.grade is None and grade.error is not None
        assert problem in grade.error


def test_the_schemas_are_the_payloads_and_differ() -> None:
    assert list(chunk_schema()["properties"]) == ["grade", "reason"]
    assert chunk_schema()["properties"]["grade"]["enum"] == [0, 1, 2, 3]
    assert list(correctness_schema()["properties"]) == ["correctness", "reason"]
    assert chunk_schema()["additionalProperties"] is False
    assert correctness_schema()["required"] == ["correctness", "reason"]


def test_keys_are_stable_and_say_what_the_judge_sees() -> None:
    key = chunk_key("質問", "a/1", "本文")
    assert key == chunk_key("質問", "a/1", "本文") and key.startswith("h1:")
    assert len({key, chunk_key("質問2", "a/1", "本文"), chunk_key("質問", "a/2", "本文")}) == 3
    assert key != chunk_key("質問", "a/1", "本文2")
    base = ("q", "ref", True, "answer")
    keys = {
        correctness_key(*base),
        correctness_key("q2", "ref", True, "answer"),
        correctness_key("q", "ref2", True, "answer"),
        correctness_key("q", "ref", False, "answer"),
        correctness_key("q", "ref", True, "answer2"),
    }
    assert len(keys) == 5
    assert correctness_key("q", None, False, "a") == correctness_key("q", "", False, "a")


def test_chunk_items_are_the_top_chunks_of_answered_questions_same_key_across_ranks() -> None:
    config = load_config(REPO / "judge.toml")
    inputs = load_inputs(config, None, with_labels=False)
    items = build_chunk_items(inputs.golden, inputs.run, 3)
    answered = [q.id for q in inputs.golden.questions if q.id in inputs.run.records]
    assert len(items) == 3 * len(answered)
    assert [i.rank for i in items[:3]] == [1, 2, 3]
    first = items[0]
    record = inputs.run.records[first.question_id]
    assert first.chunk_id == record.retrieved[0].chunk_id
    # The key does not depend on the rank (or the system): the same chunk graded once.
    assert first.key == chunk_key(first.question, first.chunk_id, first.text)


@pytest.mark.parametrize(
    "identity",
    [
        LexicalBackend().identity,
        BackendIdentity(kind="ollama", model="gemma3:12b", digest="d", options={"seed": 42}),
    ],
)
def test_the_three_fingerprints_never_meet(identity: BackendIdentity) -> None:
    chunk = chunk_fingerprint(identity, CHUNK)
    correctness = correctness_fingerprint(identity, CORRECTNESS)
    answer = judge_fingerprint(identity, ANSWER)
    assert len({chunk.value, correctness.value, answer.value}) == 3
    assert (chunk.parts["task"], correctness.parts["task"]) == ("chunk", "correctness")
    assert "task" not in answer.parts  # the answer's fingerprint is what it always was
    # Only a judge that reads prompts has the prompt's hash in it.
    assert (chunk.parts["prompt_sha256"] is None) == (not identity.reads_prompt)
    if identity.kind == "lexical":
        assert (chunk.parts["rules"], correctness.parts["rules"]) == (
            "lexical-chunk-v2",
            "lexical-correctness-v2",
        )
    else:
        assert "rules" not in chunk.parts


def test_a_prompt_edit_changes_a_model_judges_fingerprint_not_the_baselines(
    tmp_path: Path,
) -> None:
    edited = tmp_path / "chunk.md"
    edited.write_text(CHUNK.text + "\nBe brief.\n", encoding="utf-8")
    other = load_task_prompt(edited, TASKS["chunk"])
    model = BackendIdentity(kind="ollama", model="m", digest=None, options={})
    assert chunk_fingerprint(model, CHUNK) != chunk_fingerprint(model, other)
    lexical = LexicalBackend().identity
    assert chunk_fingerprint(lexical, CHUNK) == chunk_fingerprint(lexical, other)


def test_grading_twice_asks_once_and_twins_share_one_call(tmp_path: Path) -> None:
    twin = ITEM._replace(question_id="q9", rank=4)  # the same chunk for the same question text
    other = ChunkItem("q2", "別の質問", "x/1", 1, "無関係", chunk_key("別の質問", "x/1", "無関係"))
    backend = Counting()
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        first = grade_chunks([ITEM, twin, other], backend, CHUNK, cache)
        assert len(backend.asked) == 2 and {r.task for r in backend.asked} == {"chunk"}
        assert first.graded == 3 and not first.interrupted
        assert [g.rank for g in first.grades["q9"]] == [4]  # each twin's own rank
        again = grade_chunks([ITEM, twin, other], backend, CHUNK, cache)
        assert len(backend.asked) == 2  # nothing new
        assert all(g.cached for grades in again.grades.values() for g in grades)
        assert again.grades["q1"][0].model_dump(exclude={"cached", "latency_s"}) == first.grades[
            "q1"
        ][0].model_dump(exclude={"cached", "latency_s"})
        assert cached_grades([ITEM], first.fingerprint.value, cache)["q1"][0].grade is not None
        assert cache.parts(first.fingerprint.value) == first.fingerprint.parts
        stats = {s.fingerprint: s for s in cache.stats()}
        assert stats[first.fingerprint.value].label == "lexical lexical-v6 · chunk.v1.md"
    finally:
        cache.close()


def test_progress_counts_the_calls(tmp_path: Path) -> None:
    seen: list[tuple[int, int, int, int]] = []
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        grade_chunks([ITEM], LexicalBackend(), CHUNK, cache, on_progress=lambda p: seen.append(p))
        grade_chunks([ITEM], LexicalBackend(), CHUNK, cache, on_progress=lambda p: seen.append(p))
    finally:
        cache.close()
    assert seen[0] == (0, 1, 0, 0) and seen[1] == (1, 1, 0, 0)
    assert seen[-1] == (1, 1, 1, 0)
