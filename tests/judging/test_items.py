"""What the judge is shown: the top context_k chunks in rank order, and the key that hashes them."""

import copy
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tenacity import wait_none

from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.cache import VerdictCache
from judge.judging.items import build_items, context_for, item_key
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from judge.judging.types import ContextChunk
from tests.conftest import QUESTIONS, REPO, RUN
from tests.fakes import ScriptedBackend

Tiny = Callable[..., Config]


def test_context_is_the_top_k_chunks_in_rank_order(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    run = load_run(config.data.run, golden)
    context = context_for(run.records["q2"], golden.corpus, 2)
    assert [(c.rank, c.chunk_id) for c in context] == [(1, "backup/auto"), (2, "widgets/sizes")]
    assert context[0].text.startswith("自動バックアップは")


def test_text_in_the_run_wins_over_the_corpus(tiny: Tiny) -> None:
    run = copy.deepcopy(RUN)
    run[1]["retrieved"] = [{"chunk_id": "pricing/plans", "text": "as the generator saw it"}]
    config = tiny(run=run)
    golden = load_golden(config.data)
    assert config.data.run is not None
    record = load_run(config.data.run, golden).records["q1"]
    assert context_for(record, golden.corpus, 5)[0].text == "as the generator saw it"


def test_item_key_is_the_pinned_hash_of_question_context_and_answer() -> None:
    # Canonical JSON (sorted keys, no spaces, Japanese as is) of what the judge sees, cut to 32
    # hex digits. If this fails, every cached verdict is orphaned: bump HASH_SCHEME instead.
    canonical = '{"answer":"はい","context":[["c/1","本文"]],"question":"質問"}'
    expected = "h1:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]
    assert item_key("質問", [ContextChunk(1, "c/1", "本文")], "はい") == expected


def test_item_key_changes_with_the_answer_or_a_chunk_text_and_only_then() -> None:
    context = [ContextChunk(1, "backup/auto", "毎日午前3時。"), ContextChunk(2, "w/s", "小と中。")]
    key = item_key("いつ？", context, "午前3時です。")
    assert len(key) == len("h1:") + 32
    # Nothing changed (a new but equal context list): the same key, so the cache hits.
    same = [ContextChunk(1, "backup/auto", "毎日午前3時。"), ContextChunk(2, "w/s", "小と中。")]
    assert item_key("いつ？", same, "午前3時です。") == key
    assert item_key("いつ？", context, "午前4時です。") != key
    edited = [context[0], ContextChunk(2, "w/s", "小と中と大。")]
    assert item_key("いつ？", edited, "午前3時です。") != key
    assert item_key("いつ？", context[::-1], "午前3時です。") != key  # rank order counts
    assert item_key("何時？", context, "午前3時です。") != key


def test_the_reference_answer_is_in_the_key_when_there_is_one() -> None:
    context = [ContextChunk(1, "pricing/plans", "年額3,800円です。")]
    without = item_key("年額は？", context, "3,800円です。")
    # No reference and an empty one render the same ("") and keep the key they always had.
    assert item_key("年額は？", context, "3,800円です。", None) == without
    assert item_key("年額は？", context, "3,800円です。", "") == without
    with_reference = item_key("年額は？", context, "3,800円です。", "年額は3,800円です。")
    assert with_reference != without
    assert item_key("年額は？", context, "3,800円です。", "年額は4,800円です。") != with_reference
    assert item_key("年額は？", context, "3,800円です。", " ") not in (without, with_reference)
    canonical = (
        '{"answer":"はい","context":[["c/1","本文"]],"question":"質問","reference":"はい。"}'
    )
    expected = "h1:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]
    assert item_key("質問", [ContextChunk(1, "c/1", "本文")], "はい", "はい。") == expected


def test_items_differing_only_in_the_reference_never_share_a_cached_verdict(
    tiny: Tiny, tmp_path: Path
) -> None:
    # The shipped prompt shows the reference, so a verdict given under one reference must not
    # be served for another: the edited question is judged again, the others come from the cache.
    backend, cache_path = ScriptedBackend(), tmp_path / "c.sqlite3"
    prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
    assert prompt.uses_reference

    def judged(reference: str | None) -> list[str]:
        questions = copy.deepcopy(QUESTIONS)
        questions[0]["reference_answer"] = reference
        config = tiny(questions=questions)
        golden = load_golden(config.data)
        assert config.data.run is not None
        items = build_items(golden, load_run(config.data.run, golden), 5)
        before = len(backend.calls)
        cache = VerdictCache(cache_path)
        try:
            outcome = judge_items(items, backend, prompt, cache, retry_wait=wait_none())
        finally:
            cache.close()
        assert len(outcome.verdicts) == len(items)
        return [call.question for call in backend.calls[before:]]

    first = judged("年額プランは3,800円です。")
    assert len(first) == len(QUESTIONS)
    assert judged("年額プランは3,800円です。") == []
    assert judged("年額プランは4,800円です。") == [QUESTIONS[0]["question"]]
    assert judged(None) == [QUESTIONS[0]["question"]]
    assert judged("") == []  # renders as no reference does: the same item


def test_a_chunk_below_context_k_does_not_change_the_key(tiny: Tiny) -> None:
    # q2 ranks backup/auto, widgets/sizes, backup/restore: with context_k = 2 the judge never
    # sees backup/restore, so a new text for it must not re-judge q2; one for widgets/sizes must.
    def keys(run: list[dict[str, Any]]) -> dict[str, str]:
        config = tiny(run=run)
        golden = load_golden(config.data)
        assert config.data.run is not None
        items = build_items(golden, load_run(config.data.run, golden), 2)
        return {i.question.id: i.key for i in items}

    run = copy.deepcopy(RUN)
    before = keys(run)
    run[2]["retrieved"][2]["text"] = "別の本文"
    assert keys(run) == before
    run[2]["retrieved"][1]["text"] = "ウィジェットは3サイズです。"
    after = keys(run)
    assert after["q2"] != before["q2"]
    assert {k: v for k, v in after.items() if k != "q2"} == {
        k: v for k, v in before.items() if k != "q2"
    }


def test_build_items_skips_questions_the_run_has_no_record_for(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    run = load_run(config.data.run, golden)
    failed = run.meta.model_copy(update={"failed": {"q3": "RuntimeError: offline"}})
    partial = run._replace(meta=failed, records={k: v for k, v in run.records.items() if k != "q3"})
    items = build_items(golden, partial, 3)
    assert [i.question.id for i in items] == ["q1", "q2", "q4"]  # golden order, q3 left out
    q2 = items[1]
    assert q2.record.answer == RUN[2]["answer"]
    assert [c.chunk_id for c in q2.context] == ["backup/auto", "widgets/sizes", "backup/restore"]
    assert q2.key == item_key(
        q2.question.question, q2.context, q2.record.answer, q2.question.reference_answer
    )
    assert [c.chunk_id for c in items[2].context] == ["pricing/plans"]  # fewer than context_k


def test_items_share_one_context_chunk_per_chunk_text_and_rank() -> None:
    from judge.inputs.golden import Chunk
    from judge.inputs.runs import RetrievedChunk, RunRecord

    corpus = {
        c.chunk_id: c
        for c in (
            Chunk(chunk_id="a", doc="d", text="A のテキスト。"),
            Chunk(chunk_id="b", doc="d", text="B のテキスト。"),
        )
    }

    def record(*ranked: tuple[str, str | None]) -> RunRecord:
        retrieved = tuple(RetrievedChunk(chunk_id=c, text=t) for c, t in ranked)
        return RunRecord(id="q", retrieved=retrieved, answer="x")

    first = context_for(record(("a", None), ("b", None)), corpus, 5)
    second = context_for(record(("a", None), ("b", None)), corpus, 5)
    assert first == [ContextChunk(1, "a", "A のテキスト。"), ContextChunk(2, "b", "B のテキスト。")]
    assert all(x is y for x, y in zip(first, second, strict=True))
    # Another rank, or the text the run itself supplied, is another chunk as shown.
    swapped = context_for(record(("b", None), ("a", None)), corpus, 5)
    assert swapped == [
        ContextChunk(1, "b", "B のテキスト。"),
        ContextChunk(2, "a", "A のテキスト。"),
    ]
    own = context_for(record(("a", "the generator's own text"), ("b", None)), corpus, 1)
    assert own == [ContextChunk(1, "a", "the generator's own text")]
