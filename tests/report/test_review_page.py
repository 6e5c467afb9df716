"""review.html in a real headless Chromium: loads cleanly, escapes, triages, records marks that
come back as human labels and survive into the next run's page."""

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.audit.marks import import_labels_file
from judge.cli import main
from judge.config import Config
from judge.hashing import text_sha256
from judge.inputs.golden import load_golden
from judge.inputs.labels import LabelScores, load_labels
from judge.judging.types import ContextChunk, EvidenceMatch, SentenceCheck, Verdict
from judge.pipeline.audit import run_audit
from judge.record.store import ReportFolder
from judge.report.review_page import (
    SCRIPT_ASSET,
    STYLE_ASSET,
    _sentence_view,
    page_language,
    review_asset,
)
from judge.results.item_record import ItemRecord
from judge.results.review import triage
from tests.conftest import CORPUS, QUESTIONS, RUN, write_jsonl
from tests.record.test_build import (
    CITED_BY_1,
    CITED_FOR_Q2,
    SENTENCE_ANSWER,
    SENTENCES,
    sentence_mode_report,
)
from tests.report.test_review_assets import parse_css

Tiny = Callable[..., Config]
HOSTILE_ANSWER = (
    '年額3,800円です。<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
)
HOSTILE_CHUNK = "</script><script>window.__pwned = 3</script> ウィジェットは小と中の2サイズです。"


def _run(config: Config) -> Path:
    """``judge run --backend lexical``; the new report folder."""
    assert config.source is not None
    assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 0
    return config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()


def _open(context: Any, folder: Path, fragment: str = "") -> tuple[Any, list[str]]:
    """A page of ``folder``'s review.html, and the console errors and warnings it logs."""
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None,
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto((folder / "review.html").as_uri() + fragment)
    page.wait_for_selector("section.item")
    return page, problems


def _visible(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "Array.from(document.querySelectorAll('section.item')).filter(s => !s.hidden)"
            ".map(s => s.dataset.qid)"
        )
    )


def _open_ids(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "Array.from(document.querySelectorAll('section.item'))"
            ".filter(s => !s.querySelector('.detail').hidden).map(s => s.dataset.qid)"
        )
    )


@pytest.fixture
def report_folder(tiny: Tiny) -> Path:
    corpus = copy.deepcopy(CORPUS)
    corpus[4]["text"] = HOSTILE_CHUNK + corpus[4]["text"]
    run = copy.deepcopy(RUN)
    run[1]["answer"] = HOSTILE_ANSWER
    return _run(tiny(corpus=corpus, run=run))


def test_review_page(browser: Any, report_folder: Path) -> None:
    context = browser.new_context()
    page, problems = _open(context, report_folder)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.reload()
    page.wait_for_selector("section.item")

    # Loads with no console error, fetches nothing but itself, under its CSP.
    assert problems == []
    assert [url for url in requests if not url.startswith("file://")] == []
    policy = page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert re.fullmatch(
        r"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/]+=*'",
        policy,
    )
    assert page.evaluate("document.documentElement.lang") == "ja"  # the questions are Japanese
    assert page.locator("section.item").count() == 4
    assert page.inner_text("#shown").startswith("4 of 4 shown")

    # A compact list: one line per item, nothing of the item rendered until it is opened.
    assert _open_ids(page) == []
    assert page.locator(".answer").count() == 0
    row = page.locator('section[data-qid="q1"] .row').inner_text()
    assert "q1" in row and "factual" in row and re.search(r"F\d R\d", row)
    page.click("#open-all")
    assert len(_open_ids(page)) == 4

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
    # items.jsonl names each chunk by id; chunks.jsonl holds its text once (folder format 4).
    texts = {
        c["chunk_id"]: c["text"]
        for c in map(
            json.loads, (report_folder / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
        )
    }
    checked_one = False
    for qid, verdict in verdicts.items():
        match = verdict["match"]
        if not match or match.get("start") is None:
            continue
        chunk = next(c for c in items[qid]["context"] if c["chunk_id"] == match["chunk_id"])
        chunk.setdefault("text", texts[chunk["chunk_id"]])
        cited = page.locator(f'section[data-qid="{qid}"] .chunk.cited')
        assert cited.count() == 1
        assert cited.get_attribute("data-chunk") == match["chunk_id"]
        assert cited.locator("mark").inner_text() == chunk["text"][match["start"] : match["end"]]
        full = cited.locator(".text").inner_text()
        assert full.index(cited.locator("mark").inner_text()) == match["start"]
        checked_one = True
    assert checked_one, "no verdict with a located quote to check"

    # Filters by type and score.
    page.select_option("#f-type", "negative")
    assert _visible(page) == ["q3"]
    page.select_option("#f-type", "")
    page.select_option("#f-faith", "2")
    assert sorted(_visible(page)) == sorted(
        q for q, v in verdicts.items() if v["faithfulness"] == 2
    )
    assert problems == []
    context.close()


def test_the_script_builds_no_html_from_text() -> None:
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "Function(",
    ):
        assert sink not in review_asset(SCRIPT_ASSET)


