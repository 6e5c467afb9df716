"""history.html in headless Chromium: a generated season of 30 nights shows each of the gate's
marks and each change under the numbers where they belong, read from the DOM; it runs nothing
but its own script, fetches nothing, and fits a 390 px phone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judge.report.history_page import render_history_page, season_page_data
from judge.results.season_view import build_season
from tests.report import history_screens as screens
from tests.report.review_screens import DESKTOP, PHONE


def _cell(type_name: str, metric: str) -> str:
    return f'figure[data-type="{type_name}"][data-metric="{metric}"]'


def _decisions(page: Any, type_name: str, metric: str) -> dict[int, str]:
    found: dict[int, str] = page.eval_on_selector_all(
        f"{_cell(type_name, metric)} g.pt",
        "gs => Object.fromEntries(gs.map(g => [g.dataset.night, g.dataset.decision]))",
    )
    return {int(k): v for k, v in found.items()}


def test_the_marks_are_where_the_season_put_them(browser: Any, tmp_path: Path) -> None:
    path = screens.write_page(tmp_path)
    page, problems = screens.open_page(browser, path, DESKTOP)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.reload()
    page.wait_for_selector("figure.chart")
    assert problems == []
    assert [url for url in requests if not url.startswith("file://")] == []

    # The collapse: factual faithfulness on its night only, by shape and by word.
    faith = _decisions(page, "factual", "judge:faithfulness")
    assert len(faith) == screens.NIGHTS
    assert {n for n, d in faith.items() if d != "ok"} == {screens.COLLAPSE}
    assert faith[screens.COLLAPSE] == "collapsed"
    point = page.locator(f'{_cell("factual", "judge:faithfulness")} g.pt[data-night="12"]')
    assert point.locator("path.shape").count() == 1  # an X, not the ok circle
    assert point.locator("text.word").text_content() == "collapse"
    assert "collapse" in (point.get_attribute("aria-label") or "")

    # The fall over the season: procedural recall@5 on its three nights.
    recall = _decisions(page, "procedural", "retrieval:recall@5")
    assert {n for n, d in recall.items() if d != "ok"} == set(screens.SEASON_FALL)
    assert {recall[n] for n in screens.SEASON_FALL} == {"season"}
    words = page.locator(f"{_cell('procedural', 'retrieval:recall@5')} g.pt text.word")
    assert words.all_text_contents() == ["fell over the season ×3"]  # one word for the run
    first = page.locator(
        f'{_cell("procedural", "retrieval:recall@5")} g.pt[data-night="{screens.SEASON_FALL[0]}"]'
    )
    assert first.locator("text.word").count() == 1
    # The all-questions chart of that metric is ok every night: the gate marked the type.
    assert set(_decisions(page, "all", "retrieval:recall@5").values()) == {"ok"}

    # The changes under the numbers, on every chart's x-axis and in the list, on their nights.
    axis = page.eval_on_selector_all(
        f"{_cell('all', 'judge:faithfulness')} text.change",
        "ts => ts.map(t => [Number(t.dataset.night), t.dataset.kind, t.textContent])",
    )
    assert axis == [[screens.EMBEDDING_CHANGE, "index", "E"], [screens.PROMPT_CHANGE, "judge", "J"]]
    listed = page.eval_on_selector_all(
        "#changes li", "ls => ls.map(l => [Number(l.dataset.night), l.dataset.kind, l.textContent])"
    )
    assert [(n, k) for n, k, _ in listed] == [
        (screens.EMBEDDING_CHANGE, "index"),
        (screens.PROMPT_CHANGE, "judge"),
    ]
    assert "2026-11-09" in listed[0][2] and "the embedding canary" in listed[0][2]
    assert "2026-11-17" in listed[1][2] and "the judge prompt" in listed[1][2]

    # A point opens the night: its links and the questions that moved, with their diagnosis.
    point.click()
    detail = page.locator("#detail")
    assert detail.get_attribute("data-night") == str(screens.COLLAPSE)
    links = detail.locator("a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    folder = "20261113T030000Z-abcdef12"
    assert links == [f"{folder}/review.html", f"{folder}/report.md"]
    moved = detail.locator("ul.moved li").all_text_contents()
    assert len(moved) == 12 and moved[0] == "f00 2 → 0 · generation"
    page.context.close()


def test_only_the_pages_own_script_runs(browser: Any, tmp_path: Path) -> None:
    path = screens.write_page(tmp_path)
    text = path.read_text(encoding="utf-8")
    policy = re.search(r'Content-Security-Policy" content="([^"]+)"', text)
    assert policy is not None and re.fullmatch(
        r"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/]+=*'",
        policy.group(1),
    )
    # Two script elements: the data (JSON, never run) and the page's own script, whose hash is
    # the policy's; nothing else can run, not even an injected handler.
    assert text.count("<script") == 2 and 'type="application/json" id="season-data"' in text
    page, problems = screens.open_page(browser, path, DESKTOP)
    blocked = page.evaluate(
        """() => { const s = document.createElement('script');
        s.textContent = 'window.__ran = 1'; document.body.appendChild(s); return window.__ran; }"""
    )
    assert blocked is None
    assert any("Content Security Policy" in p for p in problems)
    page.context.close()


def test_no_horizontal_scroll_on_a_phone(browser: Any, tmp_path: Path) -> None:
    page, problems = screens.open_page(browser, screens.write_page(tmp_path), PHONE)
    assert problems == []
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    page.click(f'{_cell("factual", "judge:faithfulness")} g.pt[data-night="12"]')
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.context.close()


def test_hostile_text_stays_text(browser: Any, tmp_path: Path) -> None:
    nights = screens.season_nights()
    hostile = "</script><img src=x onerror=window.__pwned=1>"
    first = nights[0]
    nights[0] = first._replace(entry=first.entry.model_copy(update={"folder": hostile}))
    path = tmp_path / "history.html"
    path.write_bytes(render_history_page(build_season(nights), "<b>reports</b>"))
    page, problems = screens.open_page(browser, path, DESKTOP)
    assert page.evaluate("window.__pwned") is None and page.locator("img").count() == 0
    assert problems == []
    page.context.close()


def test_page_data_carries_every_cell_the_view_has() -> None:
    view = screens.season()
    data = season_page_data(view)
    assert data["types"] == ["all", "factual", "procedural"]
    assert data["metrics"] == ["retrieval:recall@5", "judge:faithfulness", "judge:ok_share"]
    cell = data["cells"]["factual"]["judge:faithfulness"]
    assert cell["decisions"][screens.COLLAPSE] == "collapsed"
    mean, low, high, n = cell["points"][screens.COLLAPSE]
    assert (mean, n) == (0.0, 12) and low == 0.0 and 0 < high < 0.5
    assert json.dumps(data)  # plain JSON


def test_the_pinned_baseline_is_drawn(browser: Any, tmp_path: Path) -> None:
    nights = screens.season_nights()
    view = build_season(nights, nights[0].values)
    path = tmp_path / "history.html"
    path.write_bytes(render_history_page(view, "reports", "judge-baseline.json"))
    page, problems = screens.open_page(browser, path, DESKTOP)
    assert problems == []
    line = page.locator(f"{_cell('all', 'judge:ok_share')} line.baseline")
    assert line.count() == 1 and line.get_attribute("data-baseline") == "1"
    label = page.locator(f"{_cell('all', 'judge:ok_share')} text.baseline-label")
    assert label.text_content() == "baseline"
    page.context.close()
