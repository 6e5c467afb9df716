"""The "Tokens and time" section of report.md (judge.report.tokens_text): counts per type with
thousands separators, "not reported" where a backend counts nothing (never 0), partial counts
said over how many, the cache and seconds notes, and the further judgements' cost lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.report.tokens_text import cost_text, token_lines, token_section
from judge.results.tokens import TokenCount, TokenTotals
from tests.conftest import REPO

Tiny = Callable[..., Config]


def test_partial_counts_say_over_how_many() -> None:
    some = TokenCount(items=3, counted=2, prompt_tokens=10, completion_tokens=2, timed=3, seconds=1)
    totals = TokenTotals(types={"factual": some}, total=some)
    assert "| factual | 2 of 3 | 10 | 2 | 1.0 |" in token_section(totals, "openai")


def test_a_backend_without_counts_gets_one_line_and_its_time() -> None:
    none = TokenCount(items=4, timed=4, seconds=12.345)
    lines = token_section(TokenTotals(types={"factual": none}, total=none), "my*judge")
    # The backend's name is data: Markdown punctuation escaped.
    assert lines == [
        "## Tokens and time",
        "",
        "- tokens: not reported by this backend (my\\*judge)",
        "- judge time: 12.3 s over 4 items",
        "",
    ]
    untimed = TokenCount(items=4)
    assert token_section(TokenTotals(types={}, total=untimed), "lexical") == [
        "## Tokens and time",
        "",
        "- tokens: not reported by this backend (lexical)",
        "",
    ]


def test_counts_per_type_then_all_with_the_cache_and_seconds_notes() -> None:
    factual = TokenCount(
        items=3, counted=3, prompt_tokens=1_234_567, completion_tokens=890, timed=3, seconds=2.25
    )
    negative = TokenCount(items=1, counted=1, prompt_tokens=10, completion_tokens=5)
    # 1,234,567 + 10 prompt and 890 + 5 completion tokens; 2.25 s from the timed three.
    total = TokenCount(
        items=4,
        counted=4,
        prompt_tokens=1_234_577,
        completion_tokens=895,
        timed=3,
        seconds=2.25,
        cached=2,
    )
    lines = token_section(
        TokenTotals(types={"factual": factual, "negative": negative}, total=total), "openai"
    )
    assert lines == [
        "## Tokens and time",
        "",
        "| type | items with counts | prompt tokens | completion tokens | seconds |",
        "|---|---:|---:|---:|---:|",
        "| factual | 3 | 1,234,567 | 890 | 2.2 |",
        "| negative | 1 | 10 | 5 | not reported |",
        "| all | 4 | 1,234,577 | 895 | 2.2 |",
        "",
        "- 2 of 4 verdicts came from the cache: their counts and seconds are those of the "
        "original replies",
        "- seconds: each item's request time, added up (with several requests in flight, more "
        "than the wall time)",
        "",
    ]
    uncached = total.model_copy(update={"cached": 0})
    fresh = token_section(TokenTotals(types={}, total=uncached), "openai")
    assert not any("from the cache" in line for line in fresh)
    assert fresh[-2].startswith("- seconds: each item's request time")


def test_cost_text_says_calls_cache_tokens_and_seconds() -> None:
    counted = TokenCount(
        items=3,
        counted=3,
        prompt_tokens=1200,
        completion_tokens=30,
        timed=3,
        seconds=4.56,
        cached=1,
    )
    assert cost_text(counted) == (
        "3 calls (1 from the cache), 1,200 prompt + 30 completion tokens, 4.6 s"
    )
    assert cost_text(TokenCount(items=2)) == "2 calls (0 from the cache), tokens not reported"
    # Prompt tokens counted, completion tokens not: "not reported", never 0.
    half = TokenCount(items=2, counted=2, prompt_tokens=7)
    assert cost_text(half) == (
        "2 calls (0 from the cache), 7 prompt + not reported completion tokens"
    )


def test_token_lines_add_a_cost_line_per_further_judgement(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny().with_overrides(
        judge={
            "chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md"},
            "correctness": {"enabled": True, "prompt": REPO / "prompts" / "correctness.v1.md"},
        }
    )
    report = evaluate(config, backend="lexical", progress=False).report
    lines = token_lines(report)
    # The answers' section, then before its closing blank line one line per further judgement.
    assert lines[:-3] == token_section(report.tokens, "lexical")[:-1]
    chunks, correctness = (
        report.further_tokens["chunk grades"],
        report.further_tokens["correctness"],
    )
    assert lines[-3:] == [
        f"- chunk grades: {cost_text(chunks)}",
        f"- correctness: {cost_text(correctness)}",
        "",
    ]
    # Every retrieved chunk of the tiny set graded (2 + 3 + 2 + 1); correctness judged for the
    # one out-of-scope question (the tiny set has no reference answers); the lexical baseline
    # counts no tokens, and every call was new.
    assert (chunks.items, correctness.items) == (8, 1)
    assert lines[-3].startswith(
        f"- chunk grades: {chunks.items} calls (0 from the cache), tokens not reported"
    )
    assert lines[-2].startswith(
        f"- correctness: {correctness.items} calls (0 from the cache), tokens not reported"
    )
    # Without further judgements the section is the answers' alone.
    plain = evaluate(tiny(), backend="lexical", progress=False).report
    assert token_lines(plain) == token_section(plain.tokens, "lexical")
