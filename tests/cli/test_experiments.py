"""``judge.cli.experiments``: ``judge stability`` rejudges a sample with its variants, writes
its report and asks the judge nothing new the second time."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judge.cli import main
from judge.config import Config
from tests.cli.helpers import toml_of

Tiny = Callable[..., Config]


def test_stability_rejudges_a_sample_and_writes_its_report(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    args = ["--config", toml_of(config), "stability", "--backend", "lexical", "--sample", "3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "injection_en" in out and "injection_ja" in out and "reversed" in out
    (report,) = (config.reports.dir / "stability").glob("*.md")
    text = report.read_text(encoding="utf-8")
    assert "injection_ja" in text
    assert f"report: {report}" in out
    # Everything judged went through the cache: a second check asks the judge nothing new.
    assert main(args) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "12 verdicts, 12 from the cache" in header, header
