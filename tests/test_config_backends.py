"""The backends' settings (``judge.config_backends``): a pool's endpoints read and checked, each
server listed once however it is spelled."""

from pathlib import Path

import pytest

from judge.config import load_config
from judge.config_backends import OLLAMA_PORT, server_key
from judge.errors import ConfigError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "conf" / "judge.toml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


def test_endpoints_of_a_pool_are_checked(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[data]\nquestions = "q"\ncorpus = "c"\n'
        "[[judge.ollama.endpoints]]\n"
        'host = "http://gpu-a:11434"\nconcurrency = 4\n'
        "[[judge.ollama.endpoints]]\n"
        'host = "http://gpu-b:11434"\nconcurrency = 2\n'
        "[judge.openai]\n"
        'endpoints = [{base_url = "http://vllm-a:8000/v1", concurrency = 16}]\n',
    )
    config = load_config(path)
    endpoints = config.judge.ollama.endpoints
    assert endpoints is not None
    assert [(e.host, e.concurrency) for e in endpoints] == [
        ("http://gpu-a:11434", 4),
        ("http://gpu-b:11434", 2),
    ]
    assert config.judge.openai.endpoints is not None
    assert config.judge.openai.endpoints[0].concurrency == 16
    # A recorded configuration survives its round trips (overrides, re-rendering).
    assert config.with_overrides(judge={"concurrency": 2}).judge.ollama.endpoints == endpoints
    plain = tmp_path / "plain"
    plain.mkdir()
    assert (
        load_config(_write(plain, '[data]\nquestions = "q"\ncorpus = "c"\n')).judge.ollama.endpoints
        is None
    )


@pytest.mark.parametrize(
    ("endpoints", "said"),
    [
        (
            '[{host = "http://a:11434", concurrency = 2}, {host = "http://a:11434/", concurrency = 1}]',
            "judge.ollama: endpoints lists host http://a:11434 twice; give each server once",
        ),
        (
            '[{host = "http://a:11434", concurrency = 0}]',
            "judge.ollama.endpoints.0.concurrency: Input should be greater than or equal to 1",
        ),
        ('[{host = "http://a:11434"}]', "field 'judge.ollama.endpoints.0.concurrency' missing"),
        ('[{host = "http://a:11434", concurrency = "4"}]', "judge.ollama.endpoints.0.concurrency:"),
        ("[]", "judge.ollama: endpoints is empty; list the servers, or remove it to use host"),
        (
            '[{host = "http://a:11434", concurrency = 1, slots = 2}]',
            "unknown field 'judge.ollama.endpoints.0.slots'",
        ),
    ],
)
def test_bad_endpoints_are_errors_naming_them(tmp_path: Path, endpoints: str, said: str) -> None:
    path = _write(
        tmp_path,
        f'[data]\nquestions = "q"\ncorpus = "c"\n[judge.ollama]\nendpoints = {endpoints}\n',
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert any(line.startswith(f"{path}: {said}") for line in str(caught.value).splitlines()), str(
        caught.value
    )


def test_openai_endpoints_are_distinct_too(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[data]\nquestions = "q"\ncorpus = "c"\n[judge.openai]\nendpoints = ['
        '{base_url = "http://v:8000/v1", concurrency = 8}, '
        '{base_url = "http://v:8000/v1", concurrency = 8}]\n',
    )
    with pytest.raises(ConfigError, match="endpoints lists base_url http://v:8000/v1 twice"):
        load_config(path)


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("a", "http://a:11434"),
        ("a:11434", "http://a:11434"),
        ("http://a", "http://a:80"),
        ("HTTPS://A.example/", "https://a.example:443"),
        ("http://localhost:11434", "http://127.0.0.1:11434"),
        ("http://[::1]:11434", "http://127.0.0.1:11434"),
        ("http://0.0.0.0:11434", "http://127.0.0.1:11434"),
        ("http://[::ffff:10.0.0.1]:8000/v1/", "http://10.0.0.1:8000/v1"),
        ("http://[2001:db8::1]:8000", "http://[2001:db8::1]:8000"),
        ("http://a:notaport", "http://a:notaport"),
    ],
)
def test_a_server_is_spelled_one_way(url: str, key: str) -> None:
    assert server_key(url, OLLAMA_PORT) == key


def test_the_same_server_spelled_two_ways_is_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[data]\nquestions = "q"\ncorpus = "c"\n[judge.ollama]\nendpoints = ['
        '{host = "localhost", concurrency = 1}, '
        '{host = "http://127.0.0.1:11434", concurrency = 1}]\n',
    )
    with pytest.raises(ConfigError, match=r"the same server \(http://127\.0\.0\.1:11434\)"):
        load_config(path)


def test_a_panel_names_two_or_more_distinct_backends(tmp_path: Path) -> None:
    base = '[data]\nquestions = "q"\ncorpus = "c"\n[judge.panel]\n'
    config = load_config(_write(tmp_path, base + 'members = ["ollama", "openai", "lexical"]\n'))
    assert config.judge.panel is not None
    assert config.judge.panel.members == ("ollama", "openai", "lexical")
    (tmp_path / "none").mkdir()
    plain = _write(tmp_path / "none", '[data]\nquestions = "q"\ncorpus = "c"\n')
    assert load_config(plain).judge.panel is None


@pytest.mark.parametrize(
    ("members", "said"),
    [
        ('["ollama"]', "at least 2"),
        ('["lexical", "lexical"]', "names a backend twice"),
        ('["ollama", "auto"]', "members"),
        ('["ollama", "gpt"]', "members"),
    ],
)
def test_a_bad_panel_is_one_error_naming_it(tmp_path: Path, members: str, said: str) -> None:
    text = f'[data]\nquestions = "q"\ncorpus = "c"\n[judge.panel]\nmembers = {members}\n'
    with pytest.raises(ConfigError, match=said) as error:
        load_config(_write(tmp_path, text))
    assert "judge.panel" in str(error.value)
