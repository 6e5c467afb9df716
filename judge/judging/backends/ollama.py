"""The production judge: a Gemma model served by Ollama.

The official ``ollama`` client lists the installed models (for the digest); the chat request
itself goes through httpx because the client cannot send ``"truncate": false`` and
``"shift": false`` (Ollama 0.12.6+): the first turns silent truncation of an over-long prompt
into HTTP 400, the second stops generation at the context limit instead of shifting the
instructions out of the window mid-reply. On older servers, which can do neither, a reply
whose prompt and output tokens together reached ``num_ctx`` is treated as truncated.
From 0.12.11 it also asks for token log-probabilities, from which the score distributions are
read (``judge.judging.confidence``).
"""

from __future__ import annotations

from typing import Any

import httpx
import ollama

from judge.config_backends import OllamaConfig
from judge.errors import (
    BackendRequestError,
    BackendUnavailable,
    PromptTooLong,
    TransientBackendError,
)
from judge.judging.backends.base import BackendIdentity, JudgeRequest, PlainBackend, token_count
from judge.judging.backends.http import deadline_hooks, error_text, http_client, post_json
from judge.judging.confidence import from_token_list
from judge.judging.verdict import Reply

#: The first Ollama release that accepts "truncate": false.
TRUNCATE_FLAG_SINCE = (0, 12, 6)
#: The first Ollama release that returns token log-probabilities from /api/chat.
LOGPROBS_SINCE = (0, 12, 11)
#: Candidates per token: enough to hold the three scores at a score's position.
TOP_LOGPROBS = 5
PREFLIGHT_TIMEOUT_S = 5.0


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("-")[0].split("."):
        if not (piece.isascii() and piece.isdigit() and len(piece) < 10):  # "²" is a digit too
            break
        parts.append(int(piece))
    return tuple(parts)


def _server_version(reply: object) -> str:
    """The version string of an /api/version reply; ValueError if it is not Ollama's."""
    version = reply.get("version") if isinstance(reply, dict) else None
    if not isinstance(version, str) or not version.strip():
        shown = " ".join(repr(reply).split())[:80]
        example = '{"version": "0.12.6"}'
        raise ValueError(f"/api/version answered {shown}, not a version like {example}")
    return version


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


class OllamaBackend(PlainBackend):
    """Judge through Ollama's /api/chat; preflight on construction."""

    def __init__(self, config: OllamaConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        host = config.host.rstrip("/")
        # The timeout covers time queued in the server behind other requests, not just compute;
        # it is a deadline for each whole request, however slowly the reply arrives.
        timeout = httpx.Timeout(config.timeout_s, connect=PREFLIGHT_TIMEOUT_S)
        self.http = http_client(base_url=host, timeout=timeout, transport=transport)
        self.client = ollama.Client(
            host=host,
            timeout=PREFLIGHT_TIMEOUT_S,
            transport=transport,
            event_hooks=deadline_hooks(),  # its timeout too is a deadline, not per read
        )
        hint = f"start it with 'ollama serve', then 'ollama pull {config.model}'"
        try:
            version = _server_version(
                self.http.get("/api/version", timeout=PREFLIGHT_TIMEOUT_S).json()
            )
            # The client parses /api/tags itself: a list or a string there is a TypeError.
            models = self.client.list().models
        except (httpx.TransportError, ConnectionError) as exc:
            raise BackendUnavailable(f"Ollama not reachable at {host} ({exc}); {hint}") from None
        except (ValueError, KeyError, TypeError, ollama.ResponseError) as exc:
            raise BackendUnavailable(
                f"{host} does not answer like Ollama ({_one_line(exc)}); is judge.ollama.host "
                f"the Ollama server? {hint}"
            ) from None
        wanted = {config.model, f"{config.model}:latest"}
        digest = next((m.digest for m in models if m.model in wanted), None)
        if digest is None:
            raise BackendUnavailable(
                f"model '{config.model}' is not pulled on the Ollama at {host}; "
                f"run 'ollama pull {config.model}'"
            )
        self.truncate_flag = _version_tuple(version) >= TRUNCATE_FLAG_SINCE
        self.logprobs = _version_tuple(version) >= LOGPROBS_SINCE
        self.identity = BackendIdentity(
            kind="ollama",
            model=config.model,
            digest=digest,
            # Whether replies carry score probabilities: cached ones without them are not reused
            # by a server that gives them.
            options=self._options() | {"score_probabilities": self.logprobs},
            endpoint=host,
            server_version=version,
        )

    def close(self) -> None:
        self.http.close()
        self.client.close()  # type: ignore[no-untyped-call]  # untyped in ollama 0.6

    def _options(self) -> dict[str, Any]:
        return {
            "temperature": 0,
            "seed": self.config.seed,
            "num_ctx": self.config.num_ctx,
            "num_predict": self.config.num_predict,
        }

    def request_body(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The /api/chat body: one user turn (Gemma has no system role), schema as format."""
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": "user", "content": prompt}],
            "stream": False,
            "format": schema,
            "options": self._options(),
            "keep_alive": self.config.keep_alive,
        }
        if self.truncate_flag:
            body["truncate"] = False
            body["shift"] = False
        if self.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = TOP_LOGPROBS
        return body

    def complete(self, request: JudgeRequest) -> Reply:
        body = self.request_body(request.prompt, request.schema)
        response, latency = post_json(
            self.http, "/api/chat", body, "Ollama", "judge.ollama.timeout_s"
        )
        if response.status_code >= 400:
            self._raise_for(response)
        try:
            body = response.json()
            text = str(body["message"]["content"])
        except (ValueError, KeyError, TypeError) as exc:
            raise TransientBackendError(f"Ollama sent a malformed response: {exc}") from exc
        # Both counts are optional (``omitempty``): absent, they are "not reported", never 0.
        prompt_tokens = token_count(body.get("prompt_eval_count"))
        reply_tokens = token_count(body.get("eval_count"))
        used = (prompt_tokens or 0) + (0 if self.truncate_flag else reply_tokens or 0)
        if prompt_tokens is not None and used >= self.config.num_ctx:
            raise PromptTooLong(
                f"Ollama used {used} tokens of num_ctx {self.config.num_ctx}: the prompt was cut "
                "or shifted to fit; raise judge.ollama.num_ctx"
            )
        return Reply(
            text=text,
            finish_reason=body.get("done_reason") or None,
            prompt_tokens=prompt_tokens,
            completion_tokens=reply_tokens,
            latency_s=latency,
            score_probabilities=from_token_list(body.get("logprobs")),
        )

    def _raise_for(self, response: httpx.Response) -> None:
        status, error = response.status_code, error_text(response)
        if status == 400 and "context length" in error:
            raise PromptTooLong(f"{error}; raise judge.ollama.num_ctx or shorten the context")
        if status == 404:
            raise BackendUnavailable(
                f"Ollama: {error} (HTTP 404); run 'ollama pull {self.config.model}'"
            )
        if status >= 500 or status == 429:
            raise TransientBackendError(f"Ollama HTTP {status}: {error}")
        raise BackendRequestError(f"Ollama refused the request (HTTP {status}): {error}")
