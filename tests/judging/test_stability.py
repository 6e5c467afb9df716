"""The stability check: variants of sampled items, judged and counted through the cache.

Its rendering is tested in tests/report/test_stability.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.axes import AXES
from judge.config import Config
from judge.config_backends import EmbeddedConfig
from judge.errors import ConfigError, Interrupted
from judge.grouped import ALL
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.backends.base import BackendIdentity, JudgeRequest
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import JudgeProgress, judge_fingerprint
from judge.judging.injection import INJECTION_EN, INJECTION_JA
from judge.judging.items import JudgeItem, build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import Prompt, load_prompt
from judge.judging.stability import INJECTIONS, check_stability, make_variant, sample_items
from judge.judging.types import VARIANTS, Count, StabilityReport, Variant
from judge.judging.verdict import Reply
from tests.conftest import REPO
from tests.fakes import ScriptedBackend, good_reply


class CountingLexical:
    """The real lexical backend, counting the requests that reach it."""

    def __init__(self) -> None:
        self.inner = LexicalBackend()
        self.identity: BackendIdentity = self.inner.identity
        self.calls: list[JudgeRequest] = []

    def close(self) -> None:
        self.inner.close()

    def complete(self, request: JudgeRequest) -> Reply:
        self.calls.append(request)
        return self.inner.complete(request)


def _sample_items(config: Config, context_k: int) -> list[JudgeItem]:
    """The shipped sample's items (read directly: no pipeline, no reports imported)."""
    golden = load_golden(config.data)
    assert config.data.run is not None
    return build_items(golden, load_run(config.data.run, golden), context_k)


@pytest.fixture
def items(sample_config: Config) -> list[JudgeItem]:
    return _sample_items(sample_config, sample_config.retrieval.context_k)


@pytest.fixture
def prompt() -> Prompt:
    return load_prompt(REPO / "prompts" / "judge.v1.md")


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[VerdictCache]:
    opened = VerdictCache(tmp_path / "verdicts.sqlite3")
    yield opened
    opened.close()


# --- variants and sampling -------------------------------------------------------------------


def test_order_variants_reorder_renumber_and_rekey(items: list[JudgeItem]) -> None:
    item = items[0]
    ids = [c.chunk_id for c in item.context]
    assert len(ids) == 5
    reversed_ = make_variant(item, "reversed")
    assert reversed_ is not None
    assert [c.chunk_id for c in reversed_.context] == ids[::-1]
    assert [c.rank for c in reversed_.context] == [1, 2, 3, 4, 5]
    shuffled = make_variant(item, "shuffled", seed=0)
    assert shuffled is not None
    order = [c.chunk_id for c in shuffled.context]
    assert sorted(order) == sorted(ids) and order not in (ids, ids[::-1])
    assert [c.rank for c in shuffled.context] == [1, 2, 3, 4, 5]
    # Seeded: the same seed gives the same order; the question and answer are untouched.
    again = make_variant(item, "shuffled", seed=0)
    assert again is not None and again.context == shuffled.context
    for variant in (reversed_, shuffled):
        assert variant.record.answer == item.record.answer
        assert variant.question == item.question
    keys = {item.key, reversed_.key, shuffled.key}
    assert len(keys) == 3
    # The original item is unchanged.
    assert [c.chunk_id for c in item.context] == ids


def test_too_few_chunks_to_reorder_means_no_variant(items: list[JudgeItem]) -> None:
    item = items[0]
    two, one = item._replace(context=item.context[:2]), item._replace(context=item.context[:1])
    assert make_variant(one, "reversed") is None
    assert make_variant(one, "shuffled") is None
    assert make_variant(two, "shuffled") is None  # its only other order is the reversed one
    reversed_two = make_variant(two, "reversed")
    assert reversed_two is not None and reversed_two.context[0].chunk_id == two.context[1].chunk_id
    # Injections apply whatever the context.
    assert make_variant(one, "injection_en") is not None


def test_injection_variants_append_the_fixed_sentences(items: list[JudgeItem]) -> None:
    item = items[0]
    en, ja = make_variant(item, "injection_en"), make_variant(item, "injection_ja")
    assert en is not None and ja is not None
    assert en.record.answer == f"{item.record.answer} {INJECTION_EN}"
    assert ja.record.answer == f"{item.record.answer}\n{INJECTION_JA}"
    assert en.context == item.context and ja.context == item.context
    assert len({item.key, en.key, ja.key}) == 3


