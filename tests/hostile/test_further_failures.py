"""The further judgements fail: a chunk grade answered with HTTP 500, a correctness reply that
is not JSON.

Class of the hardening matrix (issue 34, "failures of the further judgements are first-class"):
their failures are counted in report.md beside the answers' verdicts; a transport failure (HTTP
5xx, a timeout, a dropped connection) is never cached, so the next run asks it again; a
malformed reply is cached and counted, and ``--rejudge-failed`` asks it again, as an answer's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from judge.config import Config
from judge.judging.backends.openai import OpenAIBackend
from judge.pipeline.evaluate import evaluate
from tests.judging.backends.test_openai import completion
from tests.pipeline.test_batch_further import REPLIES, further_config

Tiny = Callable[..., Config]


class Server:
    """A fake OpenAI-compatible server: per task (told by the reply schema it is sent), the
    HTTP status and reply it gives; every chat request it got, by task."""

    def __init__(self, config: Config, answers: dict[str, tuple[int, str]]) -> None:
        self.config = config
        self.answers = answers
        self.asked: dict[str, int] = {}

    def backend(self) -> OpenAIBackend:
        return OpenAIBackend(self.config.judge.openai, transport=httpx.MockTransport(self.handle))

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": [{"id": self.config.judge.openai.model}]})
        body: dict[str, Any] = json.loads(request.content)
        properties = body["response_format"]["json_schema"]["schema"]["properties"]
        task = (
            "chunk"
            if "grade" in properties
            else "correctness"
            if "correctness" in properties
            else "answer"
        )
        self.asked[task] = self.asked.get(task, 0) + 1
        status, text = self.answers.get(task, (200, REPLIES[task]))
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "the server fell over"}})
        return completion(text)


def _config(tiny: Tiny) -> Config:
    return further_config(tiny).with_overrides(judge={"max_attempts": 1})


def test_a_chunk_grade_that_failed_with_http_500_is_asked_again_on_the_next_run(
    tiny: Tiny,
) -> None:
    config = _config(tiny)
    failing = Server(config, {"chunk": (500, "")})
    first = evaluate(config, backend=failing.backend(), progress=False)
    grades = [g for row in first.report.questions for g in row.chunk_grades or ()]
    assert grades and {g.status for g in grades} == {"backend_error"}
    assert all("HTTP 500" in (g.error or "") for g in grades)
    report_md = (first.folder.path / "report.md").read_text(encoding="utf-8")
    assert f"- chunk grades: backend_error {len(grades)}\n" in report_md
    assert "- correctness: ok " in report_md

    healed = Server(config, {})
    again = evaluate(config, backend=healed.backend(), progress=False)
    assert healed.asked.get("chunk") == len({g.item_key for g in grades})  # none was cached
    assert "answer" not in healed.asked and "correctness" not in healed.asked
    regraded = [g for row in again.report.questions for g in row.chunk_grades or ()]
    assert {g.status for g in regraded} == {"ok"}
    report_md = (again.folder.path / "report.md").read_text(encoding="utf-8")
    assert f"- chunk grades: ok {len(regraded)}\n" in report_md


def test_a_malformed_correctness_reply_is_counted_beside_the_answers_and_rejudged_on_request(
    tiny: Tiny,
) -> None:
    config = _config(tiny)
    malformed = Server(config, {"correctness": (200, "{'correctness': 3")})
    first = evaluate(config, backend=malformed.backend(), progress=False)
    verdicts = [row.correctness for row in first.report.questions if row.correctness]
    assert verdicts and {v.status for v in verdicts} == {"parse_error"}
    report_md = (first.folder.path / "report.md").read_text(encoding="utf-8")
    verdicts_line = next(line for line in report_md.splitlines() if line.startswith("- verdicts:"))
    after = report_md.splitlines()[report_md.splitlines().index(verdicts_line) + 1 :]
    assert f"- correctness: parse_error {len(verdicts)}" in after[:2]  # beside the answers'

    cached = Server(config, {})
    evaluate(config, backend=cached.backend(), progress=False)
    assert cached.asked == {}  # a model's reply, malformed or not, is cached as an answer's is
    rejudged = Server(config, {})
    again = evaluate(config, backend=rejudged.backend(), progress=False, rejudge_failed=True)
    assert rejudged.asked == {"correctness": len(verdicts)}
    assert {row.correctness.status for row in again.report.questions if row.correctness} == {"ok"}
