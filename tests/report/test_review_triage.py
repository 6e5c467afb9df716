"""review.html for triage at scale (issue 21): the shipped sample judged by the lexical baseline,
in headless Chromium at desktop and phone width. Rows show the question, the scores written and
coloured, and the diagnosis; the page opens worst first; a search over questions, answers and
chunks; counts by type and diagnosis; the reference answer, the prompt (once) and the raw reply;
readable times; a header that leaves a phone its screen."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.hashing import text_sha256
from judge.judging.types import EvidenceMatch
from judge.record.model import Record
from judge.record.store import read_record
from judge.report.review_page import page_data, prompt_view, render_review_page
from judge.results.diagnosis import DIAGNOSES
from tests.conftest import QUESTIONS, REPO, run_lexical
from tests.report import review_screens
from tests.report.review_screens import DESKTOP, PHONE, header_height, open_page

Tiny = Callable[..., Config]
ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
PROMPT = REPO / "prompts" / "judge.v1.md"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Record]:
    """The shipped sample's report folder (lexical judge) and its record, read back."""
    folder = review_screens.sample_review(tmp_path_factory.mktemp("sample"))
    return folder, read_record(folder)


def _visible(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "Array.from(document.querySelectorAll('section.item')).filter(s => !s.hidden)"
            ".map(s => s.dataset.qid)"
        )
    )


def _fold(text: str) -> str:
    """What the page's search folds (NFKC, lower case)."""
    return unicodedata.normalize("NFKC", text).lower()


def _worst_first(record: Record) -> list[str]:
    """The order the page opens in, by its rule: needs review, then a diagnosis other than ok,
    then the lowest score sum (no scores first), then the diagnoses' order, then golden order."""
    judged = [row for row in record.questions if row.item is not None and row.verdict is not None]
    failed = [row for row in record.questions if row.failure is not None]

    def key(pair: tuple[int, Any]) -> tuple[int, int, int, int, int]:
        position, row = pair
        verdict = row.verdict
        scores = (
            verdict.faithfulness + verdict.relevance
            if verdict is not None and verdict.status == "ok"
            else -1
        )
        return (
            not row.triage.needs_review if verdict is not None else True,
            row.diagnosis == "ok",
            scores,
            DIAGNOSES.index(row.diagnosis),
            position,
        )

    return [row.question_id for _, row in sorted(enumerate(judged + failed), key=key)]


# --- desktop ---------------------------------------------------------------------------------


