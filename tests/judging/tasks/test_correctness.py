"""``judge.judging.tasks.correctness``: a reply is strict, a missing reply keeps its status
and why, the items are the questions with a reference or out of scope, a failed verdict is
asked again only with rejudge_failed, and no score probabilities are read from its reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.config import load_config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.cache import VerdictCache
from judge.judging.confidence import Step, score_probabilities
from judge.judging.tasks.chunk import grade_for
from judge.judging.tasks.correctness import (
    build_correctness_items,
    correctness_fingerprint,
    correctness_for,
)
from judge.judging.verdict import Reply
from tests.conftest import SAMPLE
from tests.judging.further import judge_correctness
from tests.judging.tasks.samples import ANSWER_ITEM, CORRECTNESS, ITEM, Counting, reply


def test_a_missing_reply_keeps_its_status_and_why() -> None:
    truncated = grade_for(ITEM, Reply(kind="truncated", detail="prompt too long"), False)
    failed = correctness_for(ANSWER_ITEM, Reply(kind="error", detail="HTTP 500"), True)
    assert (truncated.status, truncated.grade, truncated.error) == (
        "truncated",
        None,
        "prompt too long",
    )
    assert (failed.status, failed.correctness, failed.error, failed.cached) == (
        "backend_error",
        None,
        "HTTP 500",
        True,
    )


@pytest.mark.parametrize(
    ("text", "status", "score"),
    [
        ('{"correctness": 2, "reason": "same facts"}', "ok", 2),
        ('{"correctness": 0, "reason": "contradicts"}', "ok", 0),
        ('{"correctness": 1.0, "reason": "r"}', "parse_error", None),
        ('{"correctness": "1", "reason": "r"}', "parse_error", None),
        ('{"correctness": 3, "reason": "r"}', "parse_error", None),
        ('{"reason": "r"}', "parse_error", None),
        ('{"faithfulness": 2, "relevance": 2, "evidence": "", "note": ""}', "parse_error", None),
    ],
)
def test_a_correctness_reply_is_strict_too(text: str, status: str, score: int | None) -> None:
    verdict = correctness_for(ANSWER_ITEM, reply(text), cached=False)
    assert (verdict.status, verdict.correctness) == (status, score)


def test_correctness_items_are_questions_with_a_reference_or_out_of_scope() -> None:
    golden = load_golden(load_config(SAMPLE.parent.parent / "judge.toml").data)
    run = load_run(SAMPLE / "run.jsonl", golden)
    items = build_correctness_items(golden, run)
    by_id = golden.by_id()
    expected = [
        q.id
        for q in golden.questions
        if q.id in run.records and (q.reference_answer or not q.answerable)
    ]
    assert [i.question_id for i in items] == expected and items
    assert all(i.reference == (by_id[i.question_id].reference_answer or None) for i in items)
    assert any(not i.answerable for i in items)


def test_a_failed_grade_is_asked_again_only_with_rejudge_failed(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite3")
    backend = Counting()
    try:
        fingerprint = correctness_fingerprint(backend.identity, CORRECTNESS)
        cache.register(fingerprint.value, fingerprint.parts, "x")
        cache.put(fingerprint.value, ANSWER_ITEM.key, "q1", reply('{"correctness": 7}'))
        kept = judge_correctness([ANSWER_ITEM], backend, CORRECTNESS, cache)
        assert kept.verdicts["q1"].status == "parse_error" and backend.asked == []
        again = judge_correctness([ANSWER_ITEM], backend, CORRECTNESS, cache, rejudge_failed=True)
        assert again.verdicts["q1"].status == "ok" and not again.verdicts["q1"].cached
        assert [r.task for r in backend.asked] == ["correctness"]
        # The reference reached the judge: in the prompt, and in the baseline's rule.
        assert json.dumps(ANSWER_ITEM.reference, ensure_ascii=False) in backend.asked[0].prompt
        assert backend.asked[0].baseline is not None
    finally:
        cache.close()


def test_score_probabilities_find_nothing_in_a_grade_or_correctness_reply() -> None:
    for text in ('{"grade": ', '{"correctness": '):
        steps = [Step(text, "2", {"0": -2.0, "1": -1.5, "2": -0.2})]
        assert not score_probabilities(steps)