def test_the_sample_is_seeded_and_keeps_golden_order(items: list[JudgeItem]) -> None:
    first = [i.question.id for i in sample_items(items, 10, seed=3)]
    assert first == [i.question.id for i in sample_items(items, 10, seed=3)]
    assert first != [i.question.id for i in sample_items(items, 10, seed=4)]
    assert len(first) == 10 and first == sorted(first)
    assert sample_items(items, 100, seed=0) == items
    with pytest.raises(ConfigError, match="at least 1"):
        sample_items(items, 0, seed=0)


# --- the check with the real lexical backend -------------------------------------------------


def _assert_adds_up(report: StabilityReport) -> None:
    for row in report.rows:
        assert row.pairs + row.not_ok + row.not_applicable == row.sampled, row
        for axis in AXES:
            assert row.changed[axis].n == row.moved_up[axis].n == row.pairs
            assert row.moved_up[axis].k <= row.changed[axis].k <= row.pairs
        assert row.became_full.n <= row.pairs
    for variant in VARIANTS:
        whole = report.row(variant, ALL)
        parts = [report.row(variant, t) for t in report.types]
        assert whole.sampled == len(report.sampled) == sum(p.sampled for p in parts)
        assert whole.pairs == sum(p.pairs for p in parts)
        assert whole.not_ok == sum(p.not_ok for p in parts)
        for axis in AXES:
            assert whole.changed[axis].k == sum(p.changed[axis].k for p in parts)
        # Every pair whose scores differ is listed, once.
        listed = [c for c in report.flips if c.variant == variant]
        assert len(listed) == len({c.question_id for c in listed})
        assert all(c.before != c.after for c in listed)
        either_axis = [c for c in listed if c.before[0] != c.after[0] or c.before[1] != c.after[1]]
        assert max(whole.changed[a].k for a in AXES) <= len(either_axis) == len(listed)
        assert len(listed) <= whole.changed["faithfulness"].k + whole.changed["relevance"].k


