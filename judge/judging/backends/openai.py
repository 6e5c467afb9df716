"""Any OpenAI-compatible chat completions server: vLLM, llama.cpp's server, LM Studio.

The route for a judge served on a GPU cluster. Servers differ in how they take a JSON schema
(``judge.openai.response_format``) and none reports a model digest, so the fingerprint pins the
model by name only: re-deploying different weights under the same name is invisible here.
Over-long prompts: servers answer 400 naming the context length; that becomes ``truncated``.
A server that cut prompts silently instead could not be detected from here.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from judge.config import OpenAIConfig
from judge.errors import (
    BackendRequestError,
    BackendUnavailable,
    PromptTooLong,
    TransientBackendError,
)
from judge.judging.backends import (
    BackendIdentity,
    JudgeRequest,
    error_text,
    http_client,
    post_json,
)
from judge.judging.verdict import Reply

PREFLIGHT_TIMEOUT_S = 5.0
# How servers word a prompt longer than their context: vLLM ("maximum context length"),
# llama-cpp-python ("exceed context window"), llama.cpp's server ("exceeds the available
# context size", type exceed_context_size_error).
_CONTEXT_WORDS = ("context length", "context window", "context size", "maximum context", "too long")


class OpenAIBackend:
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
        self.identity = BackendIdentity(
            kind="openai",
            model=config.model,
            digest=None,
            options={
                "temperature": 0,
                "seed": config.seed,
                "max_tokens": config.max_tokens,
                "response_format": config.response_format,
            },
            endpoint=base,
        )

    def close(self) -> None:
        self.http.close()

    def request_body(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        if self.config.response_format == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": schema, "strict": True},
            }
        else:
            response_format = {"type": "json_object", "schema": schema}
        return {
            "model": self.config.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
            "seed": self.config.seed,
            "max_tokens": self.config.max_tokens,
            "response_format": response_format,
            "stream": False,
        }

    def complete(self, request: JudgeRequest) -> Reply:
        body = self.request_body(request.prompt, request.schema)
        response, latency = post_json(
            self.http, "/chat/completions", body, "the server", "judge.openai.timeout_s"
        )
        if response.status_code >= 400:
            error = error_text(response)
            if response.status_code in (400, 413) and any(
                w in error.lower() for w in _CONTEXT_WORDS
            ):
                raise PromptTooLong(f"the server says: {error}")
            if response.status_code >= 500 or response.status_code == 429:
                raise TransientBackendError(f"HTTP {response.status_code}: {error}")
            raise BackendRequestError(
                f"the server refused the request (HTTP {response.status_code}): {error}"
            )
        try:
            body = response.json()
            choice = body["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TransientBackendError(f"malformed response: {exc}") from exc
        usage = body.get("usage") or {}
        return Reply(
            text=text,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency_s=latency,
        )
