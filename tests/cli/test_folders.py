"""``judge.cli.folders``: the commands on saved report folders (``show``, ``diff``,
``report``, ``baseline``) on the command line."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import run_lexical, worse_run

Tiny = Callable[..., Config]


def _folder(config: Config) -> str:
    return (config.reports.dir / "latest").read_text(encoding="utf-8").strip()


def test_judge_diff_names_the_changed_answers(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    first = _folder(config)
    run = worse_run()
    run[3]["answer"] = "いいえ、iPadでは使えません。"
    assert run_lexical(tiny(run=run)) == 0
    second = _folder(config)
    capsys.readouterr()
    assert config.source is not None
    assert main(["--config", str(config.source), "diff", first, second]) == 0
    out = capsys.readouterr().out
    assert "answers changed: 1 (q3)" in out
    assert "retrieval changed (context chunks or their order): 1 (q1)" in out
