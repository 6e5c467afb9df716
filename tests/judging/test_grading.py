"""The judge stage with a scripted backend: what the judge sees, retries, statuses."""

from collections.abc import Callable
from pathlib import Path

import pytest
from tenacity import wait_none

from judge.config import Config
from judge.errors import (
    BackendRequestError,
    BackendUnavailable,
    ConnectionLost,
    PromptTooLong,
    TransientBackendError,
)
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.cache import VerdictCache
from judge.judging.grading import Ask
from judge.judging.items import build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from judge.judging.verdict import Reply
from tests.conftest import REPO
from tests.fakes import ScriptedBackend, good_reply

Tiny = Callable[..., Config]
PROMPT = load_prompt(REPO / "prompts" / "judge.v1.md")


def _items(config: Config, context_k: int = 5):  # type: ignore[no-untyped-def]
    golden = load_golden(config.data)
    assert config.data.run is not None
    return build_items(golden, load_run(config.data.run, golden), context_k)


def _judge(items, backend, tmp_path: Path, **kwargs):  # type: ignore[no-untyped-def]
    cache = VerdictCache(tmp_path / "cache.sqlite3")
    try:
        return judge_items(items, backend, PROMPT, cache, retry_wait=wait_none(), **kwargs)
    finally:
        cache.close()


def test_the_judge_sees_only_the_top_context_k_chunks(tiny: Tiny, tmp_path: Path) -> None:
    backend = ScriptedBackend()
    _judge(_items(tiny(), context_k=2), backend, tmp_path)
    q2 = next(r for r in backend.calls if r.question.startswith("バックアップから"))
    # The run ranked auto, widgets, restore: with context_k 2 the golden chunk
    # backup/restore (rank 3) must not reach the judge.
    assert [c.chunk_id for c in q2.context] == ["backup/auto", "widgets/sizes"]
    assert "backup/restore" not in q2.prompt and "2. バックアップを選びます" not in q2.prompt
    assert '"chunk_id": "backup/auto"' in q2.prompt
    assert "設定を開き、バックアップを選び" in q2.prompt  # the answer


def test_all_ok_and_progress(tiny: Tiny, tmp_path: Path) -> None:
    events = []
    outcome = _judge(_items(tiny()), ScriptedBackend(), tmp_path, on_progress=events.append)
    assert {v.status for v in outcome.verdicts.values()} == {"ok"}
    assert events[-1].done == events[-1].total == 4
    assert not outcome.interrupted


def test_two_questions_that_show_the_judge_the_same_are_asked_once_and_both_judged(
    tiny: Tiny, tmp_path: Path
) -> None:
    """Two golden questions with the same text, chunks and answer share one cache key: the judge
    is asked once, and each question gets its own verdict (the first was left without one)."""
    import copy

    from tests.conftest import QUESTIONS, RUN

    questions, run = copy.deepcopy(QUESTIONS), copy.deepcopy(RUN)
    questions.append({**questions[0], "id": "q1b"})
    run.append({**run[1], "id": "q1b"})
    items = _items(tiny(questions=questions, run=run))
    assert items[0].key == items[-1].key and items[-1].question_id == "q1b"
    backend = ScriptedBackend()
    events = []
    outcome = _judge(items, backend, tmp_path, on_progress=events.append)
    assert sorted(outcome.verdicts) == ["q1", "q1b", "q2", "q3", "q4"]
    assert {v.status for v in outcome.verdicts.values()} == {"ok"}
    assert (
        outcome.verdicts["q1"].question_id == "q1" and outcome.verdicts["q1b"].question_id == "q1b"
    )
    assert len(backend.calls) == 4  # one per key
    assert events[-1].done == events[-1].total == 4


def test_transient_errors_are_retried_then_succeed(tiny: Tiny, tmp_path: Path) -> None:
    failures = iter([TransientBackendError("HTTP 503: queue full")] * 2)
    backend = ScriptedBackend(lambda r: next(failures, None) or good_reply(r))
    outcome = _judge(_items(tiny())[:1], backend, tmp_path, max_attempts=3)
    assert outcome.verdicts["q1"].status == "ok"
    assert len(backend.calls) == 3


def test_exhausted_retries_give_a_backend_error_that_is_not_cached(
    tiny: Tiny, tmp_path: Path
) -> None:
    backend = ScriptedBackend(lambda r: TransientBackendError("HTTP 500: out of memory"))
    outcome = _judge(_items(tiny())[:1], backend, tmp_path, max_attempts=2)
    verdict = outcome.verdicts["q1"]
    assert verdict.status == "backend_error" and verdict.faithfulness is None
    assert verdict.error == "HTTP 500: out of memory (after 2 attempts)"
    assert len(backend.calls) == 2
    # Never cached: the next run asks again.
    again = ScriptedBackend()
    assert _judge(_items(tiny())[:1], again, tmp_path).verdicts["q1"].status == "ok"
    assert len(again.calls) == 1


def test_client_errors_are_not_retried(tiny: Tiny, tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda r: BackendRequestError("HTTP 400: bad format"))
    outcome = _judge(_items(tiny())[:1], backend, tmp_path, max_attempts=5)
    assert outcome.verdicts["q1"].status == "backend_error"
    assert len(backend.calls) == 1


def test_a_server_that_is_gone_ends_the_run(tiny: Tiny, tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda r: ConnectionLost("connection refused"))
    with pytest.raises(BackendUnavailable, match="stopped answering after 2 attempts"):
        _judge(_items(tiny()), backend, tmp_path, max_attempts=2)


