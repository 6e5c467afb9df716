"""`judge nightly`: the gate's verdict is the first line, and no baseline does not pass."""

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config

Tiny = Callable[..., Config]


def test_nightly_prints_its_verdict_first(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert config.source is not None
    toml = config.source
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "lexical"\n'),
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "nightly"]) == 1  # no baseline yet: a nightly must not pass
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0]
        == "nightly: no compatible earlier run or baseline for retrieval and judge: nothing compared"
    )
    assert out[1].startswith("judge: lexical")
    assert main(["--config", str(toml), "nightly"]) == 0
    assert (
        capsys.readouterr().out.splitlines()[0] == "nightly: ok: no regression beyond the threshold"
    )


def test_ctrl_c_while_asking_the_adapter_still_gives_a_verdict_line(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    (tmp_path / "stopping_rag.py").write_text(
        "def answer(question):\n    raise KeyboardInterrupt\n", encoding="utf-8"
    )
    config = tiny()
    assert config.source is not None
    config.source.write_text(
        config.source.read_text(encoding="utf-8").replace(
            'run = "run.jsonl"', 'adapter = "stopping_rag:answer"\nadapter_concurrency = 1'
        ),
        encoding="utf-8",
    )
    try:
        assert main(["--config", str(config.source), "nightly"]) == 130
    finally:
        sys.modules.pop("stopping_rag", None)
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == (
        "nightly: FAILED (exit 130): stopped before anything was judged or written"
    )
    assert "interrupted: stopped before anything was judged or written" in captured.err
