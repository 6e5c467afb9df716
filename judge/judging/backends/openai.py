"""Any OpenAI-compatible chat completions server: vLLM, llama.cpp's server, LM Studio.

The route for a judge served on a GPU cluster. Servers differ in how they take a JSON schema
(``judge.openai.response_format``) and none reports a model digest, so the fingerprint pins the
model by name only: re-deploying different weights under the same name is invisible here.
Over-long prompts: servers answer 400 naming the context length; that becomes ``truncated``.
A server that cut prompts silently instead could not be detected from here.

The request body, the judge's identity and the reading of a response are module functions, so
that the batch format (``judge.judging.backends.openai_batch`` and ``openai_batch_output``)
writes exactly the bodies this backend would send and reads a batch engine's answers exactly as
this backend reads a server's, without a server.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from judge.config_backends import OpenAIConfig
from judge.errors import (
    BackendError,
    BackendRequestError,
    BackendUnavailable,
    PromptTooLong,
    TransientBackendError,
)
from judge.judging.backends.base import BackendIdentity, JudgeRequest, PlainBackend, token_count
from judge.judging.backends.http import error_text, http_client, post_json
from judge.judging.confidence import from_token_list
from judge.judging.verdict import Reply

PREFLIGHT_TIMEOUT_S = 5.0
# How servers word a prompt longer than their context: vLLM ("maximum context length"),
# llama-cpp-python ("exceed context window"), llama.cpp's server ("exceeds the available
# context size", type exceed_context_size_error).
_CONTEXT_WORDS = ("context length", "context window", "context size", "maximum context", "too long")


#: Candidates per token asked for: enough to hold the three scores at a score's position.
TOP_LOGPROBS = 5


def openai_identity(config: OpenAIConfig, endpoint: str | None = None) -> BackendIdentity:
    """Which judge ``config`` describes, known without asking a server.

    No OpenAI-compatible server reports a model digest, so nothing a server says goes into
    the fingerprint: a batch export computes the same one as a live run, offline.
    """
    return BackendIdentity(
        kind="openai",
        model=config.model,
        digest=None,
        options={
            "temperature": 0,
            "seed": config.seed,
            "max_tokens": config.max_tokens,
            "response_format": config.response_format,
            "score_probabilities": config.score_probabilities,
        },
        endpoint=endpoint,
    )


def request_body(config: OpenAIConfig, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The body of ``POST /chat/completions`` for one prompt (what a batch line carries too)."""
    if config.response_format == "json_schema":
        response_format: dict[str, Any] = {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": schema, "strict": True},
        }
    else:
        response_format = {"type": "json_object", "schema": schema}
    body: dict[str, Any] = {
        "model": config.model,
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0,
        "seed": config.seed,
        "max_tokens": config.max_tokens,
        "response_format": response_format,
        "stream": False,
    }
    if config.score_probabilities:
        body["logprobs"] = True
        body["top_logprobs"] = TOP_LOGPROBS
    return body


def error_message(body: object) -> str:
    """The message of an error answer already parsed from JSON: OpenAI's and newer vLLM's
    ``{"error": {"message": ...}}``, older vLLM's ``{"object": "error", "message": ...}``,
    a bare string, or the value itself (cut short)."""
    if isinstance(body, str):
        return body[:300]
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict | str):
            return error_message(inner)
        for key in ("message", "detail"):
            if isinstance(body.get(key), str):
                return str(body[key])[:300]
    return str(body)[:300]


def refusal(status_code: int, message: str) -> BackendError:
    """What an HTTP error answer means for the item: a prompt that does not fit (never judged,
    ``truncated``), a failure worth retrying, or a request that will never succeed."""
    if status_code in (400, 413) and any(w in message.lower() for w in _CONTEXT_WORDS):
        return PromptTooLong(f"the server says: {message}")
    if status_code >= 500 or status_code == 429:
        return TransientBackendError(f"HTTP {status_code}: {message}")
    return BackendRequestError(f"the server refused the request (HTTP {status_code}): {message}")


def completion_reply(body: object, latency_s: float = 0.0) -> Reply:
    """The ``Reply`` of a chat completion (a successful answer's JSON body).

    Raises ``TransientBackendError`` for a body without ``choices[0].message.content``.
    """
    try:
        choice = body["choices"][0]  # type: ignore[index]
        text = choice["message"]["content"] or ""
    except (KeyError, IndexError, TypeError) as exc:
        raise TransientBackendError(f"malformed response: {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise TransientBackendError(
            f"malformed response: message content is {type(text).__name__}, not text"
        )
    finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    usage = body.get("usage") if isinstance(body, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    return Reply(
        text=text,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        prompt_tokens=token_count(usage.get("prompt_tokens")),
        completion_tokens=token_count(usage.get("completion_tokens")),
        latency_s=latency_s,
        score_probabilities=from_token_list(
            logprobs.get("content") if isinstance(logprobs, dict) else None
        ),
    )


class OpenAIBackend(PlainBackend):
    """Judge through POST {base_url}/chat/completions; preflight lists the served models."""

    def __init__(self, config: OpenAIConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        headers = {}
        if key := os.environ.get(config.api_key_env):
            headers["Authorization"] = f"Bearer {key}"
        base = config.base_url.rstrip("/")
        timeout = httpx.Timeout(config.timeout_s, connect=PREFLIGHT_TIMEOUT_S)
        # A deadline for each whole request, however slowly the reply arrives.
        self.http = http_client(
            base_url=base, timeout=timeout, headers=headers, transport=transport
        )
        try:
            response = self.http.get("/models", timeout=PREFLIGHT_TIMEOUT_S)
            response.raise_for_status()
            served = [str(m["id"]) for m in response.json()["data"]]
        except httpx.HTTPError as exc:
            raise BackendUnavailable(
                f"OpenAI-compatible server not reachable at {base} ({exc}); start it or fix "
                "judge.openai.base_url"
            ) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendUnavailable(
                f"{base}/models does not answer like an OpenAI API ({exc})"
            ) from None
        if config.model not in served:
            raise BackendUnavailable(
                f"model '{config.model}' is not served at {base}; it serves: {', '.join(served)}"
            )
        self.identity = openai_identity(config, endpoint=base)

    def close(self) -> None:
        self.http.close()

    def request_body(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        return request_body(self.config, prompt, schema)

    def complete(self, request: JudgeRequest) -> Reply:
        body = self.request_body(request.prompt, request.schema)
        response, latency = post_json(
            self.http, "/chat/completions", body, "the server", "judge.openai.timeout_s"
        )
        if response.status_code >= 400:
            raise refusal(response.status_code, error_text(response))
        try:
            answer = response.json()
        except ValueError as exc:
            raise TransientBackendError(f"malformed response: {exc}") from exc
        return completion_reply(answer, latency)


class CachedOpenAI(PlainBackend):
    """The ``openai`` judge when no server answers: its identity (so its fingerprint and its
    cached replies), and no way to judge.

    For a run whose every reply is already in the cache, e.g. imported from a batch engine
    (``judge batch import``) that served the model without an HTTP server. Asked to judge
    anyway, it says why it cannot.
    """

    def __init__(self, config: OpenAIConfig, why: str) -> None:
        self.identity = openai_identity(config)
        self.why = why

    def close(self) -> None:
        pass

    def complete(self, request: JudgeRequest) -> Reply:
        raise BackendUnavailable(
            f"an item is not in the cache and no server can judge it ({self.why}); import its "
            "reply with 'judge batch import' or start the server"
        )
