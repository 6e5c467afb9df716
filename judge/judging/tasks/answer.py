"""The answer's verdict: the question, the top ``context_k`` chunks the generator saw and the
answer → faithfulness, relevance and the evidence (``judge.judging.verdict``).

Only the top ``context_k`` chunks the generator saw are shown to the judge, in rank order,
with the question and the answer; never the rest of the corpus, never the golden chunks. The
prompt's placeholders choose the mode the judge gives its evidence in (``Prompt.mode``), and
the mode is in the fingerprint: the replies of two modes are never served for each other. A
verdict is derived anew from the cached reply every time it is used, in the mode its
fingerprint was made with. The record keeps one verdict per question (``QuestionRow.verdict``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judge.judging.backends.base import JudgeRequest
from judge.judging.grading import fingerprint_mode, judge_fingerprint
from judge.judging.items import JudgeItem, build_items
from judge.judging.prompts import ANSWER_PROMPT, Prompt
from judge.judging.tasks.base import TaskDef, TaskSettings, by_question, cached_as_then
from judge.judging.types import Mode, Verdict
from judge.judging.verdict import Reply, make_verdict


def verdict_for(item: JudgeItem, reply: Reply, cached: bool, mode: Mode = "quote") -> Verdict:
    """The verdict of one reply, derived anew (a parser or verifier fix applies to old replies).

    ``mode``: the prompt's (``Prompt.mode``), which says what shape the reply has.
    """
    return make_verdict(
        item.question.id,
        item.key,
        reply,
        item.context,
        item.question.answerable,
        cached,
        answer=item.record.answer,
        mode=mode,
    )


def answer_request(prompt: Prompt, item: JudgeItem) -> JudgeRequest:
    """The request that asks for one answer's verdict."""
    return JudgeRequest(
        prompt=prompt.render_item(item),
        schema=prompt.request_schema(item),
        question=item.question.question,
        context=item.context,
        answer=item.record.answer,
        mode=prompt.mode,
    )


def _parse(item: JudgeItem, reply: Reply, cached: bool, parts: Mapping[str, Any]) -> Verdict:
    return verdict_for(item, reply, cached, fingerprint_mode(parts))


def _progress(items: Sequence[JudgeItem], verdicts: Mapping[str, Verdict]) -> str:
    return f"{len(verdicts)} of {len(items)} answers judged"


ANSWER: TaskDef[JudgeItem, Verdict, Verdict] = TaskDef(
    name="answer",
    table="judge",
    prompt=ANSWER_PROMPT,
    settings=lambda config: TaskSettings(True, config.judge.prompt),
    items=lambda golden, run, config: build_items(golden, run, config.retrieval.context_k),
    request=answer_request,
    parse=_parse,
    fingerprint=judge_fingerprint,
    per_question=by_question,
    as_then=cached_as_then,
    describe=lambda items, _config: f"answers ({len(items)})",
    progress=_progress,
    all_done="every answer judged",
    row_field="verdict",
)