def test_a_prompt_too_long_is_truncated_and_never_scored(tiny: Tiny, tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda r: PromptTooLong("needs 5000 > n_ctx 4096"))
    outcome = _judge(_items(tiny())[:1], backend, tmp_path)
    verdict = outcome.verdicts["q1"]
    assert (verdict.status, verdict.faithfulness, verdict.error) == (
        "truncated",
        None,
        "needs 5000 > n_ctx 4096",
    )
    # Not cached: the limit may be the server's (restarted with a longer context), and asking
    # again costs one refused request.
    again = ScriptedBackend()
    assert _judge(_items(tiny())[:1], again, tmp_path).verdicts["q1"].status == "ok"
    assert len(again.calls) == 1


def test_ctrl_c_keeps_what_was_judged(tiny: Tiny, tmp_path: Path) -> None:
    def script(request):  # type: ignore[no-untyped-def]
        if request.question.startswith("iPad"):
            raise KeyboardInterrupt
        return good_reply(request)

    items = _items(tiny())
    outcome = _judge(items, ScriptedBackend(script), tmp_path)
    assert outcome.interrupted
    assert set(outcome.verdicts) == {"q1", "q2"}
    resumed = ScriptedBackend()
    outcome = _judge(items, resumed, tmp_path)
    assert [r.question for r in resumed.calls] == [
        items[2].question.question,
        items[3].question.question,
    ]
    assert sum(v.cached for v in outcome.verdicts.values()) == 2


def test_concurrency_keeps_results_in_place(tiny: Tiny, tmp_path: Path) -> None:
    outcome = _judge(_items(tiny()), ScriptedBackend(), tmp_path, concurrency=4)
    assert sorted(outcome.verdicts) == ["q1", "q2", "q3", "q4"]
    for qid, verdict in outcome.verdicts.items():
        assert verdict.question_id == qid


def test_parse_errors_are_counted_not_scored(tiny: Tiny, tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda r: Reply(text="The answer looks fine!", finish_reason="stop"))
    outcome = _judge(_items(tiny()), backend, tmp_path)
    assert {v.status for v in outcome.verdicts.values()} == {"parse_error"}
    assert all(v.raw_reply == "The answer looks fine!" for v in outcome.verdicts.values())


def test_a_request_in_flight_at_ctrl_c_is_abandoned_on_a_daemon_thread(
    tiny: Tiny, tmp_path: Path
) -> None:
    """A request still waiting for a server must not hold up the exit (the interpreter joins
    non-daemon threads, and concurrent.futures joins its workers, at exit)."""
    import threading

    from judge.judging.grading import JudgeProgress

    release = threading.Event()

    def script(request):  # type: ignore[no-untyped-def]
        if request.question.startswith("バックアップ"):  # q2: a server that never answers
            release.wait(30)
        return good_reply(request)

    def ctrl_c_after_the_first_verdict(progress: JudgeProgress) -> None:
        if progress.done:
            raise KeyboardInterrupt

    try:
        outcome = _judge(
            _items(tiny()),
            ScriptedBackend(script),
            tmp_path,
            concurrency=2,
            on_progress=ctrl_c_after_the_first_verdict,
        )
        assert outcome.interrupted and set(outcome.verdicts) == {"q1"}
        stuck = [t for t in threading.enumerate() if t.name.startswith("judge-")]
        assert stuck and all(t.daemon for t in stuck)
    finally:
        release.set()


def test_a_cached_reply_is_derived_once_even_when_failed_ones_are_rejudged(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import judge.judging.tasks.answer as grading

    items = _items(tiny())
    _judge(items, ScriptedBackend(), tmp_path)  # every reply cached, all ok
    derived: list[tuple[str, bool]] = []
    real = grading.make_verdict

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        derived.append((args[0], args[5]))
        return real(*args, **kwargs)

    monkeypatch.setattr(grading, "make_verdict", counting)
    backend = ScriptedBackend()
    outcome = _judge(items, backend, tmp_path, rejudge_failed=True)
    assert not backend.calls  # nothing failed, so nothing was asked again
    assert all(v.cached and v.status == "ok" for v in outcome.verdicts.values())
    assert sorted(derived) == sorted((item.question.id, True) for item in items)


def test_a_reply_another_run_asked_is_derived_when_it_lands() -> None:
    """A reply that lands from another run sharing the cache (``judge.judging.sharing``) comes
    in as cached but was never read from the cache by this run: it is derived when it lands (it
    was a KeyError), and a cached reply read at the start keeps the result derived then."""
    from judge.judging.grading import JudgeProgress, _Replies

    derived: list[tuple[str, bool]] = []

    def derive(item: str, reply: Reply, cached: bool) -> str:
        derived.append((item, cached))
        return f"{item}:{reply.text}"

    seen: list[JudgeProgress] = []
    replies: _Replies[str, str] = _Replies(
        {"k1": "a", "k2": "b"}, derive, lambda _result: True, False, seen.append
    )
    first = Reply(text="read at the start", finish_reason="stop")
    landed = Reply(text="landed", finish_reason="stop")
    ask1 = Ask("k1", "q1", lambda: pytest.fail("never asked"))
    ask2 = Ask("k2", "q2", lambda: pytest.fail("never asked"))
    assert replies.reuse(ask1, first)
    replies.on_reply(ask1, first, True)  # derived once, by reuse
    replies.on_reply(ask2, landed, True)  # another run's reply: derived on landing
    assert derived == [("a", True), ("b", True)]
    assert replies.kept == {"k1": "a:read at the start", "k2": "b:landed"}
    assert seen[-1] == JudgeProgress(2, 2, 2, 0)
