import pytest

from judge.config import JudgeConfig
from judge.errors import BackendUnavailable, ConfigError
from judge.judging.backends import registry
from judge.judging.backends.registry import open_backend
from tests.fakes import ScriptedBackend


def test_auto_prefers_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    ollama = ScriptedBackend(model="gemma3:12b")
    monkeypatch.setattr(registry, "_ollama", lambda config: ollama)
    opened = open_backend(JudgeConfig(backend="auto"))
    assert opened.backend is ollama and opened.reason == "auto: Ollama answered"


def test_auto_falls_back_to_embedded_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_ollama(config: JudgeConfig) -> ScriptedBackend:
        raise BackendUnavailable("Ollama not reachable at http://127.0.0.1:11434")

    embedded = ScriptedBackend(model="gemma-3-270m")
    monkeypatch.setattr(registry, "_ollama", no_ollama)
    monkeypatch.setattr(registry, "_embedded", lambda config: embedded)
    opened = open_backend(JudgeConfig(backend="auto"))
    assert opened.backend is embedded
    assert opened.reason == (
        "auto: Ollama not used (Ollama not reachable at http://127.0.0.1:11434); "
        "using the embedded model"
    )


def test_explicit_backend_does_not_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_ollama(config: JudgeConfig) -> ScriptedBackend:
        raise BackendUnavailable("Ollama not reachable")

    monkeypatch.setattr(registry, "_ollama", no_ollama)
    monkeypatch.setitem(registry.BACKENDS, "ollama", no_ollama)
    with pytest.raises(BackendUnavailable):
        open_backend(JudgeConfig(backend="ollama"))


def test_lexical_needs_nothing() -> None:
    opened = open_backend(JudgeConfig(backend="lexical"))
    assert opened.backend.identity.kind == "lexical"
    assert opened.reason == "backend = lexical"


def test_config_rejects_unknown_backend() -> None:
    with pytest.raises(ValueError):
        JudgeConfig(backend="gpt")  # type: ignore[arg-type]
    assert ConfigError  # the CLI turns this into a one-line error (tests/test_cli.py)


def test_auto_with_neither_judge_names_both_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_ollama(config: JudgeConfig) -> ScriptedBackend:
        raise BackendUnavailable("Ollama not reachable at http://127.0.0.1:11434")

    def no_embedded(config: JudgeConfig) -> ScriptedBackend:
        raise BackendUnavailable("the embedded judge needs llama-cpp-python: run 'make setup'")

    monkeypatch.setattr(registry, "_ollama", no_ollama)
    monkeypatch.setattr(registry, "_embedded", no_embedded)
    with pytest.raises(BackendUnavailable) as caught:
        open_backend(JudgeConfig(backend="auto"))
    assert str(caught.value) == (
        "no judge can run: Ollama: Ollama not reachable at http://127.0.0.1:11434; "
        "embedded: the embedded judge needs llama-cpp-python: run 'make setup'"
    )
