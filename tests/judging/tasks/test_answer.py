"""``judge.judging.tasks.answer``: the answer's verdict as a task: on in every configuration
with ``judge.prompt``, one item per answered question, the request carrying what the judge
sees, and a verdict derived anew in the mode its fingerprint was made with."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.grading import judge_fingerprint
from judge.judging.items import JudgeItem, build_items
from judge.judging.tasks.answer import ANSWER, answer_request, verdict_for
from judge.judging.tasks.registry import TASKS
from judge.judging.verdict import Reply
from judge.pipeline.inputs import load_inputs
from tests.judging.tasks.samples import ANSWER as ANSWER_PROMPT

Tiny = Callable[..., Config]


def _items(config: Config) -> list[JudgeItem]:
    inputs = load_inputs(config, None, with_labels=False)
    return ANSWER.items(inputs.golden, inputs.run, config)


def test_the_answer_task_is_first_on_always_and_kept_as_the_rows_verdict(tiny: Tiny) -> None:
    config = tiny()
    assert next(iter(TASKS.values())) is ANSWER and TASKS["answer"] is ANSWER
    assert (ANSWER.name, ANSWER.table, ANSWER.row_field) == ("answer", "judge", "verdict")
    assert ANSWER.settings(config) == (True, config.judge.prompt)
    assert ANSWER.all_done == "every answer judged"


def test_its_items_are_the_answers_with_the_top_chunks(tiny: Tiny) -> None:
    config = tiny()
    items = _items(config)
    inputs = load_inputs(config, None, with_labels=False)
    assert items == build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    assert [i.question_id for i in items] == ["q1", "q2", "q3", "q4"]
    assert all(len(i.context) <= config.retrieval.context_k for i in items)
    assert ANSWER.describe(items, config) == "answers (4)"
    assert ANSWER.progress(items, {}) == "0 of 4 answers judged"
    verdicts = {"q1": verdict_for(items[0], Reply(kind="error", detail="x"), False)}
    assert ANSWER.progress(items, verdicts) == "1 of 4 answers judged"


def test_the_request_carries_the_question_the_context_and_the_answer(tiny: Tiny) -> None:
    item = _items(tiny())[0]
    request = answer_request(ANSWER_PROMPT, item)
    assert ANSWER.request is answer_request
    assert json.dumps(item.question.question, ensure_ascii=False) in request.prompt
    assert json.dumps(item.record.answer, ensure_ascii=False) in request.prompt
    assert (request.question, request.answer) == (item.question.question, item.record.answer)
    assert request.context == item.context
    assert request.mode == ANSWER_PROMPT.mode == "quote"
    assert request.schema == ANSWER_PROMPT.request_schema(item)


def test_a_verdict_is_derived_anew_in_the_fingerprints_mode(tiny: Tiny) -> None:
    item = _items(tiny())[0]
    reply = LexicalBackend().complete(answer_request(ANSWER_PROMPT, item))
    verdict = ANSWER.parse(item, reply, True, {"mode": "quote"})
    assert (verdict.question_id, verdict.item_key, verdict.cached) == ("q1", item.key, True)
    assert verdict.status == "ok" and verdict.faithfulness is not None
    # a fingerprint from before there were modes is read as quote mode
    assert ANSWER.parse(item, reply, False, {}) == verdict_for(item, reply, False, "quote")
    with pytest.raises(ValueError, match="unknown prompt mode 'bogus' in a judge fingerprint"):
        ANSWER.parse(item, reply, False, {"mode": "bogus"})
    broken = ANSWER.parse(item, Reply(text="{", finish_reason="stop"), False, {})
    assert (broken.status, broken.faithfulness) == ("parse_error", None)


def test_its_fingerprint_is_the_judges_and_results_are_one_per_question(tiny: Tiny) -> None:
    identity = LexicalBackend().identity
    assert ANSWER.fingerprint(identity, ANSWER_PROMPT) == judge_fingerprint(identity, ANSWER_PROMPT)
    items = _items(tiny())
    failed = [verdict_for(i, Reply(kind="error", detail="HTTP 500"), False) for i in items]
    assert list(ANSWER.per_question(failed)) == ["q1", "q2", "q3", "q4"]
    assert all(v.status == "backend_error" for v in failed)
    saved = failed[0]
    again = verdict_for(items[0], Reply(kind="error", detail="HTTP 500"), True)
    assert ANSWER.as_then(again, saved).cached is False
