"""review.html with the further judgements on (issue 23): each chunk shows the judge's grade, a
possible missing label is marked and can be filtered for, correctness is shown and filtered;
in headless Chromium, on the shipped sample judged by the lexical baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.pipeline.evaluate import evaluate
from judge.record.model import Record
from judge.report.review_page import page_data
from tests.conftest import REPO
from tests.report import review_screens
from tests.report.review_screens import DESKTOP, open_page


@pytest.fixture(scope="module")
def further(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Record]:
    tmp = tmp_path_factory.mktemp("further")
    config = review_screens.sample_config(tmp).with_overrides(
        judge={
            "chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md"},
            "correctness": {"enabled": True, "prompt": REPO / "prompts" / "correctness.v1.md"},
        }
    )
    result = evaluate(config, backend="lexical", progress=False)
    return result.folder.path, result.report


def _visible(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "Array.from(document.querySelectorAll('section.item')).filter(s => !s.hidden)"
            ".map(s => s.dataset.qid)"
        )
    )


def test_page_data_carries_each_chunks_grade_and_the_missing_labels(
    further: tuple[Path, Record],
) -> None:
    _, report = further
    assert report.chunks is not None
    data = page_data(report)
    assert data["chunks_graded"] and data["correctness_judged"]
    items = {item["question_id"]: item for item in data["items"]}
    for m in report.chunks.missing:
        grade = items[m.question_id]["chunk_grades"][m.chunk_id]
        assert grade["missing_label"] and grade["grade"] == m.grade
        assert m.chunk_id in items[m.question_id]["missing_labels"]
    flagged = sum(g["missing_label"] for i in items.values() for g in i["chunk_grades"].values())
    assert flagged == len(report.chunks.missing)
    # Each further judgement's cost, beside the answers', in report.md.
    asked = sum(r.correctness is not None for r in report.questions)
    text = (further[0] / "report.md").read_text(encoding="utf-8")
    assert f"- correctness: {asked} calls (0 from the cache), tokens not reported" in text


def test_the_missing_label_filter_shows_exactly_those_questions(
    browser: Any, further: tuple[Path, Record]
) -> None:
    folder, report = further
    assert report.chunks is not None
    page, problems = open_page(browser, folder, DESKTOP)
    expected = {m.question_id for m in report.chunks.missing}
    page.select_option("#f-chunks", "missing")
    assert set(_visible(page)) == expected
    option = page.locator("#f-chunks option[value=missing]").inner_text()
    assert option == f"possible missing label ({len(expected)})"
    # Correctness 0 shows the answers the judge found wrong against the reference.
    page.select_option("#f-chunks", "c0")
    wrong = {
        r.question_id
        for r in report.questions
        if r.correctness is not None
        and r.correctness.status == "ok"
        and r.correctness.correctness == 0
    }
    assert set(_visible(page)) == wrong
    page.select_option("#f-chunks", "")
    # An opened item shows each chunk's grade, and marks the possible missing label.
    first = report.chunks.missing[0]
    page.evaluate(f"location.hash = '#{first.question_id}'")
    section = page.locator(f"section.item[data-qid='{first.question_id}']")
    section.locator(".chunk .cid").first.wait_for()
    headers = section.locator(".chunk .cid").all_inner_texts()
    assert all("judge grade" in text for text in headers)
    marked = section.locator(".chunk .cid.missing-label").all_inner_texts()
    assert any(first.chunk_id in text and "possible missing label" in text for text in marked)
    assert section.locator(".badge", has_text="correctness").count() == 1
    assert problems == []


def test_without_the_further_judgements_the_filter_is_hidden(browser: Any, tmp_path: Path) -> None:
    folder = review_screens.sample_review(tmp_path)
    page, problems = open_page(browser, folder, DESKTOP)
    assert page.locator("#f-chunks").is_hidden()
    assert page.locator(".chunk .grade-reason").count() == 0
    assert problems == []


def test_a_reviewers_mark_carries_correctness_and_imports_as_a_label(
    browser: Any, further: tuple[Path, Record], tmp_path: Path
) -> None:
    """Where the judge gave correctness, the mark box asks for it, "agree" takes the judge's,
    and the exported marks carry both (the import reads them: judge.audit.marks)."""
    import json as _json

    from judge.audit.marks import parse_marks
    from judge.inputs.golden import load_golden

    folder, report = further
    row = next(
        r for r in report.questions if r.correctness is not None and r.correctness.status == "ok"
    )
    page, problems = open_page(browser, folder, DESKTOP)
    page.evaluate(f"location.hash = '#{row.question_id}'")
    section = page.locator(f"section.item[data-qid='{row.question_id}']")
    section.locator("select.mark-correctness").wait_for()
    section.locator("button.agree").click()
    with page.expect_download() as download:
        page.click("#export")
    path = tmp_path / "marks.json"
    download.value.save_as(path)
    exported = _json.loads(path.read_text(encoding="utf-8"))
    mark = exported["marks"][0]
    assert mark["judge_correctness"] == mark["correctness"] == row.correctness.correctness
    golden = load_golden(review_screens.sample_config(tmp_path).data)
    labels = parse_marks(path, golden.by_id(), "reviewer-c")
    assert [label.correctness for label in labels] == [row.correctness.correctness]
    assert problems == []
