"""The chunk grade and correctness through the Ollama backend, at the HTTP level: the request
carries the task's prompt and schema, the reply is parsed into a grade or a verdict."""

from __future__ import annotations

import json
from pathlib import Path

from judge.judging.cache import VerdictCache
from judge.judging.tasks.chunk import ChunkItem, chunk_key, chunk_schema
from judge.judging.tasks.correctness import CorrectnessItem, correctness_key, correctness_schema
from judge.judging.tasks.registry import TASKS, load_task_prompt
from tests.conftest import REPO
from tests.judging.backends.test_ollama import FakeOllama, _backend, chat_response
from tests.judging.further import grade_chunks, judge_correctness

QUESTION = "年額プランはいくらですか？"
CHUNK_TEXT = "プレミアムプランは月額400円、年額3,800円です。"


def test_a_chunk_grade_sends_the_chunk_prompt_and_schema_and_parses_the_grade(
    tmp_path: Path,
) -> None:
    fake = FakeOllama(lambda body: chat_response({"grade": 3, "reason": "年額が書かれている"}))
    backend = _backend(fake, model="gemma3:12b", num_ctx=8192, num_predict=320, seed=42)
    prompt = load_task_prompt(REPO / "prompts" / "chunk.v1.md", TASKS["chunk"])
    item = ChunkItem(
        "q1",
        QUESTION,
        "pricing/plans",
        1,
        CHUNK_TEXT,
        chunk_key(QUESTION, "pricing/plans", CHUNK_TEXT),
    )
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        outcome = grade_chunks([item], backend, prompt, cache)
    finally:
        cache.close()
    (grade,) = outcome.grades["q1"]
    assert (grade.status, grade.grade, grade.reason) == ("ok", 3, "年額が書かれている")
    assert (grade.prompt_tokens, grade.completion_tokens) == (812, 64)
    (body,) = fake.requests
    assert body["format"] == chunk_schema()
    (message,) = body["messages"]
    content = message["content"]
    assert content.startswith("You are a strict assessor of search results")
    assert json.dumps(CHUNK_TEXT, ensure_ascii=False) in content
    assert json.dumps(QUESTION, ensure_ascii=False) in content
    assert outcome.fingerprint.parts["digest"] == backend.identity.digest
    assert outcome.fingerprint.parts["prompt_sha256"] == prompt.sha256


def test_a_correctness_verdict_sends_its_prompt_and_schema_and_a_cut_reply_is_a_parse_error(
    tmp_path: Path,
) -> None:
    replies = iter(
        [
            chat_response({"correctness": 1, "reason": "misses the 1,000 yen"}),
            chat_response('{"correctness": 2, "rea', done_reason="length"),
        ]
    )
    fake = FakeOllama(lambda body: next(replies))
    backend = _backend(fake, model="gemma3:12b")
    prompt = load_task_prompt(REPO / "prompts" / "correctness.v1.md", TASKS["correctness"])
    items = [
        CorrectnessItem(
            qid,
            QUESTION,
            "3,800円です。",
            True,
            answer,
            correctness_key(QUESTION, "3,800円です。", True, answer),
        )
        for qid, answer in (("q1", "3,800円です。"), ("q2", "400円です。"))
    ]
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        outcome = judge_correctness(items, backend, prompt, cache)
    finally:
        cache.close()
    assert (outcome.verdicts["q1"].status, outcome.verdicts["q1"].correctness) == ("ok", 1)
    cut = outcome.verdicts["q2"]
    assert cut.status == "parse_error" and "finish_reason 'length'" in (cut.error or "")
    assert [body["format"] for body in fake.requests] == [correctness_schema()] * 2
    content = fake.requests[0]["messages"][0]["content"]
    assert "REFERENCE (JSON string" in content and '"3,800円です。"' in content
