"""The console summary: what a user sees after `judge run`."""

import json
from pathlib import Path
from typing import Any

from judge.config import Config
from judge.judging.backends.base import JudgeRequest
from judge.judging.verdict import Reply
from judge.pipeline.evaluate import evaluate
from judge.report.summary import REVIEW_LINES, console_summary
from tests.fakes import ScriptedBackend


def _flagged_or_failed(request: JudgeRequest) -> Reply:
    """A faithful verdict quoting nothing that is in the context (flagged); every fifth item
    a reply that is not JSON (failed)."""
    if len(request.prompt) % 5 == 0:
        return Reply(text="{not json", finish_reason="stop")
    payload = {"evidence": "この文はどこにもない。", "faithfulness": 2, "relevance": 2, "note": ""}
    return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")


def test_every_failed_verdict_is_named_and_flagged_ones_are_bounded(
    sample_config: Config, tmp_path: Path
) -> None:
    config = sample_config.with_overrides(
        reports={"dir": tmp_path / "reports"}, judge={"cache_path": tmp_path / "cache.sqlite3"}
    )
    result = evaluate(config, backend=ScriptedBackend(_flagged_or_failed))
    lines = console_summary(result.report, result.folder.path)
    failed = [v.question_id for v in result.report.verdicts if v.status != "ok"]
    flagged = [v.question_id for v in result.report.verdicts if v.status == "ok" and v.review]
    assert failed and len(flagged) > REVIEW_LINES  # the case this test is about
    named = [line.split(":")[0].strip() for line in lines if line.startswith("  q")]
    assert set(failed) <= set(named)
    assert len([q for q in named if q in flagged]) == REVIEW_LINES
    more = len(flagged) - REVIEW_LINES
    assert f"  … {more} more (report.md and review.html)" in lines


def test_the_lexical_judges_agreement_line_does_not_compare_it_with_itself(
    sample_config: Config, tmp_path: Path
) -> None:
    config = sample_config.with_overrides(
        reports={"dir": tmp_path / "reports"}, judge={"cache_path": tmp_path / "cache.sqlite3"}
    )
    result = evaluate(config, backend="lexical")
    assert result.report.audit is not None  # the sample's labels
    line = next(
        x for x in console_summary(result.report, result.folder.path) if "human labels" in x
    )
    assert "the lexical baseline itself (no second judge to compare with)" in line
    assert "on the same" not in line
    scripted = evaluate(config, backend=ScriptedBackend(_flagged_or_failed))
    other = console_summary(scripted.report, scripted.folder.path)
    assert any("lexical baseline" in x and "on the same" in x for x in other)


def test_a_closed_book_run_warns_in_the_console_and_report_md(tiny: Any) -> None:
    from tests.conftest import RUN

    closed = [RUN[0]] + [{**r, "retrieved": []} for r in RUN[1:]]
    config = tiny(run=closed)
    result = evaluate(config, backend="lexical", progress=False)
    console = "\n".join(console_summary(result.report, result.folder.path))
    assert "warning: closed-book: all 4 answers came with no context chunk" in console
    markdown = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "closed-book: all 4 answers came with no context chunk" in markdown
    assert "label chunks first" not in console
