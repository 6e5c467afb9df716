"""Chunk grades and correctness through the embedded Gemma 3 270M, for real (slow): the
mechanics (statuses, types, the cache), not the quality of a 270M judge."""

from pathlib import Path

import pytest
from tenacity import wait_none

from judge.config import Config
from judge.judging.cache import VerdictCache
from judge.judging.tasks.chunk import build_chunk_items
from judge.judging.tasks.correctness import build_correctness_items
from judge.judging.tasks.registry import TASKS, load_task_prompt
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO
from tests.judging.further import grade_chunks, judge_correctness

pytestmark = pytest.mark.slow

pytest.importorskip("judge.judging.backends.embedded")


def test_a_few_sample_chunks_and_answers_graded_by_the_real_model(
    embedded_backend: object, sample_config: Config, tmp_path: Path
) -> None:
    inputs = load_inputs(sample_config)
    chunks = [
        i
        for i in build_chunk_items(inputs.golden, inputs.run, 2)
        if i.question_id in ("q01", "q05")
    ]
    answers = [
        i
        for i in build_correctness_items(inputs.golden, inputs.run)
        if i.question_id in ("q01", "q05")
    ]
    assert len(chunks) == 4 and len(answers) == 2
    chunk_prompt = load_task_prompt(REPO / "prompts" / "chunk.v1.md", TASKS["chunk"])
    correctness_prompt = load_task_prompt(
        REPO / "prompts" / "correctness.v1.md", TASKS["correctness"]
    )
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        graded = grade_chunks(chunks, embedded_backend, chunk_prompt, cache, retry_wait=wait_none())  # type: ignore[arg-type]
        judged = judge_correctness(
            answers, embedded_backend, correctness_prompt, cache, retry_wait=wait_none()
        )  # type: ignore[arg-type]
        grades = [g for gs in graded.grades.values() for g in gs]
        assert len(grades) == 4 and set(judged.verdicts) == {"q01", "q05"}
        for grade in grades:
            # Under the grammar every complete reply is schema-valid: ok, or cut off.
            assert grade.status in ("ok", "parse_error"), grade
            assert grade.prompt_tokens is not None and grade.prompt_tokens > 100
            assert (grade.grade in (0, 1, 2, 3)) == (grade.status == "ok")
        for verdict in judged.verdicts.values():
            assert verdict.status in ("ok", "parse_error"), verdict
            assert (verdict.correctness in (0, 1, 2)) == (verdict.status == "ok")
        # The second time everything comes from the cache.
        again = grade_chunks(chunks, embedded_backend, chunk_prompt, cache)  # type: ignore[arg-type]
        assert all(g.cached for gs in again.grades.values() for g in gs)
        assert [g.raw_reply for gs in again.grades.values() for g in gs] == [
            g.raw_reply for g in grades
        ]
        assert graded.fingerprint.parts["digest"] is not None
    finally:
        cache.close()