def test_chromium_understands_every_rule_of_the_styles(browser: Any) -> None:
    """What the tokenizer cannot know: that each selector and declaration means something to a
    browser (a misspelt property or value is dropped without a word)."""
    rules = parse_css(review_asset(STYLE_ASSET))
    context = browser.new_context()
    page = context.new_page()
    page.set_content("<!doctype html><title>css</title>")
    refused = page.evaluate(
        "(rules) => rules.flatMap(([selector, declarations]) => ["
        "  ...selector.split(',').filter((one) => !CSS.supports('selector(' + one + ')')),"
        "  ...declarations.filter(([name, value]) => !CSS.supports(name, value))"
        "    .map(([name, value]) => selector + ' { ' + name + ': ' + value + ' }')])",
        [[rule.selector, rule.declarations] for rule in rules],
    )
    assert refused == []
    # And the check can fail.
    assert not page.evaluate("CSS.supports('colour', 'red') || CSS.supports('color', 'rde')")
    context.close()


# --- marks: recorded, exported, imported, and kept for the next run ---------------------------


def test_marks_become_labels_and_survive_into_the_next_run(
    browser: Any, tiny: Tiny, tmp_path: Path
) -> None:
    labels_path = tmp_path / "labels.jsonl"
    labels_path.write_text("", encoding="utf-8")  # no labels yet
    config = tiny(extra_toml=f'labels = "{labels_path}"\n')
    first = _run(config)
    context = browser.new_context(accept_downloads=True)
    page, problems = _open(context, first)
    assert page.inner_text("#progress") == "marked 0 of 4"
    page.fill("#reviewer", "ana")

    # A corrected score and a comment on two items, and "agree" on a third.
    corrections = {
        "q1": ("0", "1", "the yearly saving is not in the chunk"),
        "q2": ("1", "2", "手順の順番が違う"),
    }
    for qid, (faithfulness, relevance, comment) in corrections.items():
        item = f'section[data-qid="{qid}"]'
        page.click(f"{item} .row")
        page.select_option(f"{item} select.mark-faithfulness", faithfulness)
        page.select_option(f"{item} select.mark-relevance", relevance)
        page.fill(f"{item} textarea.mark-comment", comment)
        page.click(f"{item} button.save")
        assert page.inner_text(f"{item} .mark-state").startswith(
            f"Marked: F{faithfulness} R{relevance}"
        )
    page.click('section[data-qid="q3"] .row')
    page.click('section[data-qid="q3"] button.agree')
    # A score without the other is no mark.
    page.click('section[data-qid="q4"] .row')
    page.select_option('section[data-qid="q4"] select.mark-faithfulness', "1")
    page.click('section[data-qid="q4"] button.save')
    assert "Choose both scores" in page.inner_text('section[data-qid="q4"] .mark-state')
    assert page.inner_text("#progress") == "marked 3 of 4"
    assert "marked: F0 R1" in page.inner_text('section[data-qid="q1"] .row')
    page.select_option("#f-mark", "unmarked")
    assert _visible(page) == ["q4"]
    page.select_option("#f-mark", "")

    with page.expect_download() as download:
        page.click("#export")
    exported = tmp_path / "marks.json"
    download.value.save_as(exported)
    marks = json.loads(exported.read_text(encoding="utf-8"))
    manifest = json.loads((first / "manifest.json").read_text(encoding="utf-8"))
    fingerprint = manifest["fingerprints"]["judge"]
    assert (marks["format"], marks["version"], marks["reviewer"]) == (
        "judge-review-marks",
        1,
        "ana",
    )
    assert (marks["folder"], marks["judge_fingerprint"]) == (first.name, fingerprint)
    by_id = {m["question_id"]: m for m in marks["marks"]}
    assert sorted(by_id) == ["q1", "q2", "q3"]
    assert by_id["q2"]["answer_sha256"] == text_sha256(RUN[2]["answer"])
    assert by_id["q2"]["comment"] == "手順の順番が違う"
    verdict_q3 = json.loads((first / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()[2])
    assert by_id["q3"]["agree"] is True
    assert (by_id["q3"]["judge_faithfulness"], by_id["q3"]["judge_relevance"]) == (
        verdict_q3["faithfulness"],
        verdict_q3["relevance"],
    )

    # Imported as `judge audit import` does, the labels count in `judge audit`.
    golden = load_golden(config.data).by_id()
    result = import_labels_file(exported, labels_path, golden, None, replace=False)
    assert (result.added, result.replaced, result.unchanged) == (3, 0, 0)
    labels = load_labels(labels_path, golden).current
    audit = run_audit(ReportFolder(first), labels)
    assert audit.judge.labelled == 3 and audit.judge.n == 3
    assert audit.labellers == ["ana"]
    assert {(lab.question_id, lab.faithfulness, lab.relevance, lab.note) for lab in labels} >= {
        ("q1", 0, 1, "the yearly saving is not in the chunk"),
        ("q2", 1, 2, "手順の順番が違う"),
    }
    assert import_labels_file(exported, labels_path, golden, None, replace=False).unchanged == 3

    # Tomorrow's run of the same answers by the same judge: the marks are there.
    second = _run(config)
    assert second != first
    page2, problems2 = _open(context, second)
    assert page2.inner_text("#progress") == "marked 3 of 4"
    assert page2.input_value("#reviewer") == "ana"
    assert "marked: F0 R1" in page2.inner_text('section[data-qid="q1"] .row')
    page2.click('section[data-qid="q2"] .row')
    assert page2.input_value('section[data-qid="q2"] textarea.mark-comment') == "手順の順番が違う"
    assert page2.input_value('section[data-qid="q2"] select.mark-faithfulness') == "1"
    # A mark made in one tab shows in another tab of the same store at once.
    other_tab, other_problems = _open(context, second)
    page2.click('section[data-qid="q4"] .row')
    page2.click('section[data-qid="q4"] button.agree')
    other_tab.wait_for_function(
        "document.getElementById('progress').textContent === 'marked 4 of 4'"
    )
    assert "marked: agree" in other_tab.inner_text('section[data-qid="q4"] .row')
    assert other_problems == []
    other_tab.close()
    page2.click('section[data-qid="q4"] button.clear')
    assert page2.inner_text("#progress") == "marked 3 of 4"
    # The imported labels are this run's human labels now, and q1's disagrees with the judge.
    page2.select_option("#f-triage", "disagrees")
    assert "q1" in _visible(page2)

    # A run where q1's answer changed: its mark is stale (shown, not counted, not exported).
    run = copy.deepcopy(RUN)
    run[1]["answer"] = "年額プランは3,800円で、2か月分お得です。"
    third = _run(tiny(run=run, extra_toml=f'labels = "{labels_path}"\n'))
    page3, problems3 = _open(context, third)
    assert page3.inner_text("#progress") == "marked 2 of 4"
    assert "stale mark" in page3.inner_text('section[data-qid="q1"] .row')
    page3.click('section[data-qid="q1"] .row')
    stale = page3.inner_text('section[data-qid="q1"] .stale-note')
    assert "answer changed" in stale and "judge changed" not in stale and "F0 R1" in stale
    assert page3.input_value('section[data-qid="q1"] select.mark-faithfulness') == ""
    page3.select_option("#f-mark", "stale")
    assert _visible(page3) == ["q1"]
    with page3.expect_download() as download:
        page3.click("#export")
    download.value.save_as(tmp_path / "third.json")
    third_marks = json.loads((tmp_path / "third.json").read_text(encoding="utf-8"))["marks"]
    assert sorted(m["question_id"] for m in third_marks) == ["q2", "q3"]

    # The same answers judged by another judge: every mark is stale, for that reason. (The
    # lexical judge has one fingerprint, so the page is the second run's with another one.)
    other_judge = tmp_path / "other-judge"
    other_judge.mkdir()
    page_text = (second / "review.html").read_text(encoding="utf-8")
    assert page_text.count(f'"judge_fingerprint":"{fingerprint}"') == 1  # compact JSON
    (other_judge / "review.html").write_text(
        page_text.replace(fingerprint, "judge:0000000000000000"), encoding="utf-8"
    )
    page4, problems4 = _open(context, other_judge)
    assert page4.inner_text("#progress") == "marked 0 of 4"
    page4.click('section[data-qid="q3"] .row')
    stale = page4.inner_text('section[data-qid="q3"] .stale-note')
    assert "judge changed" in stale and "answer changed" not in stale and "agree" in stale
    assert problems == problems2 == problems3 == problems4 == []
    context.close()


# --- triage, list, links, keyboard ---------------------------------------------------------


def test_triage_filters_links_and_keyboard(browser: Any, tiny: Tiny, tmp_path: Path) -> None:
    questions = copy.deepcopy(QUESTIONS)
    questions[0]["relevant_chunks"] = ["pricing/trial"]  # q1's faithful quote is not golden now
    run = copy.deepcopy(RUN)
    run[0]["run_meta"]["failed"] = {"q4": "adapter timed out after 30 s"}
    del run[4]
    labels = tmp_path / "labels.jsonl"
    write_jsonl(
        labels,
        [
            {
                "question_id": "q2",
                "answer_sha256": text_sha256(RUN[2]["answer"]),
                "faithfulness": 1,
                "relevance": 2,
                "labeller": "bob",
            }
        ],
    )
    folder = _run(tiny(questions=questions, run=run, extra_toml=f'labels = "{labels}"\n'))
    context = browser.new_context()
    page, problems = _open(context, folder)
    # The page opens worst first (test_review_triage.py); these steps read golden-set order.
    page.select_option("#sort", "order")
    assert _visible(page) == ["q1", "q2", "q3", "q4"]
    assert "adapter failed" in page.inner_text('section[data-qid="q4"] .row')

    expected = {
        "any": ["q1", "q2", "q4"],
        "disagrees": ["q2"],
        "foreign_quote": ["q1"],
        "adapter_failed": ["q4"],
        "not_ok": [],
    }
    for flag, qids in expected.items():
        page.select_option("#f-triage", flag)
        assert _visible(page) == qids, flag
    page.select_option("#f-triage", "")
    page.select_option("#f-status", "adapter_failed")
    assert _visible(page) == ["q4"]
    page.select_option("#f-status", "")
    # Sorted by how many reasons an item has, or by the largest gap to a human label.
    page.select_option("#sort", "reasons")
    assert _visible(page)[-1] == "q3"
    page.select_option("#sort", "gap")
    assert _visible(page)[0] == "q2"
    page.select_option("#sort", "order")

    # An item opens on click or Enter; an adapter failure shows its error and cannot be marked.
    page.focus('section[data-qid="q4"] .row')
    page.keyboard.press("Enter")
    assert _open_ids(page) == ["q4"]
    detail = page.inner_text('section[data-qid="q4"] .detail')
    assert "adapter timed out after 30 s" in detail
    assert page.locator('section[data-qid="q4"] button.save').is_disabled()
    page.click("#close-all")

    # j / k step from the current item (q4) through the shown ones, one open at a time; the
    # address names the item.
    page.select_option("#f-triage", "any")
    page.keyboard.press("k")
    assert _open_ids(page) == ["q2"] and page.evaluate("location.hash") == "#q2"
    page.keyboard.press("k")
    assert _open_ids(page) == ["q1"]
    page.keyboard.press("k")  # nothing before the first
    assert _open_ids(page) == ["q1"]
    page.keyboard.press("j")
    assert _open_ids(page) == ["q2"]
    page.keyboard.press("ArrowDown")  # arrows too, on a row
    assert _open_ids(page) == ["q4"]
    page.keyboard.press("ArrowUp")
    assert _open_ids(page) == ["q2"]
    # Not while typing: j goes into the comment.
    page.focus('section[data-qid="q2"] textarea.mark-comment')
    page.keyboard.type("jk")
    assert _open_ids(page) == ["q2"]
    assert page.input_value('section[data-qid="q2"] textarea.mark-comment') == "jk"
    context.close()

    # A link to an item opens it on load, and on a hash change even if a filter hides it.
    context = browser.new_context()
    linked, linked_problems = _open(context, folder, "#q3")
    assert _open_ids(linked) == ["q3"]
    linked.select_option("#f-triage", "disagrees")
    linked.evaluate("location.hash = '#q1'")
    linked.wait_for_function("!document.querySelector('section[data-qid=\"q1\"] .detail').hidden")
    assert "q1" in _visible(linked) and linked.input_value("#f-triage") == ""
    href = linked.get_attribute('section[data-qid="q1"] a.permalink', "href")
    assert href == "#q1"
    assert problems == linked_problems == []
    context.close()


# --- triage flags and lang, without a browser --------------------------------------------------


def _item(**changes: Any) -> ItemRecord:
    fields: dict[str, Any] = {
        "question_id": "q1",
        "type": "factual",
        "split": "",
        "question": "年額プランはいくらですか？",
        "answer": "年額3,800円です。",
        "context": [
            ContextChunk(1, "pricing/plans", "プレミアムプランは月額400円、年額3,800円です。"),
            ContextChunk(2, "pricing/trial", "初回のみ7日間の無料体験があります。"),
        ],
        "relevant_chunks": ["pricing/plans"],
        "retrieval": {},
        "labels": [],
    }
    return ItemRecord(**(fields | changes))


def _verdict(faithfulness: int = 2, relevance: int = 2, **changes: Any) -> Verdict:
    fields: dict[str, Any] = {
        "question_id": "q1",
        "item_key": "k",
        "status": "ok",
        "faithfulness": faithfulness,
        "relevance": relevance,
        "match": EvidenceMatch(kind="exact", chunk_id="pricing/plans", start=0, end=5, coverage=1),
    }
    return Verdict(**(fields | changes))


def _label(faithfulness: int, relevance: int, labeller: str = "ana") -> LabelScores:
    return LabelScores(
        question_id="q1", faithfulness=faithfulness, relevance=relevance, labeller=labeller
    )


def test_triage_flags() -> None:
    assert triage(_item(), _verdict()).flags == []
    # Disagreement: any label whose scores differ; the gap is the largest difference.
    found = triage(_item(labels=[_label(2, 2), _label(0, 1, "bob")]), _verdict())
    assert found.flags == ["disagrees"] and found.gap == 3
    assert "bob F0 R1 (judge F2 R2)" in found.reasons[0] and "ana" not in found.reasons[0]
    # A faithful verdict quoting a chunk that is not golden; only where golden chunks are known.
    foreign = _verdict(
        match=EvidenceMatch(kind="exact", chunk_id="pricing/trial", start=0, end=5, coverage=1)
    )
    assert triage(_item(), foreign).flags == ["foreign_quote"]
    assert triage(_item(relevant_chunks=None), foreign).flags == []
    assert triage(_item(relevant_chunks=[]), foreign).flags == []
    assert triage(_item(), foreign.model_copy(update={"faithfulness": 1})).flags == []
    # A quote that is not verified; an empty one only when the verdict's checks flag it.
    absent = _verdict(0, 2, match=EvidenceMatch(kind="absent", coverage=0.2))
    assert triage(_item(), absent) == (["unverified_quote"], ["quote not verified (absent)"], 0)
    refusal = _verdict(2, 2, match=EvidenceMatch(kind="empty"))
    assert triage(_item(), refusal).flags == []
    unfounded = refusal.model_copy(update={"review": ("faithful, but no quote (...)",)})
    found = triage(_item(), unfounded)
    assert found.flags == ["verdict_flags", "unverified_quote"]
    assert found.reasons == ["faithful, but no quote (...)"]
    # A verdict that is not ok: only that, whatever the labels say.
    broken = Verdict(question_id="q1", item_key="k", status="parse_error", error="not JSON")
    assert triage(_item(labels=[_label(0, 0)]), broken) == (
        ["not_ok"],
        ["parse_error: not JSON"],
        0,
    )
    # Low confidence: the judge put less than LOW_CONFIDENCE on a score it gave (either axis).
    unsure = _verdict().model_copy(
        update={"score_probabilities": {"faithfulness": (0.1, 0.45, 0.45), "relevance": (0, 0, 1)}}
    )
    assert unsure.confidence == 0.45
    assert triage(_item(), unsure) == (
        ["low_confidence"],
        ["low judge confidence: 45% on the scores it gave"],
        0,
    )
    sure = unsure.model_copy(
        update={"score_probabilities": {"faithfulness": (0, 0.3, 0.7), "relevance": (0, 0, 1)}}
    )
    assert triage(_item(), sure).flags == []


def test_page_language_follows_the_questions() -> None:
    assert page_language(["年額プランはいくらですか？", "iPadで使えますか"]) == "ja"
    assert page_language(["How much is the yearly plan?", "Does it work on iPad?"]) == "en"
    assert page_language(["연간 요금은 얼마입니까?"]) == "ko"
    assert page_language(["年度计划多少钱？"]) == "zh"
    assert page_language(["How much?", "Wie viel?", "年額は？"]) == "en"
    assert page_language([]) == "en"


# --- sentence mode: unsupported sentences marked inside the answer -------------------------------


def test_sentence_mode_marks_unsupported_sentences(browser: Any, tiny: Tiny) -> None:
    result = sentence_mode_report(tiny)
    context = browser.new_context()
    page, problems = _open(context, result.folder.path)

    # The list: q1 says how many of its sentences are unsupported; the triage filter finds it.
    assert "✗ 1 unsupported" in page.inner_text('section[data-qid="q1"] .row')
    option = page.locator('#f-triage option[value="unsupported_sentences"]')
    assert option.inner_text() == "unsupported sentence(s) (1)"
    page.select_option("#f-triage", "unsupported_sentences")
    assert _visible(page) == ["q1"]
    page.select_option("#f-triage", "any")
    assert "q1" in _visible(page)
    page.select_option("#f-triage", "")

    # Sentence 2 of 3 is marked inside the answer: class, attribute, wavy underline and badge.
    page.click('section[data-qid="q1"] .row')
    answer = page.locator('section[data-qid="q1"] .answer')
    second = answer.locator('.sent[data-n="2"]')
    assert second.get_attribute("data-verdict") == "unsupported"
    assert "unsupported" in (second.get_attribute("class") or "").split()
    assert second.inner_text() == SENTENCES[1]
    assert second.evaluate("e => getComputedStyle(e).textDecorationStyle") == "wavy"
    badges = answer.locator(".sent-badge")
    assert badges.count() == 1 and badges.first.is_visible()
    assert badges.first.inner_text() == "✗2 unsupported"
    assert badges.first.evaluate("e => e.previousSibling.dataset.n") == "2"
    verdicts = {
        n: answer.locator(f'.sent[data-n="{n}"]').get_attribute("data-verdict") for n in (1, 3)
    }
    assert verdicts == {1: "supported", 3: "no_claim"}
    # The answer is all there, as text, in order (the markers are our own elements).
    shown = answer.evaluate(
        "e => Array.from(e.childNodes).filter(n => !(n.classList && "
        "(n.classList.contains('sent-badge') || n.classList.contains('cite-link'))))"
        ".map(n => n.textContent).join('')"
    )
    assert shown == SENTENCE_ANSWER
    assert answer.locator("img").count() == 0 and page.evaluate("window.__pwned") is None

    # Every sentence's verdict under "Judge", and what the evidence is.
    listed = page.locator('section[data-qid="q1"] ol.sentences li[data-n="2"]')
    assert "unsupported" in (listed.get_attribute("class") or "").split()
    assert listed.inner_text().startswith("✗ unsupported: 年額プランは3か月分")
    origin = page.inner_text('section[data-qid="q1"] .origin')
    assert origin.startswith("evidence: sentence by sentence: 1 of 3 answer sentences cite")
    assert "real by construction" in origin and "reviewer's call" in origin

    # Supported sentence 1 links to the context sentence it cites, highlighted in its chunk.
    link = answer.locator(".cite-link")
    assert link.count() == 1 and link.inner_text() == "↗1"
    assert link.get_attribute("title") == (
        f"sentence 1 cites sentence 1 in pricing/plans: “{CITED_BY_1}”"
    )
    assert page.inner_text('section[data-qid="q1"] ol.sentences li[data-n="1"] .cites') == (
        f"cites sentence 1 in pricing/plans: “{CITED_BY_1}”"
    )
    cited = page.locator('section[data-qid="q1"] .chunk.cited')
    assert cited.count() == 1 and cited.get_attribute("data-chunk") == "pricing/plans"
    mark = cited.locator("mark.cite")
    assert mark.inner_text() == CITED_BY_1 and mark.get_attribute("data-cited-by") == "1"
    assert "flash" not in (mark.get_attribute("class") or "")
    link.focus()
    page.keyboard.press("Enter")
    assert "flash" in (mark.get_attribute("class") or "").split()

    # Cited mode (q2): the sentence is highlighted in its chunk and called what it is.
    page.click('section[data-qid="q2"] .row')
    q2 = page.locator('section[data-qid="q2"]')
    assert q2.locator(".chunk.cited mark").inner_text() == CITED_FOR_Q2
    assert "cited sentence" in q2.locator(".head").inner_text()
    assert q2.locator(".origin").inner_text() == (
        "evidence: cited sentence 7 in backup/restore (real by construction; whether it "
        "supports the verdict is the reviewer's call)"
    )
    assert "quote unverified" not in q2.locator(".row").inner_text()

    # Quote mode (q3) as before: the answer as one text, the quote verified and said so.
    page.click('section[data-qid="q3"] .row')
    q3 = page.locator('section[data-qid="q3"]')
    assert q3.locator(".answer").inner_text() == RUN[3]["answer"]
    assert q3.locator(".answer .sent, .answer .sent-badge, ol.sentences").count() == 0
    assert q3.locator(".origin").inner_text() == "evidence: quote (verified: exact)"
    assert q3.locator(".chunk.cited mark").count() == 1

    # Keyboard navigation as before, also from a focused citation link.
    page.click("#close-all")
    page.click('section[data-qid="q1"] .row')
    page.locator('section[data-qid="q1"] .cite-link').focus()
    page.keyboard.press("j")
    assert _open_ids(page) == ["q2"]
    page.keyboard.press("k")
    assert _open_ids(page) == ["q1"]
    assert problems == []
    context.close()


def _checks(*verdicts: str) -> tuple[SentenceCheck, ...]:
    cites = EvidenceMatch(kind="cited", chunk_id="pricing/plans", start=0, end=5, coverage=1)
    return tuple(
        SentenceCheck(
            n=n,
            text=f"s{n}",
            start=3 * (n - 1),
            end=3 * n - 1,
            verdict=verdict,  # type: ignore[arg-type]
            evidence=cites if verdict == "supported" else None,
            evidence_text="プレミアム" if verdict == "supported" else "",
        )
        for n, verdict in enumerate(verdicts, start=1)
    )


def test_triage_of_sentences_and_cited_sentences() -> None:
    some = _verdict(
        1, 2, mode="sentences", match=None, sentences=_checks("supported", "unsupported")
    )
    assert triage(_item(), some) == (
        ["unsupported_sentences"],
        ["unsupported sentence 2 (of 2)"],
        0,
    )
    many = some.model_copy(update={"sentences": _checks("unsupported", "no_claim", "unsupported")})
    assert triage(_item(), many).reasons == ["unsupported sentences 1, 3 (of 3)"]
    fine = some.model_copy(update={"sentences": _checks("supported", "no_claim")})
    assert triage(_item(), fine).flags == []
    # A cited sentence is real context text: never "quote not verified".
    cited = _verdict(
        mode="cited",
        match=EvidenceMatch(kind="cited", chunk_id="pricing/plans", start=0, end=5, coverage=1),
    )
    assert triage(_item(), cited).flags == []
    # ... though faithful on a cited sentence outside the golden chunks is still worth a look.
    elsewhere = cited.model_copy(
        update={"match": EvidenceMatch(kind="cited", chunk_id="pricing/trial", start=0, end=5)}
    )
    found = triage(_item(), elsewhere)
    assert found.flags == ["foreign_quote"]
    assert found.reasons == [
        "faithful, but the cited sentence comes from pricing/trial, not a golden chunk "
        "(pricing/plans)"
    ]
    # No citation, or nothing to check: the verdict's own flags say so, not "quote unverified".
    uncited = cited.model_copy(
        update={"match": EvidenceMatch(kind="empty"), "review": ("faithful, but cites no …",)}
    )
    assert triage(_item(), uncited).flags == ["verdict_flags"]
    claimless = some.model_copy(
        update={
            "sentences": _checks("no_claim"),
            "match": EvidenceMatch(kind="empty"),
            "review": ("no checkable sentence (…)",),
        }
    )
    assert triage(_item(), claimless).flags == ["verdict_flags"]


def test_page_data_cuts_the_answer_and_chunks_at_the_sentences() -> None:
    item = _item(answer="ab。cd。ef。")
    checks = (
        SentenceCheck(
            n=1,
            text="ab。",
            start=0,
            end=3,
            verdict="supported",
            evidence=EvidenceMatch(kind="cited", chunk_id="pricing/plans", start=0, end=5),
            evidence_text="プレミアム",
        ),
        SentenceCheck(n=2, text="cd。", start=3, end=6, verdict="unsupported"),
        # A span that overlaps the one before it: shown as plain text, never lost or doubled.
        SentenceCheck(n=3, text="ef。", start=5, end=9, verdict="no_claim"),
    )
    view = _sentence_view(item, _verdict(1, 2, mode="sentences", match=None, sentences=checks))
    assert view["answer_pieces"] == [
        {"text": "ab。", "n": 1},
        {"text": "cd。", "n": 2},
        {"text": "ef。", "n": None},
    ]
    plans, trial = view["chunk_pieces"]
    assert plans[0] == {"text": "プレミアム", "citing": [1]}
    assert "".join(p["text"] for p in plans) == item.context[0].text
    assert trial == [{"text": item.context[1].text, "citing": None}]
    # Outside sentence mode there is nothing to cut.
    assert _sentence_view(item, _verdict()) == {"answer_pieces": None, "chunk_pieces": None}
