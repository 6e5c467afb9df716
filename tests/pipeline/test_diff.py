"""``judge.pipeline.diff``: two runs compared name the questions whose answer or retrieval
changed, listed before the comparisons (issue 22, item 5)."""

from __future__ import annotations

from collections.abc import Callable

from judge.config import Config
from judge.pipeline.diff import changed_answers, diff_records
from judge.record.store import ReportsDir
from judge.report.show import diff_lines
from judge.results.compare import GateRule
from tests.conftest import run_lexical, worse_run

Tiny = Callable[..., Config]


def _folder(config: Config) -> str:
    return (config.reports.dir / "latest").read_text(encoding="utf-8").strip()


def test_diff_names_the_questions_whose_answer_or_retrieval_changed(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    first = _folder(config)
    run = worse_run()  # q1's relevant chunk pushed from rank 1 to rank 5
    run[3]["answer"] = "いいえ、iPadでは使えません。"  # q3's answer rewritten
    assert run_lexical(tiny(run=run)) == 0
    second = _folder(config)
    reports = ReportsDir(config.reports.dir)
    old, new = reports.folder(first).record(), reports.folder(second).record()
    changed = changed_answers(old, new)
    assert changed.answers == ["q3"]
    assert changed.retrieval == ["q1"]
    diff = diff_records(old, new, GateRule.from_config(config.reports))
    assert (diff.answers_changed, diff.retrieval_changed) == (("q3",), ("q1",))
    lines = diff_lines(diff)
    assert "answers changed: 1 (q3)" in lines
    assert "retrieval changed (context chunks or their order): 1 (q1)" in lines
    # Listed before the comparisons: what the moved means are to be read against.
    assert lines.index("answers changed: 1 (q3)") < next(
        i for i, line in enumerate(lines) if "within noise" in line
    )
    # The same run twice: nothing changed, and it says so.
    same = changed_answers(new, new)
    assert same.answers == [] and same.retrieval == []
    assert "answers changed: 0" in diff_lines(
        diff_records(new, new, GateRule.from_config(config.reports))
    )
