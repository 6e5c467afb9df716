"""review.html in a real headless Chromium: loads cleanly, filters, highlights, escapes."""

import copy
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import CORPUS, RUN

Tiny = Callable[..., Config]
HOSTILE_ANSWER = (
    '年額3,800円です。<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
)
HOSTILE_CHUNK = "</script><script>window.__pwned = 3</script> ウィジェットは小と中の2サイズです。"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing; .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def report_folder(tiny: Tiny) -> Path:
    corpus = copy.deepcopy(CORPUS)
    corpus[4]["text"] = HOSTILE_CHUNK + corpus[4]["text"]
    run = copy.deepcopy(RUN)
    run[1]["answer"] = HOSTILE_ANSWER
    config = tiny(corpus=corpus, run=run)
    assert config.source is not None
    assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 0
    return config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()


def test_review_page(browser: Any, report_folder: Path, tmp_path: Path) -> None:
    page = browser.new_page(accept_downloads=True)
    problems: list[str] = []
    page.on(
        "console",
        lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None,
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto((report_folder / "review.html").as_uri())
    page.wait_for_selector("section.item")

    # Loads with no console error and fetches nothing but itself.
    assert problems == []
    assert [url for url in requests if not url.startswith("file://")] == []
    assert page.locator("section.item").count() == 4
    assert page.inner_text("#shown").startswith("4 of 4 shown")

    # Untrusted text shows as text and runs nothing.
    assert page.evaluate("window.__pwned") is None
    answer = page.locator('section[data-qid="q1"] .answer')
    assert answer.inner_text() == HOSTILE_ANSWER
    assert page.locator('section[data-qid="q1"] .answer img').count() == 0
    hostile_chunks = page.locator('.chunk[data-chunk="widgets/sizes"] .text')
    assert hostile_chunks.count() >= 1
    assert hostile_chunks.first.inner_text().startswith(HOSTILE_CHUNK)

    # The quote is highlighted at its span inside the Japanese chunk it came from.
    verdicts = {
        v["question_id"]: v
        for v in map(
            json.loads, (report_folder / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
        )
    }
    items = {
        i["question_id"]: i
        for i in map(
            json.loads, (report_folder / "items.jsonl").read_text(encoding="utf-8").splitlines()
        )
    }
    checked_one = False
    for qid, verdict in verdicts.items():
        match = verdict["match"]
        if not match or match.get("start") is None:
            continue
        chunk = next(c for c in items[qid]["context"] if c["chunk_id"] == match["chunk_id"])
        cited = page.locator(f'section[data-qid="{qid}"] .chunk.cited')
        assert cited.count() == 1
        assert cited.get_attribute("data-chunk") == match["chunk_id"]
        assert cited.locator("mark").inner_text() == chunk["text"][match["start"] : match["end"]]
        full = cited.locator(".text").inner_text()
        assert full.index(cited.locator("mark").inner_text()) == match["start"]
        checked_one = True
    assert checked_one, "no verdict with a located quote to check"

    # Filters.
    page.select_option("#f-type", "negative")
    assert page.locator("section.item:visible").count() == 1
    assert page.locator("section.item:visible").get_attribute("data-qid") == "q3"
    page.select_option("#f-type", "")
    page.select_option("#f-faith", "2")
    visible = page.locator("section.item:visible")
    expected = sorted(q for q, v in verdicts.items() if v["faithfulness"] == 2)
    assert (
        sorted(visible.nth(i).get_attribute("data-qid") for i in range(visible.count())) == expected
    )
    page.select_option("#f-faith", "")

    # Marking an item as checked, then exporting the marks.
    page.locator('section[data-qid="q2"] .checked-box').check()
    assert "1 checked" in page.inner_text("#shown")
    page.check("#f-unchecked")
    assert page.locator("section.item:visible").count() == 3
    with page.expect_download() as download:
        page.click("#export")
    target = tmp_path / "marks.json"
    download.value.save_as(target)
    marks = json.loads(target.read_text(encoding="utf-8"))
    assert marks["folder"] == report_folder.name
    assert [m["question_id"] for m in marks["checked"]] == ["q2"]
    assert problems == []
    page.close()
