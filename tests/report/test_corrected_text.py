"""The corrected estimates as text (``judge.report.corrected_text``): the terminal's lines and
report.md's table show each cell, what was left out and why, and a type name from data cannot
break the table."""

import re

import pytest

from judge.audit.agreement import audit_items
from judge.audit.types import AuditResult
from judge.report.audit_text import render_audit
from judge.report.corrected_text import corrected_markdown_lines
from tests.audit.test_ppi import _mixed


@pytest.fixture
def mixed() -> AuditResult:
    return audit_items("run-1", *_mixed())


def test_terminal_and_markdown_show_the_cells(mixed: AuditResult) -> None:
    text = render_audit(mixed, "lexical")
    assert "corrected estimates" in text
    assert "too few labels (3 of 10)" in text
    assert "labels on items without an ok verdict, not used: factual 2" in text
    lines = corrected_markdown_lines(mixed)
    rows = [line for line in lines if line.startswith("| factual ")]
    assert len(rows) == 1 and "12 (13 labels)" in rows[0]
    cell = mixed.corrected["faithfulness"]["factual"]
    assert cell.estimate is not None
    low, high = cell.estimate.shown
    assert f"{cell.estimate.value:.2f} [{low:.2f}, {high:.2f}]" in rows[0]
    assert any("too few labels (3 of 10)" in line for line in lines)
    assert lines[-1] == "Labels on items without an ok verdict, not used: factual 2."


def test_a_type_name_from_data_cannot_break_the_table() -> None:
    items, verdicts, labels = _mixed()
    items = {
        q: i.model_copy(update={"type": "neg|<b>x</b>"}) if i.type == "negative" else i
        for q, i in items.items()
    }
    lines = corrected_markdown_lines(audit_items("run-1", items, verdicts, labels))
    row = next(line for line in lines if "neg" in line)
    assert "<b>" not in row and "neg\\|" in row
    assert len(re.findall(r"(?<!\\)\|", row)) == 10  # 9 columns: the type's pipe is escaped


def test_the_estimates_say_how_many_labels_they_use_not_only_the_threshold() -> None:
    """On real labels (243 of them) the line said "shown from 10 labelled items": the
    threshold, read as the count. It now gives the count and calls the threshold one."""
    from judge.audit.types import CorrectedCell
    from judge.report.corrected_text import corrected_lines

    def cell(labelled: int, labels: int) -> CorrectedCell:
        return CorrectedCell(labelled, labelled, 1.5, labelled, labels, 0, 0, None, None)

    corrected = {"faithfulness": {"factual": cell(200, 203), "negative": cell(40, 40)}}
    lines = corrected_lines(corrected, {})  # type: ignore[arg-type]
    assert lines[2].startswith(
        "from 243 labels on 240 items judged ok; a type's estimate is shown once it has at "
        "least 10 labelled items judged ok; interval: PPI++"
    )
