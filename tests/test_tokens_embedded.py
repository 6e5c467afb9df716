"""report.md's token totals with the real embedded judge (slow: it loads the Gemma 3 270M).

llama.cpp reports its counts for every reply, so the section is a table with numbers, and the
manifest holds the same totals as the record."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judge.config import Config
from judge.pipeline.evaluate import evaluate

pytestmark = pytest.mark.slow


def test_report_md_shows_the_embedded_judges_token_totals(tiny: Callable[..., Config]) -> None:
    config = tiny().with_overrides(judge={"backend": "embedded"})
    result = evaluate(config, progress=False)
    totals = result.report.tokens
    ok = [v for v in result.report.verdicts if v.status == "ok"]
    assert ok and totals.reported
    assert totals.total.prompt_tokens is not None and totals.total.prompt_tokens > 100 * len(ok)
    assert totals.total.completion_tokens is not None and totals.total.completion_tokens > 0
    report = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "## Tokens and time" in report  # the section report.md renders (tokens_text)
    section = report.split("## Tokens and time", 1)[1].split("\n## ", 1)[0]
    (row,) = [line for line in section.splitlines() if line.startswith("| all | ")]
    assert f" | {totals.total.prompt_tokens:,} | {totals.total.completion_tokens:,} | " in row
    assert "not reported" not in section