def test_the_sample_opens_worst_first_with_questions_scores_and_diagnoses(
    browser: Any, sample: tuple[Path, Record]
) -> None:
    folder, record = sample
    page, problems = open_page(browser, folder, DESKTOP)
    rows = {row.question_id: row for row in record.questions}
    assert page.locator("section.item").count() == len(rows) == 30
    assert page.input_value("#sort") == "worst"

    # Worst first: every item that needs review before every other, then the other diagnoses.
    order = _visible(page)
    assert order == _worst_first(record)
    review = [rows[q].triage.needs_review for q in order]
    assert review == sorted(review, reverse=True) and any(review) and not all(review)
    rest = [rows[q].diagnosis for q in order if not rows[q].triage.needs_review]
    assert [d == "ok" for d in rest] == sorted(d == "ok" for d in rest)

    # Each row: the question's text, the scores written (and coloured), the diagnosis.
    for qid, row in rows.items():
        line = page.locator(f'section[data-qid="{qid}"] .row')
        assert line.locator(".qtext").inner_text() == row.question
        assert line.locator(".diag").inner_text() == row.diagnosis
        verdict = row.verdict
        assert verdict is not None and verdict.status == "ok"
        text = line.inner_text()
        assert f"F{verdict.faithfulness} R{verdict.relevance}" in text
    # F0 and F2 differ in their words, not only in colour.
    worst = next(q for q in order if rows[q].verdict.faithfulness == 0)  # type: ignore[union-attr]
    best = next(q for q in order if rows[q].verdict.faithfulness == 2)  # type: ignore[union-attr]
    zero = page.locator(f'section[data-qid="{worst}"] .score').first
    two = page.locator(f'section[data-qid="{best}"] .score').first
    assert (zero.inner_text(), two.inner_text()) == ("F0", "F2")
    colour = "e => getComputedStyle(e).backgroundColor"
    assert zero.evaluate(colour) != two.evaluate(colour)
    title = page.get_attribute(f'section[data-qid="{worst}"] .scores', "title") or ""
    assert title.startswith("faithfulness 0 of 2")

    # The counts at the top: by type and diagnosis, as the record has them.
    table = page.evaluate(
        "(() => { const heads = Array.from(document.querySelectorAll('#counts thead th'))"
        ".map(th => th.textContent); return Array.from(document.querySelectorAll('#counts tbody tr'))"
        ".map(tr => [tr.querySelector('th').textContent, Object.fromEntries(Array.from("
        "tr.querySelectorAll('td')).map((td, i) => [heads[i + 1], Number(td.textContent)]))]); })()"
    )
    shown = dict(table)
    types = [*dict.fromkeys(row.type for row in record.questions), "all"]
    assert list(shown) == types
    for type_ in types:
        mine = [r for r in record.questions if type_ == "all" or r.type == type_]
        counts = Counter(r.diagnosis for r in mine)
        want: dict[str, int] = {
            "n": len(mine),
            "needs review": sum(r.triage.needs_review for r in mine),
        }
        want.update({d: counts[d] for d in DIAGNOSES})
        assert shown[type_] == want, type_
    # A count is a link to what it counts.
    page.click('#counts tr[data-type="factual"] button[title="show factual, generation"]')
    expected = [q for q in order if rows[q].type == "factual" and rows[q].diagnosis == "generation"]
    assert _visible(page) == expected and expected
    assert page.input_value("#f-diag") == "generation" and page.input_value("#f-type") == "factual"
    page.select_option("#f-type", "")
    page.select_option("#f-diag", "retrieval miss")
    assert _visible(page) == [q for q in order if rows[q].diagnosis == "retrieval miss"]
    page.select_option("#f-diag", "!ok")
    assert _visible(page) == [q for q in order if rows[q].diagnosis != "ok"]
    page.select_option("#f-diag", "")
    option = page.locator('#f-diag option[value="retrieval miss"]').inner_text()
    assert (
        option == f"retrieval miss ({sum(r.diagnosis == 'retrieval miss' for r in rows.values())})"
    )

    # Readable times, the ISO text only as a tooltip.
    when = page.inner_text("#run-when")
    assert when.startswith("run ") and not ISO.search(when)
    assert record.manifest.started_at[:4] in when and "judged in" in when
    assert (page.get_attribute("#run-when", "title") or "").startswith(record.manifest.started_at)
    assert problems == []
    page.context.close()


def test_the_search_finds_questions_answers_and_chunk_text(
    browser: Any, sample: tuple[Path, Record]
) -> None:
    folder, record = sample
    page, problems = open_page(browser, folder, DESKTOP)
    items = {item.question_id: item for item in record.items}
    hay = {
        qid: _fold("\n".join([item.question, item.answer, *(c.text for c in item.context)]))
        for qid, item in items.items()
    }

    def expected(query: str) -> list[str]:
        words = _fold(query).split()
        return [q for q in _visible_all(page) if all(w in hay[q] for w in words)]

    # A question's own words (full width, as the user typed them) find it.
    q09 = items["q09"].question
    assert "ｉＣｌｏｕｄ" in q09
    page.fill("#search", "ｉＣｌｏｕｄ")
    assert "q09" in _visible(page) and _visible(page) == expected("icloud")
    assert page.inner_text("#shown").startswith(f"{len(_visible(page))} of 30 shown")
    page.fill("#search", "icloud")  # the same, folded
    assert _visible(page) == expected("icloud")

    # Text found only in a chunk (not in any question or answer) finds the items that saw it.
    asked = _fold("\n".join(i.question + "\n" + i.answer for i in items.values()))
    chunk_only = next(
        piece
        for item in items.values()
        for chunk in item.context
        for piece in (_fold(chunk.text)[i : i + 8] for i in range(0, len(chunk.text) - 8, 8))
        if piece.strip() == piece and " " not in piece and piece not in asked
    )
    page.fill("#search", chunk_only)
    found = _visible(page)
    assert found and found == expected(chunk_only)
    # An answer's text; two words must both occur.
    answer = items["q14"].answer
    page.fill("#search", answer[:6])
    assert "q14" in _visible(page) and _visible(page) == expected(answer[:6])
    page.fill("#search", answer[:6] + " zzzz-not-there")
    assert _visible(page) == []
    assert page.inner_text("#shown").startswith("0 of 30 shown")
    # With a filter, and cleared by a link to an item.
    page.fill("#search", "icloud")
    page.select_option("#f-type", "procedural")
    assert _visible(page) == [q for q in expected("icloud") if items[q].type == "procedural"]
    page.evaluate("location.hash = '#q14'")
    page.wait_for_function("!document.querySelector('section[data-qid=\"q14\"] .detail').hidden")
    assert page.input_value("#search") == "" and len(_visible(page)) == 30
    assert problems == []
    page.context.close()