def test_lexical_judge_ignores_order_and_injections_only_lower_faithfulness(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    backend = CountingLexical()
    events: list[JudgeProgress] = []
    report = check_stability(items, backend, prompt, cache, sample=30, on_progress=events.append)
    assert report.population == 30 and len(report.sampled) == 30
    assert report.types == ("factual", "procedural", "negative", "out_of_scope")
    # 30 originals and 4 variants each (every sample answer has 5 chunks): all asked.
    assert report.verdicts == 150 and len(backend.calls) == 150 and report.from_cache == 0
    assert report.failures == ()
    _assert_adds_up(report)
    # The baseline scores a set of context tokens: the order of the chunks changes nothing.
    order_variants: tuple[Variant, ...] = ("reversed", "shuffled")
    for variant in order_variants:
        row = report.row(variant)
        assert row.pairs == 30 and row.not_applicable == 0
        assert row.changed["faithfulness"] == Count(0, 30) == row.changed["relevance"]
    # An appended instruction is unsupported text: faithfulness falls for 20 of 30 answers
    # and never rises; relevance (question words the answer repeats) never moves; refusals
    # (out_of_scope) are scored by their stock phrase and stay as they were.
    for variant in INJECTIONS:
        row = report.row(variant)
        assert row.changed["faithfulness"] == Count(20, 30)
        assert row.moved_up["faithfulness"] == Count(0, 30)
        assert row.changed["relevance"] == Count(0, 30)
        # of the 18 answers below full marks (q05 and q23 refuse, and no chunk holds 0.4 of
        # their question: 2/2 since issue 33)
        assert row.became_full == Count(0, 18)
        assert report.row(variant, "out_of_scope").changed["faithfulness"] == Count(0, 5)
    changes = [c for c in report.flips if c.variant.startswith("injection")]
    assert len(changes) == len(report.flips) == 40
    assert all(c.after[0] < c.before[0] and c.after[1] == c.before[1] for c in changes)
    # Progress covers the whole check and ends complete.
    assert events[-1] == JudgeProgress(150, 150, 0, 0)
    assert [e.done for e in events] == sorted(e.done for e in events)
    assert {e.total for e in events} == {150}


def test_a_second_run_comes_from_the_cache(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    first_backend = CountingLexical()
    # The originals were judged by an ordinary run before: only the variants are asked.
    judge_items(items[:6], first_backend, prompt, cache)
    assert len(first_backend.calls) == 6
    first = check_stability(items[:6], first_backend, prompt, cache, sample=6)
    assert len(first_backend.calls) == 6 + 6 * 4
    assert first.from_cache == 6
    again = CountingLexical()
    second = check_stability(items[:6], again, prompt, cache, sample=6)
    assert again.calls == []
    assert second.from_cache == second.verdicts == 30
    assert (second.rows, second.flips, second.sampled) == (
        first.rows,
        first.flips,
        first.sampled,
    )
    # Every variant has its own row in the cache.
    fingerprint = judge_fingerprint(again.identity, prompt).value
    assert len(cache.cached_keys(fingerprint)) == 30


def with_failures(items: list[JudgeItem], prompt: Prompt, cache: VerdictCache) -> StabilityReport:
    """The first four items checked where every Japanese injection gets a reply that is not
    JSON and the second item's original gets a backend error (shared with the view's tests)."""
    broken_original = items[1].record.answer

    def script(request: JudgeRequest) -> Reply:
        if request.answer.endswith(INJECTION_JA):
            return Reply(text="{not json", finish_reason="stop")
        if request.answer == broken_original and list(request.context) == items[1].context:
            return Reply(kind="error", detail="HTTP 400: bad request")
        return good_reply(request)

    return check_stability(items[:4], ScriptedBackend(script), prompt, cache, sample=4)


def test_verdicts_that_are_not_ok_are_counted_and_listed(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    report = with_failures(items, prompt, cache)
    _assert_adds_up(report)
    qid = items[1].question.id
    statuses = {(f.question_id, f.variant): f.status for f in report.failures}
    assert statuses[qid, None] == "backend_error"
    assert all(statuses[i.question.id, "injection_ja"] == "parse_error" for i in items[:4])
    # The item whose original failed is compared under no variant; the Japanese injection
    # compares nothing.
    compared: tuple[Variant, ...] = ("reversed", "shuffled", "injection_en")
    for variant in compared:
        assert (report.row(variant).not_ok, report.row(variant).pairs) == (1, 3)
    assert (report.row("injection_ja").not_ok, report.row("injection_ja").pairs) == (4, 0)
    assert report.row("injection_ja").changed["faithfulness"] == Count(0, 0)
    # How the failures are shown: tests/report/test_stability.py.


def test_flags_are_reported_for_every_verdict_whatever_its_status(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    report = with_failures(items, prompt, cache)
    by_variant = {f.variant: f for f in report.flags}
    assert list(by_variant) == [None, *VARIANTS]
    # The injected answers are flagged every time: the English ones' verdicts are ok and carry
    # the detector's reason; the Japanese ones failed (not JSON) and are flagged all the same.
    assert by_variant["injection_en"].count == Count(4, 4)
    assert by_variant["injection_ja"].count == Count(4, 4)
    assert {f.status for f in by_variant["injection_ja"].flagged} == {"parse_error"}
    assert all(
        any("the answer" in reason for reason in f.reasons)
        for variant in INJECTIONS
        for f in by_variant[variant].flagged
    )
    # The originals and the reordered ones hold no instruction; their quotes are found.
    for variant in (None, "reversed", "shuffled"):
        assert by_variant[variant].count == Count(0, 4)


def test_ctrl_c_raises_interrupted_after_caching_what_was_judged(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    def script(request: JudgeRequest) -> Reply:
        if request.answer.endswith(INJECTION_EN):
            raise KeyboardInterrupt
        return good_reply(request)

    with pytest.raises(Interrupted, match="12 of 20 verdicts judged and cached"):
        check_stability(items[:4], ScriptedBackend(script), prompt, cache, sample=4)
    resumed = ScriptedBackend()
    report = check_stability(items[:4], resumed, prompt, cache, sample=4)
    # Only the two injection variants of each item are asked again.
    assert len(resumed.calls) == 8 and report.from_cache == 12


# --- the real embedded model -----------------------------------------------------------------


@pytest.mark.slow
def test_two_items_with_the_embedded_model(
    sample_config: Config, prompt: Prompt, cache: VerdictCache
) -> None:
    embedded = pytest.importorskip("judge.judging.backends.embedded")
    # Three chunks each (the fewest a shuffle needs): shorter prompts, a faster test.
    items = _sample_items(sample_config, 3)
    backend = embedded.EmbeddedBackend(EmbeddedConfig())
    try:
        report = check_stability(items, backend, prompt, cache, sample=2, seed=0)
    finally:
        backend.close()
    assert len(report.sampled) == 2 and report.verdicts == 10 and report.from_cache == 0
    # Every variant of both items was judged and has its reply in the cache.
    fingerprint = judge_fingerprint(backend.identity, prompt).value
    assert len(cache.cached_keys(fingerprint)) == 10
    _assert_adds_up(report)
    for variant in VARIANTS:
        row = report.row(variant)
        assert row.sampled == 2 and row.not_applicable == 0
        assert row.pairs + row.not_ok == 2
    # Under the grammar a reply is ok or cut off: never a backend error.
    assert {f.status for f in report.failures} <= {"parse_error"}
