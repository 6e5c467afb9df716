"""Token and time totals per type, "not reported" where a backend counts nothing, and the
estimate of what pending items cost (``judge.results.tokens``)."""

from __future__ import annotations

from judge.judging.types import Verdict
from judge.results.tokens import Estimate, Observed, TokenCount, estimate, token_totals


def _verdict(
    qid: str,
    prompt: int | None,
    completion: int | None,
    seconds: float = 1.0,
    cached: bool = False,
) -> Verdict:
    return Verdict(
        question_id=qid,
        item_key=f"k{qid}",
        status="ok",
        prompt_tokens=prompt,
        completion_tokens=completion,
        latency_s=seconds,
        cached=cached,
    )


TYPES = {"q1": "factual", "q2": "factual", "q3": "procedural", "q4": "negative"}


def test_totals_per_type_and_for_the_run() -> None:
    verdicts = [
        _verdict("q1", 1000, 40, 2.0),
        _verdict("q2", 1200, 60, 3.5, cached=True),
        _verdict("q3", 900, 30, 1.5),
        _verdict("q4", None, None, 0.0),  # an error reply: no counts, no time
    ]
    totals = token_totals(verdicts, TYPES, ("factual", "procedural", "negative", "out_of_scope"))
    assert list(totals.types) == ["factual", "procedural", "negative", "out_of_scope"]
    # factual: 1000 + 1200 = 2200 prompt, 40 + 60 = 100 completion, 2.0 + 3.5 = 5.5 s.
    assert totals.types["factual"] == TokenCount(
        items=2,
        counted=2,
        prompt_tokens=2200,
        completion_tokens=100,
        timed=2,
        seconds=5.5,
        cached=1,
    )
    # negative: one verdict, nothing reported: None, never 0.
    negative = totals.types["negative"]
    assert (negative.items, negative.counted, negative.prompt_tokens, negative.seconds) == (
        1,
        0,
        None,
        None,
    )
    assert totals.types["out_of_scope"] == TokenCount()  # declared, no verdicts
    # all: 1000 + 1200 + 900 = 3100 prompt, 130 completion, 7.0 s over 3 timed; 3 of 4 counted.
    assert totals.total == TokenCount(
        items=4,
        counted=3,
        prompt_tokens=3100,
        completion_tokens=130,
        timed=3,
        seconds=7.0,
        cached=1,
    )
    assert totals.reported


def test_a_backend_that_counts_nothing_is_not_reported_not_zero() -> None:
    verdicts = [_verdict("q1", None, None, 0.01), _verdict("q3", None, None, 0.02)]
    totals = token_totals(verdicts, TYPES, ("factual", "procedural"))
    assert not totals.reported
    assert totals.total.prompt_tokens is None and totals.total.completion_tokens is None
    assert totals.total.seconds == 0.03  # the time is still measured
    assert not totals.types["factual"].reported


def test_a_type_outside_the_declared_order_comes_after_it() -> None:
    totals = token_totals([_verdict("q9", 10, 1)], {"q9": "other"}, ("factual",))
    assert list(totals.types) == ["factual", "other"]
    # A verdict of a question without a type counts in the total only.
    lone = token_totals([_verdict("zz", 10, 1)], {}, ())
    assert lone.types == {} and lone.total.prompt_tokens == 10


def test_the_estimate_at_the_rate_of_earlier_replies() -> None:
    earlier = [Observed(1000, 50, 2.0), Observed(1200, 70, 4.0), Observed(None, None, 0.0)]
    # pending 10: prompt mean (1000 + 1200) / 2 = 1100 × 10 = 11,000; completion 60 × 10 = 600;
    # time (2.0 + 4.0) / 2 = 3 s × 10 = 30 s (the imported reply with no time is left out).
    got = estimate(10, 30, earlier)
    assert got == Estimate(10, 30, 3, 11_000, 600, 30.0, 1)
    assert got.line() == (
        "to judge: 10 of 30 items (20 in the cache); about 11,000 prompt and 600 completion "
        "tokens and 30 s at the rate of this judge's last 3 replies"
    )
    # Two requests in flight: half the time.
    assert estimate(10, 30, earlier, concurrency=2).seconds == 15.0
    assert "2 at a time" in estimate(10, 30, earlier, concurrency=2).line()


def test_the_estimate_without_earlier_replies_says_so() -> None:
    got = estimate(30, 30, [])
    assert (got.basis, got.prompt_tokens, got.seconds) == (0, None, None)
    assert got.line() == (
        "to judge: 30 of 30 items (0 in the cache); no earlier replies of this judge to "
        "estimate from"
    )
    assert estimate(0, 30, []).line() == "to judge: none of 30 items (all in the cache)"


def test_the_estimate_is_rounded_and_says_when_tokens_are_not_reported() -> None:
    # 1,234,567 tokens a reply × 1 item: two significant figures, 1,200,000.
    big = estimate(1, 1, [Observed(1_234_567, 99, 2400.0)])
    assert (big.prompt_tokens, big.completion_tokens) == (1_200_000, 99)
    assert "about 1,200,000 prompt and 99 completion tokens and 40 min" in big.line()
    # The lexical baseline: time, no tokens.
    lexical = estimate(4, 4, [Observed(None, None, 0.01)])
    assert lexical.line() == (
        "to judge: 4 of 4 items (0 in the cache); about 1 s at the rate of this judge's last 1 "
        "reply; tokens: not reported by this backend"
    )