def _visible_all(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "Array.from(document.querySelectorAll('section.item')).map(s => s.dataset.qid)"
        )
    )


def test_an_item_shows_its_reference_the_prompt_once_and_the_raw_reply(
    browser: Any, sample: tuple[Path, Record]
) -> None:
    folder, record = sample
    page, problems = open_page(browser, folder, DESKTOP)
    row = next(r for r in record.questions if r.question_id == "q14")
    assert row.verdict is not None
    page.click('section[data-qid="q14"] .row')
    item = page.locator('section[data-qid="q14"]')
    # The reference answer, and where it came from (the lexical judge reads no prompt).
    assert item.locator(".reference-note").inner_text() == (
        "from the golden set (its reference_answer); this judge (lexical · lexical-v6) reads no "
        "prompt and never saw it"
    )
    golden = next(
        json.loads(line)
        for line in (REPO / "golden/sample/questions.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if '"q14"' in line
    )
    assert item.locator(".text.reference").inner_text() == golden["reference_answer"]
    # The raw reply, as the judge gave it.
    raw = item.locator("details.raw")
    assert (
        raw.locator("summary")
        .inner_text()
        .startswith(f"Raw reply of the judge ({len(row.verdict.raw_reply)} characters")
    )
    raw.locator("summary").click()
    assert raw.locator("pre.raw-reply").inner_text() == row.verdict.raw_reply
    assert (
        raw.locator(".source").inner_text() == "this judge reads no prompt (lexical · lexical-v6)"
    )
    # The prompt: once, at the top, never inside an item.
    assert page.locator("#prompt-text").count() == 1
    assert page.locator("#items .prompt-text").count() == 0
    title = page.inner_text("#prompt-title")
    assert title.startswith("The prompt file of this run: judge.v1.md (sha256 ")
    page.click("#prompt-title")
    assert page.text_content("#prompt-text") == PROMPT.read_text(encoding="utf-8")
    assert "reads no prompt" in page.inner_text("#prompt-note")

    # A mark's time is readable too (the ISO text as its tooltip).
    page.click('section[data-qid="q14"] button.agree')
    state = item.locator(".mark-state")
    assert state.inner_text().startswith("Marked: agree (F0 R2) · ")
    assert not ISO.search(state.inner_text()) and ISO.match(state.get_attribute("title") or "")
    assert problems == []
    page.context.close()


# --- phone -----------------------------------------------------------------------------------


def test_at_phone_width_the_header_takes_at_most_a_fifth(
    browser: Any, sample: tuple[Path, Record], tmp_path: Path
) -> None:
    folder, record = sample
    page, problems = open_page(browser, folder, PHONE)
    assert header_height(page) <= PHONE["height"] / 5
    # The page is no wider than the phone (the counts table scrolls in its own box).
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # Search, counts and the first rows are on the screen; the filters fold behind a button.
    assert page.locator("#search").is_visible() and page.locator("#shown").is_visible()
    assert not page.locator("#f-type").is_visible()
    assert page.locator("section.item .qtext").first.is_visible()
    page.click("#toggle-controls")
    assert page.locator("#f-type").is_visible()
    assert page.get_attribute("#toggle-controls", "aria-expanded") == "true"
    page.select_option("#f-type", "negative")
    assert page.inner_text("#toggle-controls") == "filters (1 on)"
    page.click("#toggle-controls")
    assert not page.locator("#f-type").is_visible()
    assert header_height(page) <= PHONE["height"] / 5
    negatives = [r.question_id for r in record.questions if r.type == "negative"]
    assert sorted(_visible(page)) == sorted(negatives)
    page.click("#toggle-controls")
    page.select_option("#f-type", "")
    page.click("#toggle-controls")
    page.fill("#search", "ｉＣｌｏｕｄ")
    assert "q09" in _visible(page)
    # Still a fifth once scrolled (sticky) and with an item open.
    page.fill("#search", "")
    page.click('section[data-qid="q09"] .row')
    page.mouse.wheel(0, 1500)
    assert page.evaluate("document.querySelector('header').getBoundingClientRect().top") == 0
    assert header_height(page) <= PHONE["height"] / 5
    assert problems == []
    page.context.close()

    # Wider again: the filters are back in the header.
    page, problems = open_page(browser, folder, DESKTOP)
    assert (
        page.locator("#f-type").is_visible() and not page.locator("#toggle-controls").is_visible()
    )
    page.context.close()

    # The screenshots of docs/review.md come from this helper.
    shots = {"desktop": tmp_path / "desktop.png", "phone": tmp_path / "phone.png"}
    review_screens.take_screenshots(browser, folder, shots)
    for path in shots.values():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- a model judge's page: the prompt it was given, the reference it was sent -----------------


HOSTILE_REFERENCE = '年額は3,800円です。<img src=x onerror="window.__pwned = 4">'


def _model_judge_record(tiny: Tiny, prompt: Path | None = None) -> tuple[Path, Record]:
    """The tiny set judged by the lexical judge, then made to look as a model judge's run: the
    prompt read (its sha256 in the judge's parts), the reference answers kept, and q1's quote
    copied from its reference answer instead of a chunk."""
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["reference_answer"] = HOSTILE_REFERENCE
    questions[1]["reference_answer"] = "設定から復元します。"
    config = tiny(questions=questions)
    if prompt is not None:
        assert config.source is not None
        text = config.source.read_text(encoding="utf-8")
        config.source.write_text(text.replace(str(PROMPT), str(prompt)), encoding="utf-8")
    assert run_lexical(config) == 0
    folder = config.reports.dir / (config.reports.dir / "latest").read_text("utf-8").strip()
    record = read_record(folder)
    references: dict[str, str | None] = {
        str(q["id"]): q.get("reference_answer")  # type: ignore[misc]
        for q in questions
    }
    rows = []
    for row in record.questions:
        item, verdict = row.item, row.verdict
        assert item is not None and verdict is not None
        changes: dict[str, Any] = {
            "item": item.model_copy(update={"reference_answer": references[row.question_id]})
        }
        if row.question_id == "q1":
            changes["verdict"] = verdict.model_copy(
                update={"evidence": "年額は3,800円です。", "match": EvidenceMatch(kind="absent")}
            )
        rows.append(row.model_copy(update=changes))
    fingerprints = record.manifest.fingerprints
    parts = {**fingerprints.judge_parts, "prompt_sha256": record.manifest.judge.prompt_sha256}
    manifest = record.manifest.model_copy(
        update={"fingerprints": fingerprints.model_copy(update={"judge_parts": parts})}
    )
    return folder, record.model_copy(update={"questions": rows, "manifest": manifest})


def test_a_model_judges_page_shows_the_prompt_it_was_given_and_the_reference_it_was_sent(
    browser: Any, tiny: Tiny, tmp_path: Path
) -> None:
    _, record = _model_judge_record(tiny)
    page_folder = tmp_path / "page"
    page_folder.mkdir()
    (page_folder / "review.html").write_bytes(render_review_page(record))
    page, problems = open_page(browser, page_folder, DESKTOP)
    assert page.inner_text("#prompt-title").startswith(
        "The prompt the judge was given: judge.v1.md (sha256 "
    )
    page.click("#prompt-title")
    assert page.text_content("#prompt-text") == PROMPT.read_text(encoding="utf-8")
    page.click("#open-all")
    q1 = page.locator('section[data-qid="q1"]')
    assert q1.locator(".reference-note").inner_text() == (
        "from the golden set (its reference_answer), sent to the judge by this run's prompt, "
        "judge.v1.md, as its REFERENCE"
    )
    # Untrusted like every text: shown, never run.
    assert q1.locator(".text.reference").inner_text() == HOSTILE_REFERENCE
    assert page.locator("#items img").count() == 0 and page.evaluate("window.__pwned") is None
    # A quote copied from the reference is called what it is, on that item only.
    assert "the judge copied the reference" in q1.locator(".from-reference").inner_text()
    assert page.locator(".from-reference").count() == 1
    q3 = page.locator('section[data-qid="q3"]')
    assert q3.locator(".text.reference").inner_text() == (
        "(none: the golden set gives no reference answer for this question)"
    )
    assert q1.locator("details.raw .source").text_content() == (
        "the reply to the prompt shown at the top of the page (judge.v1.md), filled with this item"
    )
    assert problems == []
    page.context.close()


def test_the_prompt_is_shown_only_as_the_run_had_it(tiny: Tiny, tmp_path: Path) -> None:
    prompt = tmp_path / "mine.v1.md"
    text = PROMPT.read_text(encoding="utf-8")
    prompt.write_text(text, encoding="utf-8")
    _, record = _model_judge_record(tiny, prompt)
    view = prompt_view(record)
    assert (view["text"], view["problem"], view["read_by_judge"]) == (text, None, True)
    assert view["sha256"] == text_sha256(text) and view["name"] == "mine.v1.md"
    # Edited since the run: not shown as the run's, and said so.
    prompt.write_text(text + "\nOne more rule.\n", encoding="utf-8")
    view = prompt_view(record)
    assert view["text"] is None
    assert view["problem"].startswith("mine.v1.md has changed since this run")
    assert view["reference_note"].startswith(
        "from the golden set (its reference_answer); whether the judge saw it is unknown"
    )
    prompt.unlink()
    assert prompt_view(record)["problem"] == "mine.v1.md cannot be read any more"
    # A prompt without $reference never sent the reference.
    without = "".join(line for line in text.splitlines(keepends=True) if "$reference" not in line)
    prompt.write_text(without, encoding="utf-8")
    _, record = _model_judge_record(tiny, prompt)
    assert prompt_view(record)["reference_note"] == (
        "from the golden set (its reference_answer); not sent to the judge: mine.v1.md has no "
        "$reference"
    )


def test_page_data_carries_the_records_diagnosis_and_raw_reply(tiny: Tiny) -> None:
    _, record = _model_judge_record(tiny)
    data = page_data(record)
    by_id = {item["question_id"]: item for item in data["items"]}
    assert data["diagnoses"] == list(DIAGNOSES)
    for row in record.questions:
        item = by_id[row.question_id]
        assert item["diagnosis"] == row.diagnosis
        assert row.verdict is not None
        assert item["verdict"]["raw_reply"] == row.verdict.raw_reply
    assert by_id["q1"]["reference"] == HOSTILE_REFERENCE
    assert by_id["q1"]["quote_from_reference"] is True
    assert [by_id[q]["quote_from_reference"] for q in ("q2", "q3", "q4")] == [False] * 3
    assert by_id["q3"]["reference"] is None
    assert data["run"]["started_at"] == record.manifest.started_at


def test_a_link_to_an_item_opens_it_below_the_sticky_header_on_a_phone(
    browser: Any, sample: tuple[Path, Record]
) -> None:
    """review.html#q02 scrolled the item under the sticky header; and without a viewport meta a
    phone's browser showed the shrunk desktop page."""
    folder, record = sample
    content = (folder / "review.html").read_text(encoding="utf-8")
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in content
    first, _ = open_page(browser, folder, PHONE)
    # the last item of the list (worst first): the page must scroll to it
    last = first.evaluate("Array.from(document.querySelectorAll('section.item')).pop().dataset.qid")
    assert last in {row.question_id for row in record.questions}
    for viewport in (PHONE, {"width": 1280, "height": 800}):
        context = browser.new_context(viewport=viewport, device_scale_factor=1)
        page = context.new_page()
        page.goto((folder / "review.html").as_uri() + "#" + last)
        page.wait_for_selector(f'section[data-qid="{last}"] .detail:not([hidden])')
        page.wait_for_timeout(300)  # the layout settles (fonts, the narrow class)
        header = page.evaluate("document.querySelector('header').getBoundingClientRect().bottom")
        top = page.evaluate(
            f"document.querySelector('section[data-qid=\"{last}\"]').getBoundingClientRect().top"
        )
        assert page.evaluate("window.scrollY") > 0
        assert header <= top < viewport["height"] / 2, (viewport, header, top)
        context.close()
