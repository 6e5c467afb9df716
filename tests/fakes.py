"""A scripted judge backend for tests: replies decided by a function of the request."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from judge.judging.backends.base import BackendIdentity, JudgeRequest
from judge.judging.verdict import Reply


def good_reply(request: JudgeRequest) -> Reply:
    """A well-formed 2/2 verdict quoting the first sentence of the first chunk."""
    quote = request.context[0].text.split("。")[0] + "。" if request.context else ""
    payload = {"evidence": quote, "faithfulness": 2, "relevance": 2, "note": "ok"}
    return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")


def nonsense_scores_zero(request: JudgeRequest) -> Reply:
    """``good_reply`` for every answer but the nonsense of ``tests.conftest.nonsense_run``,
    which scores 0/0."""
    if "Zorblax" not in request.answer:
        return good_reply(request)
    payload = {"evidence": "", "faithfulness": 0, "relevance": 0, "note": "nonsense"}
    return Reply(text=json.dumps(payload), finish_reason="stop")


class ScriptedBackend:
    """Answers with ``script(request)``: a Reply, or an exception to raise."""

    def __init__(
        self,
        script: Callable[[JudgeRequest], Reply | Exception] = good_reply,
        model: str = "scripted",
        options: dict[str, Any] | None = None,
    ) -> None:
        self.script = script
        self.identity = BackendIdentity(
            kind="scripted",
            model=model,
            digest="sha256:fake",
            options=options or {"temperature": 0},
        )
        self.calls: list[JudgeRequest] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        pass

    def complete(self, request: JudgeRequest) -> Reply:
        with self._lock:
            self.calls.append(request)
        outcome = self.script(request)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
