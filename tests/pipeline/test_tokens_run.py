"""Tokens through a run: the record's totals and report.md's lines (``judge.report.tokens_text``),
the estimate announced before judging (``JudgeChoice.estimate``) and before a batch export,
read from the cache's earlier replies of the same judge."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from judge.config import Config
from judge.judging.backends.base import JudgeRequest
from judge.judging.cache import VerdictCache
from judge.judging.grading import judge_fingerprint
from judge.judging.prompts import load_prompt
from judge.judging.verdict import Reply
from judge.pipeline.batch import export_batch
from judge.pipeline.evaluate import Hooks, evaluate
from judge.pipeline.session import JudgeChoice, earlier_replies, pending_estimate
from judge.report.tokens_text import token_lines
from judge.results.manifest import Manifest
from judge.results.tokens import TokenCount
from tests.fakes import ScriptedBackend, good_reply

Tiny = Callable[..., Config]


def counted_reply(request: JudgeRequest) -> Reply:
    """``good_reply`` with counts and a time, as a model server reports them."""
    return good_reply(request).model_copy(
        update={"prompt_tokens": 1000, "completion_tokens": 50, "latency_s": 2.0}
    )


def test_lexical_report_says_tokens_are_not_reported(tiny: Tiny) -> None:
    result = evaluate(tiny(), backend="lexical", progress=False)
    assert not result.report.tokens.reported
    lines = token_lines(result.report)
    assert lines[0] == "## Tokens and time"
    assert "- tokens: not reported by this backend (lexical)" in lines
    assert not any("| prompt tokens" in line for line in lines)
    # The manifest keeps the totals too, once the pipeline records them there (None before).
    manifest = json.loads((result.folder.path / "manifest.json").read_text(encoding="utf-8"))
    manifest.pop("tokens", None)  # a folder written before tokens were recorded
    assert Manifest.model_validate(manifest).tokens is None


def test_a_counting_backend_gives_totals_per_type(tiny: Tiny) -> None:
    result = evaluate(tiny(), backend=ScriptedBackend(counted_reply), progress=False)
    totals = result.report.tokens
    # 4 questions (one of each type in the tiny set), 1000 + 50 tokens and 2 s each.
    assert totals.total == TokenCount(
        items=4, counted=4, prompt_tokens=4000, completion_tokens=200, timed=4, seconds=8.0
    )
    assert list(totals.types) == ["factual", "procedural", "negative", "out_of_scope"]
    assert {name: c.prompt_tokens for name, c in totals.types.items()} == dict.fromkeys(
        totals.types, 1000
    )
    lines = token_lines(result.report)
    assert "| type | items with counts | prompt tokens | completion tokens | seconds |" in lines
    assert "| all | 4 | 4,000 | 200 | 8.0 |" in lines
    assert "| factual | 1 | 1,000 | 50 | 2.0 |" in lines


def _announced(config: Config, backend: ScriptedBackend) -> JudgeChoice:
    seen: list[JudgeChoice] = []
    evaluate(config, backend=backend, hooks=Hooks(on_judge_chosen=seen.append), progress=False)
    (choice,) = seen
    return choice


def test_the_run_announces_an_estimate_from_earlier_replies(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    first = _announced(config, ScriptedBackend(counted_reply))
    assert first.estimate is not None
    assert first.estimate.line() == (
        "to judge: 4 of 4 items (0 in the cache); no earlier replies of this judge to estimate from"
    )
    again = _announced(config, ScriptedBackend(counted_reply))
    assert again.estimate is not None and again.estimate.pending == 0
    assert again.estimate.line() == "to judge: none of 4 items (all in the cache)"
    # A prompt edit: every item pending again, at the rate of the 4 replies judged before
    # (1000 prompt, 50 completion tokens, 2 s each): 4 × 1000 = 4,000, 4 × 50 = 200, 8 s.
    edited = tmp_path / "edited.md"
    edited.write_text(config.judge.prompt.read_text(encoding="utf-8") + "\nBe brief.\n")
    third = _announced(
        config.with_overrides(judge={"prompt": edited}), ScriptedBackend(counted_reply)
    )
    assert third.estimate is not None
    assert third.estimate.line() == (
        "to judge: 4 of 4 items (0 in the cache); about 4,000 prompt and 200 completion tokens "
        "and 8 s at the rate of this judge's last 4 replies"
    )


def test_pending_estimate_reads_only_the_same_judge(tmp_path: Path, tiny: Tiny) -> None:
    config = tiny()
    prompt = load_prompt(config.judge.prompt)
    mine = judge_fingerprint(ScriptedBackend().identity, prompt)
    # The same model under another prompt text: same judge (a prompt edit is why items wait).
    edited = mine.parts | {"prompt_sha256": "other"}
    stranger = judge_fingerprint(ScriptedBackend(model="bigger").identity, prompt)
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        cache.register("old-prompt", edited, "scripted · old")
        cache.register(stranger.value, stranger.parts, "bigger")
        cache.register(mine.value, mine.parts, "scripted")
        for n in range(3):  # 300, 600, 900 prompt tokens; 1, 2, 3 s
            reply = Reply(text="{}", prompt_tokens=300 * (n + 1), latency_s=float(n + 1))
            cache.put("old-prompt", f"k{n}", f"q{n}", reply)
        cache.put(stranger.value, "k9", "q9", Reply(text="{}", prompt_tokens=99_999))
        cache.put(mine.value, "a", "qa", Reply(text="{}", prompt_tokens=600, latency_s=2.0))
        assert sorted(o.prompt_tokens or 0 for o in earlier_replies(cache, mine.parts)) == [
            300,
            600,
            600,
            900,
        ]
        got = pending_estimate(cache, mine, ["a", "b", "c"], concurrency=1)
        # 2 pending of 3 ("a" is cached); mean 600 tokens and 2 s a reply: 1,200 and 4 s.
        assert (got.pending, got.total, got.basis) == (2, 3, 4)
        assert (got.prompt_tokens, got.completion_tokens, got.seconds) == (1200, None, 4.0)
        assert "about 1,200 prompt and ? completion tokens and 4 s" in got.line()
    finally:
        cache.close()


def test_batch_export_estimates_what_it_writes(tiny: Tiny) -> None:
    config = tiny()
    export = export_batch(config)
    assert export.estimate is not None
    assert (export.estimate.pending, export.estimate.basis) == (export.pending, 0)
    assert "no earlier replies of this judge" in export.estimate.line()
