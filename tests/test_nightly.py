"""`judge nightly`: the gate's verdict is the first line, and no baseline does not pass."""

from collections.abc import Callable

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
    tiny_adapter: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny_adapter(
        "stopping_rag",
        "def answer(question):\n    raise KeyboardInterrupt\n",
        "adapter_concurrency = 1",
    )
    assert main(["--config", str(config.source), "nightly"]) == 130
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == (
        "nightly: FAILED (exit 130): stopped before anything was judged or written"
    )
    assert "interrupted: stopped before anything was judged or written" in captured.err
