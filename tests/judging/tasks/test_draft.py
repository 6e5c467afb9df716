"""``judge.judging.tasks.draft``: the article's mix, chunks chosen per type and spread over the
documents, the prompt shows the type, heading and chunk as JSON, a reply is strict, the
baseline drafts in the chunk's language, a run asks no drafts, and the judge caches drafts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from judge.inputs.golden import Chunk, load_corpus
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.cache import VerdictCache
from judge.judging.judge import Judge
from judge.judging.tasks.draft import (
    ARTICLE_MIX,
    DRAFT,
    build_draft_items,
    choose_chunks,
    draft_for,
    draft_lexically,
    draft_request,
    plan_kinds,
)
from judge.judging.tasks.registry import TASKS, load_task_prompt
from judge.judging.verdict import Reply
from tests.conftest import REPO

PROMPT = load_task_prompt(REPO / "prompts" / "draft.v1.md", TASKS["draft"])
CORPUS = load_corpus(REPO / "golden" / "sample" / "corpus.jsonl")


def test_the_kinds_come_in_the_articles_proportions() -> None:
    assert (
        Counter(plan_kinds(30))
        == ARTICLE_MIX
        == {"factual": 12, "procedural": 8, "negative": 5, "out_of_scope": 5}
    )
    assert Counter(plan_kinds(60)) == {k: 2 * n for k, n in ARTICLE_MIX.items()}
    # 10 x 12/30 = 4 factual; 2.67, 1.67, 1.67 → 2, 1, 1, and two of the equal remainders
    assert Counter(plan_kinds(10)) == {
        "factual": 4,
        "procedural": 2,
        "negative": 2,
        "out_of_scope": 2,
    }
    assert len(plan_kinds(7)) == 7 and plan_kinds(0) == []


def test_chunks_are_spread_over_documents_and_fit_their_kind() -> None:
    items = build_draft_items(CORPUS, 30)
    assert [i.question_id for i in items][:2] == ["d01", "d02"]
    assert len({i.chunk_id for i in items}) == 30  # each chunk once while there are unused ones
    docs = {CORPUS[i.chunk_id].doc for i in items if i.kind == "factual"}
    assert len(docs) == len({c.doc for c in CORPUS.values()})  # every topic gets a draft
    for item in items:
        if item.kind == "procedural":
            assert "1." in item.text or "手順" in item.text
    limits = [i.text for i in items if i.kind == "negative"]
    assert all(any(m in t for m in ("ません", "不可")) for t in limits)
    one = {"a/1": Chunk(chunk_id="a/1", doc="a", text="Only one chunk.")}
    assert [c.chunk_id for _, c in choose_chunks(one, ["factual", "negative"])] == ["a/1", "a/1"]


def test_the_prompt_shows_the_kind_heading_and_chunk_as_json() -> None:
    (item,) = build_draft_items(CORPUS, 1)
    request = draft_request(PROMPT, item)
    assert (
        json.dumps(item.kind) in request.prompt
        and json.dumps(item.text, ensure_ascii=False) in request.prompt
    )
    assert json.dumps(item.heading, ensure_ascii=False) in request.prompt
    assert request.task == "draft" and request.schema["required"] == ["question", "answer_span"]


def test_a_reply_is_strict_and_a_missing_one_keeps_its_status() -> None:
    (item,) = build_draft_items(CORPUS, 1)
    good = draft_for(
        item, Reply(text='{"question": "無料で何文字まで？", "answer_span": "最大500文字"}'), False
    )
    assert (good.status, good.question, good.answer_span, good.chunk_id) == (
        "ok",
        "無料で何文字まで？",
        "最大500文字",
        item.chunk_id,
    )
    extra = draft_for(item, Reply(text='{"question": "q", "answer_span": "s", "type": "x"}'), False)
    assert extra.status != "ok" and extra.question == ""
    failed = draft_for(item, Reply(kind="error", detail="HTTP 500"), True)
    assert (failed.status, failed.error, failed.cached) == ("backend_error", "HTTP 500", True)


def test_the_baseline_drafts_in_the_chunks_language() -> None:
    ja = draft_lexically(
        "negative", "制限", "ウィジェットはiPadに対応していません。iPhoneで使えます。"
    )
    assert ja == {
        "question": "制限でできないことはありますか？",
        "answer_span": "ウィジェットはiPadに対応していません。",
    }
    en = draft_lexically("factual", "Bands", "It uses 2.4 GHz and 5 GHz. No 6 GHz.")
    assert en == {
        "question": "What does the help say about Bands?",
        "answer_span": "It uses 2.4 GHz and 5 GHz.",
    }
    assert draft_lexically("out_of_scope", "Bands", "Text.")["answer_span"] == ""


def test_a_run_asks_no_drafts_and_the_judge_caches_them(tmp_path: Path) -> None:
    assert DRAFT.items(None, None, None) == []  # type: ignore[arg-type]
    items = build_draft_items(CORPUS, 4)
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        judge = Judge(LexicalBackend(), cache)
        first = judge.run(DRAFT, PROMPT, items)
        assert [r.status for r in first.results] == ["ok"] * 4 and not any(
            r.cached for r in first.results
        )
        again = judge.run(DRAFT, PROMPT, items)
        assert all(r.cached for r in again.results)
        assert [r.question for r in again.results] == [r.question for r in first.results]
    finally:
        cache.close()
