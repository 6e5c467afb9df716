"""review.html's data in parts (``judge.report.review_parts``): the list, the items' details and
the chunk texts put back together are ``page_data``, whatever the block sizes; and in headless
Chromium a page of 450 items draws its list a page at a time and still opens, searches, links
to and steps through items of every block."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.record.model import Record
from judge.report import review_parts
from judge.report.review_page import page_data, review_asset
from judge.report.review_parts import (
    LIST_DEFAULTS,
    LIST_FIELDS,
    VERDICT_DEFAULTS,
    json_for_script,
    page_parts,
    worst_first,
)
from tests.conftest import CORPUS, RUN
from tests.record.test_build import sentence_mode_report
from tests.report.test_review_page import _open, _open_ids, _run, _visible

Tiny = Callable[..., Config]


def _put_back(
    first: dict[str, Any], listed: dict[str, Any], details: list[Any], texts: list[Any]
) -> dict[str, Any]:
    """``page_data`` again, from its parts: the first screen's settings, each item's list row
    and its details (the full verdict and correctness over the list's short ones), and the
    texts' blocks end to end."""
    block = first["item_block"]
    items = []
    for position, row in enumerate(listed["items"]):
        item = LIST_DEFAULTS | row | details[position // block][position % block]
        del item["none_relevant"]
        items.append(item)
    assert set(listed) == {"items"}
    added = ("first", "n_items", "page", "item_block", "text_block")
    rest = {k: v for k, v in first.items() if k not in added}
    return rest | {"items": items, "chunk_texts": [text for part in texts for text in part]}


@pytest.mark.parametrize("sizes", [(500, 1000), (3, 2), (1, 1)])
def test_the_parts_put_back_are_the_page_data(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch, sizes: tuple[int, int]
) -> None:
    monkeypatch.setattr(review_parts, "ITEM_BLOCK", sizes[0])
    monkeypatch.setattr(review_parts, "TEXT_BLOCK", sizes[1])
    record: Record = sentence_mode_report(tiny).report
    data = page_data(record)
    first, listed, details, texts = page_parts(data)
    assert (first["item_block"], first["text_block"]) == sizes
    assert first["n_items"] == len(data["items"]) == len(listed["items"])
    assert _put_back(first, listed, details, texts) == data
    # The first screen: the first page of the list rows, worst first, each with its position.
    assert [row.pop("position") for row in first["first"]] == worst_first(
        listed["items"], data["diagnoses"]
    )
    assert all(row in listed["items"] for row in first["first"])
    assert all(len(part) <= sizes[0] for part in details)
    assert all(len(part) <= sizes[1] for part in texts)
    assert sum(map(len, details)) == len(data["items"]) and data["chunk_texts"]
    # The list holds no item's answer, chunk or reply: only what a line and a filter show.
    for row, item in zip(listed["items"], data["items"], strict=True):
        # Every field there, but those at their default, left out.
        assert {*LIST_FIELDS, "verdict", "correctness", "none_relevant"} - set(row) <= set(
            LIST_DEFAULTS
        )
        assert {"question_id", "type", "question", "diagnosis", "needs_review"} <= set(row)
        short = row["verdict"]
        assert short is None or {"status", "faithfulness", "relevance"} <= set(short) <= {
            "status",
            "faithfulness",
            "relevance",
            "match",
            "unsupported",
        }
        assert all(row[key] != value for key, value in LIST_DEFAULTS.items() if key in row)
        assert short is None or all(
            short[k] != v for k, v in VERDICT_DEFAULTS.items() if k in short
        )
        assert item["answer"] is None or item["answer"] not in json.dumps(row, ensure_ascii=False)
    # q1's answer has sentences unsupported: the list counts them as the page did from the
    # sentences themselves, without carrying them.
    assert any("flags" not in row for row in listed["items"])  # some rows are shorter
    sentences = data["items"][0]["verdict"]["sentences"]
    unsupported = sum(s["verdict"] == "unsupported" for s in sentences)
    assert listed["items"][0]["verdict"]["unsupported"] == unsupported >= 1
    assert listed["items"][0]["flags"] == ["unsupported_sentences"]


def _row(position: int, needs_review: bool, diagnosis: str, scores: tuple[int, int] | None) -> Any:
    verdict = None
    if scores is not None:
        verdict = {"status": "ok", "faithfulness": scores[0], "relevance": scores[1]}
    return {"needs_review": needs_review, "diagnosis": diagnosis, "verdict": verdict, "p": position}


def test_worst_first_is_the_pages_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Needs review first, then a diagnosis other than ok, then the lowest score sum (none at
    all first), then the diagnoses' order, then the position; only the first page of them."""
    diagnoses = ["ok", "retrieval miss", "generation", "not judged"]
    rows = [
        _row(0, False, "ok", (2, 2)),
        _row(1, False, "generation", (1, 1)),
        _row(2, True, "ok", (2, 2)),
        _row(3, False, "retrieval miss", (1, 1)),
        _row(4, False, "not judged", None),
        _row(5, False, "ok", (0, 1)),
        _row(6, True, "generation", (2, 2)),
        _row(7, False, "ok", (0, 1)),
    ]
    assert worst_first(rows, diagnoses) == [6, 2, 4, 3, 1, 5, 7, 0]
    monkeypatch.setattr(review_parts, "PAGE", 3)
    assert worst_first(rows, diagnoses) == [6, 2, 4]


def test_none_relevant_is_the_filters_rule() -> None:
    """ "No chunk graded relevant": grades known, and none at or above the relevant grade (a
    row without the field has none_relevant false, its default)."""
    item = {key: None for key in LIST_FIELDS} | {"verdict": None, "correctness": None}

    def none_relevant(grades: dict[str, Any]) -> bool:
        row = review_parts._list_row(item | {"chunk_grades": grades}, 2)
        return bool(row.get("none_relevant", LIST_DEFAULTS["none_relevant"]))

    grades: dict[str, Any] = {"a": {"grade": 1}, "b": {"grade": None}}
    assert none_relevant(grades)
    grades["c"] = {"grade": 2}
    assert not none_relevant(grades)
    assert not none_relevant({})


def test_the_script_puts_back_every_field_a_row_leaves_out() -> None:
    script = review_asset("review.js")
    for key, value in LIST_DEFAULTS.items():
        assert f"  row.{key} ??= {json.dumps(value)};" in script, key
    for key, value in VERDICT_DEFAULTS.items():
        assert f"    row.verdict.{key} ??= {json.dumps(value)};" in script, key


def test_no_text_can_end_its_block() -> None:
    text = "</script><script>alert(1)</script> & \u2028 <!--"
    encoded = json_for_script({"text": text})
    assert b"<" not in encoded and b">" not in encoded and "\u2028".encode() not in encoded
    assert json.loads(encoded) == {"text": text}


# --- a page of 450 items, in headless Chromium ---------------------------------------------------

FAR_TEXT = "この文章は最後の質問だけが取り出した特別なチャンクです。"


@pytest.fixture
def many(tiny: Tiny, monkeypatch: pytest.MonkeyPatch) -> Path:
    """450 questions (q000-q449) in blocks of 50 details and 2 texts; only q449 retrieved the
    chunk ``special/far``."""
    monkeypatch.setattr(review_parts, "ITEM_BLOCK", 50)
    monkeypatch.setattr(review_parts, "TEXT_BLOCK", 2)
    corpus = [
        *copy.deepcopy(CORPUS),
        {"chunk_id": "special/far", "doc": "special", "text": FAR_TEXT},
    ]
    questions, run = [], [copy.deepcopy(RUN[0])]
    for i in range(450):
        qid = f"q{i:03d}"
        questions.append(
            {
                "id": qid,
                "type": ("factual", "procedural")[i % 2],
                "question": f"年額プランはいくらですか？（{i}）",
                "relevant_chunks": ["pricing/plans"],
                "answerable": True,
            }
        )
        far = [{"chunk_id": "special/far", "score": 0.1}] if i == 449 else []
        run.append(
            {
                "id": qid,
                "retrieved": [{"chunk_id": "pricing/plans", "score": 0.9}, *far],
                "answer": f"年額3,800円です。回答{i}",
            }
        )
    return _run(tiny(questions=questions, corpus=corpus, run=run))


def _until(page: Any, expression: str) -> None:
    """Waits until ``expression`` is true in the page. Polled from here: the page's CSP refuses
    the string predicates of Playwright's ``wait_for_function`` once they must run in it."""
    deadline = time.monotonic() + 30
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"still false after 30 s: {expression}"
        time.sleep(0.05)


def _drawn(page: Any) -> int:
    return int(page.locator("section.item").count())


def test_a_long_list_draws_a_page_at_a_time(browser: Any, many: Path) -> None:
    context = browser.new_context()
    page, problems = _open(context, many)
    assert page.inner_text("#shown").startswith("450 of 450 shown")
    assert _drawn(page) == 200
    # The first screen came sorted worst first from Python; the script's own sort of the
    # whole list keeps it (its lines did not move).
    html = (many / "review.html").read_text(encoding="utf-8")
    block = html.split('id="report-first">', 1)[1].split("</script>", 1)[0]
    first = [row["question_id"] for row in json.loads(block)["first"]]
    assert _visible(page) == first and len(set(first)) == 200
    assert page.inner_text("#show-more") == "showing 200 of 450: show 200 more"
    # The button (for a keyboard), pressed where it is: scrolling to it would draw more too.
    page.evaluate("document.getElementById('show-more').click()")
    assert _drawn(page) == 400
    # Scrolling to the end of the list draws the rest.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    _until(page, "document.querySelectorAll('section.item').length === 450")
    assert page.locator("#more").is_hidden()

    # A filter starts the list again at its first page, in the sort's order. (From the top of
    # the page: at its end, the end of the shorter list is in view, which draws a page more.)
    page.evaluate("window.scrollTo(0, 0)")
    page.select_option("#sort", "order")
    page.select_option("#f-type", "procedural")
    assert page.inner_text("#shown").startswith("225 of 450 shown")
    assert len(_visible(page)) == 200 and _visible(page)[:2] == ["q001", "q003"]
    page.select_option("#f-type", "")
    assert _visible(page) == [f"q{i:03d}" for i in range(200)]

    # The search reads every item's details: a chunk text only the last item retrieved.
    page.fill("#search", FAR_TEXT[:12])
    assert _visible(page) == ["q449"]
    page.fill("#search", "")
    assert len(_visible(page)) == 200
    problems_before = list(problems)
    context.close()
    assert problems_before == []


def test_items_of_every_block_open_by_link_and_key(browser: Any, many: Path) -> None:
    context = browser.new_context()
    page, problems = _open(context, many, "#q440")
    assert _open_ids(page) == ["q440"]
    assert "回答440" in page.inner_text('section[data-qid="q440"] .answer')
    page.select_option("#sort", "order")
    # j and k step into items not drawn yet; each opens with its own answer and chunks.
    page.evaluate("location.hash = '#q448'")
    _until(page, "document.querySelector('section.current')?.dataset.qid === 'q448'")
    assert _open_ids(page) == ["q440", "q448"]
    page.click("#close-all")
    page.keyboard.press("j")
    assert _open_ids(page) == ["q449"]
    far = page.locator('section[data-qid="q449"] .chunk[data-chunk="special/far"] .text')
    assert far.inner_text() == FAR_TEXT
    page.keyboard.press("k")
    assert _open_ids(page) == ["q448"]
    page.click("#close-all")
    page.click('section[data-qid="q000"] .row')
    assert "回答0" in page.inner_text('section[data-qid="q000"] .answer')
    assert problems == []
    context.close()
