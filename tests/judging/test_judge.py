"""The one judge session (judge.judging.judge.Judge) and the task definitions it runs
(judge.judging.tasks): the fingerprints and keys of the three shipped tasks are the ones the
per-task modules gave before there were tasks, so users' caches stay valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.judging.backends.base import BackendIdentity
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.cache import VerdictCache
from judge.judging.judge import Judge
from judge.judging.tasks.chunk import ChunkItem, chunk_key
from judge.judging.tasks.correctness import correctness_key
from judge.judging.tasks.registry import FURTHER, TASKS, load_task_prompt
from tests.conftest import REPO

PROMPTS = REPO / "prompts"
MODEL = BackendIdentity(
    kind="ollama", model="gemma3:12b", digest="sha256:abc", options={"temperature": 0, "seed": 7}
)


@pytest.mark.parametrize(
    ("judge", "task", "prompt", "value"),
    [
        ("lexical", "answer", "judge.v1.md", "h1:38d004108b4a98de"),
        ("lexical", "answer", "judge.cited.v1.md", "h1:5e8bc82b655cd8e6"),
        ("lexical", "chunk", "chunk.v1.md", "h1:36a4b90d90a105d0"),
        ("lexical", "correctness", "correctness.v1.md", "h1:d280919d8a7456a9"),
        ("model", "answer", "judge.v1.md", "h1:2f4c830a22acedd0"),
        ("model", "answer", "judge.cited.v1.md", "h1:6dfb93ce2cd6e847"),
        # moved by issue 33 with the prompts' text (their format examples are placeholders
        # now, not a concrete score), not by the computation: beace7c4…, 3589d552… before
        ("model", "chunk", "chunk.v1.md", "h1:9580d8074c2596f5"),
        ("model", "correctness", "correctness.v1.md", "h1:ff002a20b0d7fa64"),
    ],
)
def test_the_fingerprints_of_the_shipped_tasks_did_not_move(
    judge: str, task: str, prompt: str, value: str
) -> None:
    """Computed with judge.judging.chunks / correctness / grading before the tasks package; the
    lexical ones again when its rules moved (lexical-v6, lexical-correctness-v2: a refusal
    phrase counts where a refusal stands; lexical-chunk-v2: tokens weighed by the corpus; issue
    33)."""
    identity = LexicalBackend().identity if judge == "lexical" else MODEL
    definition = TASKS[task]
    assert (
        definition.fingerprint(identity, load_task_prompt(PROMPTS / prompt, definition)).value
        == value
    )


def test_the_item_keys_did_not_move() -> None:
    assert chunk_key("q?", "c1", "text") == "h1:80804bafb19b649d85c91d3c74df64a8"
    assert correctness_key("q?", "ref", True, "ans") == "h1:371b4000fa6fbbb1f1744188bb388371"
    assert correctness_key("q?", None, False, "ans") == "h1:cadd8ff9099a86ce368d09bf388b8641"


def test_the_registry_asks_the_answers_first_and_names_each_table() -> None:
    # The shipped three first, in this order; a task added later comes after them.
    assert list(TASKS)[:3] == ["answer", "chunk", "correctness"]
    assert [task.table for task in FURTHER][:2] == ["judge.chunks", "judge.correctness"]
    assert all(t.table == f"judge.tasks.{t.name}" for t in FURTHER[2:])
    # Every task's prompt is shipped, and loads for that task.
    for task in TASKS.values():
        assert load_task_prompt(REPO / task.prompt.shipped, task).task == task.name


def test_run_then_cached_give_the_same_results(tmp_path: Path) -> None:
    task = TASKS["chunk"]
    prompt = load_task_prompt(PROMPTS / "chunk.v1.md", task)
    item = ChunkItem(
        "q1", "How much?", "p/1", 1, "It costs 5.", chunk_key("How much?", "p/1", "It costs 5.")
    )
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        judge = Judge(LexicalBackend(), cache, concurrency=3)
        assert judge.in_flight == 3  # a plain backend takes judge.concurrency
        outcome = judge.run(task, prompt, [item])
        assert not outcome.interrupted and [r.status for r in outcome.results] == ["ok"]
        assert outcome.fingerprint == judge.fingerprint(task, prompt)
        (again,) = judge.cached(task, outcome.fingerprint, [item])
        assert again.cached and again.grade == outcome.results[0].grade
    finally:
        cache.close()


def test_a_task_without_a_field_of_its_own_is_kept_by_name_in_the_row() -> None:
    """A judgement whose ``row_field`` is ``judgements`` (``[judge.tasks.<name>]``): the row
    keeps its results by task name, typed, and reads back exactly what it wrote."""
    from judge.judging.types import TaskJudgement
    from judge.record.model import QuestionRow

    result = TaskJudgement(question_id="q1", item_key="h1:k", status="ok", score=2)
    row = QuestionRow(
        question_id="q1",
        type="t",
        split="",
        question="?",
        status="ok",
        item=None,
        verdict=None,
        judgements={"toy": (result,)},
    )
    text = row.model_dump_json()
    assert '"judgements":{"toy":[{"question_id":"q1"' in text and '"score":2}' in text
    back = QuestionRow.model_validate_json(text)
    assert back == row and back.model_dump_json() == text
