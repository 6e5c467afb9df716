"""``judge check`` on the command line: the judge is preflighted (exit 3 naming the URL when
Ollama does not answer, as ``judge run``), and ``--no-judge`` skips it for offline use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config

Tiny = Callable[..., Config]


def _unreachable(config: Config) -> str:
    assert config.source is not None
    toml = Path(config.source)
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "ollama"\n')
        + '\n[judge.ollama]\nhost = "http://127.0.0.1:9"\n',
        encoding="utf-8",
    )
    return str(toml)


def test_check_with_an_unreachable_ollama_exits_3_naming_the_url(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _unreachable(tiny())
    assert main(["--config", toml, "check"]) == 3
    captured = capsys.readouterr()
    assert captured.err.startswith("error: Ollama not reachable at http://127.0.0.1:9")
    assert "'ollama serve'" in captured.err
    assert "ok" not in captured.out.split()


def test_check_no_judge_passes_offline(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    toml = _unreachable(tiny())
    assert main(["--config", toml, "check", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert "judge:     not checked (--no-judge)" in out
    assert out.rstrip().endswith("ok")


def test_check_shows_the_judge_the_answers_and_the_cache(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert config.source is not None
    assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 0
    capsys.readouterr()
    toml = Path(config.source)
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "lexical"\n'),
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "check"]) == 0
    out = capsys.readouterr().out
    assert "judge:     lexical · " in out
    assert "           (backend = lexical)" in out
    assert "cache:     4 of 4 answers judged already (from the cache); 0 to judge" in out
    assert "answers:   a run file: no adapter is asked" in out
    assert out.rstrip().endswith("ok")


def test_check_preflights_the_backend_the_option_names(
    tiny: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    # As `judge run --backend lexical` would judge: no model opened, and the cache counted.
    config = tiny()
    assert config.source is not None
    assert main(["--config", str(config.source), "check", "--backend", "lexical"]) == 0
    out = capsys.readouterr().out
    assert "judge:     lexical · lexical-v5" in out
    assert "cache:     0 of 4 answers judged already (from the cache); 4 to judge" in out
