"""``judge.judging.tasks.base``: an item's cache key, the baseline's rule version, a payload
task's fingerprint, a task's settings from ``[judge.tasks.<name>]``, and how results are kept
per question and marked cached as they were in the run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from judge.config import Config, TaskTable
from judge.judging.backends.base import BackendIdentity
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.grading import task_fingerprint
from judge.judging.tasks.base import (
    by_question,
    cached_as_then,
    each_as_then,
    in_item_order,
    payload_fingerprint,
    rule_version,
    table_settings,
    task_key,
)
from judge.judging.tasks.chunk import CHUNK as CHUNK_TASK
from judge.judging.tasks.chunk import chunk_schema, grade_for
from judge.judging.types import ChunkGrade
from tests.judging.tasks.samples import CHUNK, ITEM, reply

Tiny = Callable[..., Config]
MODEL = BackendIdentity(kind="ollama", model="gemma3:12b", digest="d", options={"seed": 42})


def _grade(qid: str, rank: int, text: str, cached: bool = False) -> ChunkGrade:
    item = ITEM._replace(question_id=qid, rank=rank, key=f"k-{qid}-{rank}")
    return grade_for(item, reply(text), cached=cached)


OK = '{"grade": 2, "reason": "r"}'


def test_a_task_key_is_the_hash_of_the_task_and_what_the_judge_sees() -> None:
    canonical = '{"chunk":"本文","question":"質問","task":"chunk"}'  # keys sorted, no spaces
    expected = "h1:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]
    assert task_key("chunk", question="質問", chunk="本文") == expected
    assert task_key("chunk", chunk="本文", question="質問") == expected  # order does not matter
    assert task_key("correctness", question="質問", chunk="本文") != expected
    assert len(expected) == len("h1:") + 32


def test_the_rule_version_is_the_baselines_only() -> None:
    assert rule_version(LexicalBackend().identity, "lexical-chunk-v1") == "lexical-chunk-v1"
    assert rule_version(MODEL, "lexical-chunk-v1") is None


def test_a_payload_fingerprint_is_the_task_fingerprint_with_its_schema_and_rules() -> None:
    fingerprint = payload_fingerprint(chunk_schema, 7, "rules-v9")
    lexical = LexicalBackend().identity
    assert fingerprint(MODEL, CHUNK) == task_fingerprint(MODEL, CHUNK, chunk_schema(), 7, None)
    assert fingerprint(lexical, CHUNK) == task_fingerprint(
        lexical, CHUNK, chunk_schema(), 7, "rules-v9"
    )
    parts = fingerprint(lexical, CHUNK).parts
    assert (parts["schema_version"], parts["rules"], parts["task"]) == (7, "rules-v9", "chunk")
    assert fingerprint(MODEL, CHUNK) != payload_fingerprint(chunk_schema, 8, "rules-v9")(
        MODEL, CHUNK
    )


def test_table_settings_are_off_without_a_table_and_default_to_the_shipped_prompt(
    tiny: Tiny,
) -> None:
    config = tiny()
    shipped = Path("prompts/x.v1.md")
    settings = table_settings("x", shipped)
    assert settings(config) == (False, shipped)

    def with_tasks(**tables: TaskTable) -> Config:
        return config.model_copy(
            update={"judge": config.judge.model_copy(update={"tasks": tables})}
        )

    assert settings(with_tasks(x=TaskTable(enabled=True))) == (True, shipped)
    mine = Path("mine.md")
    assert settings(with_tasks(x=TaskTable(enabled=False, prompt=mine))) == (False, mine)
    assert settings(with_tasks(y=TaskTable(enabled=True))) == (False, shipped)  # another's


def test_results_per_question_one_each_or_all_in_item_order() -> None:
    a1, b1, a2 = _grade("a", 1, OK), _grade("b", 1, OK), _grade("a", 2, "{")
    assert by_question([a1, b1]) == {"a": a1, "b": b1}
    assert by_question([a1, a2]) == {"a": a2}  # one per question: the last
    assert in_item_order([a1, b1, a2]) == {"a": (a1, a2), "b": (b1,)}
    assert list(in_item_order([b1, a1])) == ["b", "a"]
    assert in_item_order([]) == {}


def test_ok_is_the_status_and_unique_keys_keep_the_first_order() -> None:
    good, bad = _grade("a", 1, OK), _grade("a", 2, '{"grade": 9, "reason": "r"}')
    assert (CHUNK_TASK.ok(good), CHUNK_TASK.ok(bad)) == (True, False)
    twins = [ITEM, ITEM._replace(question_id="q9", rank=4), ITEM._replace(key="other")]
    assert CHUNK_TASK.unique_keys(twins) == [ITEM.key, "other"]


def test_a_rederived_result_is_marked_cached_as_it_was_in_the_run() -> None:
    rederived = _grade("a", 1, OK, cached=True)
    saved = _grade("a", 1, OK, cached=False)
    then = cached_as_then(rederived, saved)
    assert then.cached is False and rederived.cached is True  # a copy, the original kept
    assert then.model_dump(exclude={"cached"}) == rederived.model_dump(exclude={"cached"})


def test_each_rederived_result_is_marked_by_its_item_key_and_new_ones_stay() -> None:
    first, second = _grade("a", 1, OK, cached=True), _grade("a", 2, OK, cached=True)
    saved = (_grade("a", 1, OK, cached=False),)  # only the first was in the run
    then = each_as_then((first, second), saved)
    assert [r.cached for r in then] == [False, True]
    assert then[1] is second
    assert [r.item_key for r in then] == [first.item_key, second.item_key]
    assert [r.rank for r in then] == [1, 2]
