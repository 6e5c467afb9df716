"""``judge check`` as a dry run: the judge ``judge run`` would use is preflighted (reachable,
model present, digest) with nothing judged, and the cache says how much of the run it holds."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.errors import BackendUnavailable, InputError
from judge.judging.backends.registry import open_backend
from judge.pipeline.check import check
from judge.pipeline.evaluate import evaluate
from tests import loopback_ollama
from tests.conftest import RUN

Tiny = Callable[..., Config]
DIGEST = "sha256:" + "5" * 64


@pytest.fixture
def ollama() -> Iterator[loopback_ollama.Loopback]:
    """A reachable Ollama (on loopback) that has the model ``loopback_ollama.MODEL``."""
    server = loopback_ollama.start(0.0, 4, digest=DIGEST)
    yield server
    server.stop()


def _on(config: Config, server: loopback_ollama.Loopback, **ollama: Any) -> Config:
    host = f"http://127.0.0.1:{server.server_address[1]}"
    section = {"host": host, "model": loopback_ollama.MODEL, "timeout_s": 5} | ollama
    return config.with_overrides(judge={"backend": "ollama", "ollama": section})


def _unreachable(config: Config) -> Config:
    # Port 9 (discard): nothing listens on loopback, the connection is refused at once.
    return config.with_overrides(
        judge={"backend": "ollama", "ollama": {"host": "http://127.0.0.1:9"}}
    )


def test_an_unreachable_ollama_fails_check_as_it_fails_run(tiny: Tiny) -> None:
    config = _unreachable(tiny())
    with pytest.raises(BackendUnavailable) as raised:
        check(config, preflight_judge=True)
    assert raised.value.exit_code == 3
    message = str(raised.value)
    assert message.startswith("Ollama not reachable at http://127.0.0.1:9")
    assert "'ollama serve'" in message
    with pytest.raises(BackendUnavailable) as by_run:  # the line `judge run` stops on
        open_backend(config.judge)
    assert message == str(by_run.value)


def test_without_the_preflight_check_passes_offline(tiny: Tiny) -> None:
    checked = check(_unreachable(tiny()), preflight_judge=False)
    assert checked.judge is None
    assert len(checked.inputs.run.records) == 4


def test_a_reachable_judge_is_described_and_nothing_is_judged(
    tiny: Tiny, ollama: loopback_ollama.Loopback
) -> None:
    config = _on(tiny(), ollama)
    checked = check(config, preflight_judge=True)
    judge = checked.judge
    assert judge is not None
    assert judge.identity.kind == "ollama"
    assert judge.identity.model == loopback_ollama.MODEL
    assert judge.identity.digest == DIGEST
    assert judge.identity.server_version == "0.13.0"
    assert judge.reason == "backend = ollama"
    assert judge.judge.startswith(f"ollama · {loopback_ollama.MODEL}, sha256:555")
    assert (judge.cached, judge.total, judge.to_judge) == (0, 4, 4)
    assert ollama.chat_requests == 0  # no item was sent
    assert not config.judge.cache_path.exists()  # a dry run creates no cache


def test_a_model_that_is_not_pulled_fails_check(
    tiny: Tiny, ollama: loopback_ollama.Loopback
) -> None:
    config = _on(tiny(), ollama, model="gemma3:27b")
    with pytest.raises(BackendUnavailable) as raised:
        check(config, preflight_judge=True)
    assert "model 'gemma3:27b' is not pulled" in str(raised.value)


def test_the_cache_count_is_what_run_takes_from_the_cache(
    tiny: Tiny, ollama: loopback_ollama.Loopback
) -> None:
    config = _on(tiny(), ollama)
    # Judge the run once, then change one answer: three items are cached, one is not.
    first = evaluate(config, progress=False)
    assert sum(1 for q in first.report.questions if q.verdict) == 4
    changed = [dict(line) for line in RUN]
    changed[1]["answer"] = "changed: " + str(changed[1]["answer"])
    config = _on(tiny(run=changed), ollama)
    asked = ollama.chat_requests
    checked = check(config, preflight_judge=True)
    assert checked.judge is not None
    assert (checked.judge.cached, checked.judge.total, checked.judge.to_judge) == (3, 4, 1)
    assert ollama.chat_requests == asked  # the check judged nothing
    seen: list[int] = []
    evaluate(config, progress=False, on_progress=lambda p: seen.append(p.cached))
    assert seen[-1] == 3  # `judge run` takes as many from the cache
    assert ollama.chat_requests == asked + 1


def test_another_backend_is_preflighted_by_name(tiny: Tiny) -> None:
    checked = check(_unreachable(tiny()), preflight_judge=True, backend="lexical")
    assert checked.judge is not None
    assert checked.judge.identity.kind == "lexical"
    assert checked.judge.reason == "backend = lexical"


def test_the_answers_of_a_run_file(tiny: Tiny) -> None:
    config = tiny()
    answers = check(config).answers
    assert answers.adapter is None
    assert answers.source == str(config.data.run)
    assert (answers.asked, answers.reused, answers.total) == (0, False, 4)
    assert answers.describe() == "a run file: no adapter is asked"


ADAPTER = """
ANSWERS = {
    "年額プランはいくらですか？": (["pricing/plans"], "年額3,800円です。"),
    "バックアップから戻す手順を教えて": (["backup/restore"], "復元をタップします。"),
    "iPadでウィジェットは使えますか": (["pricing/trial"], "はい、使えます。"),
    "Windows版はありますか": (["pricing/plans"], "ヘルプには記載がありません。"),
}
CALLS = []


def answer(question):
    CALLS.append(question)
    retrieved, text = ANSWERS[question]
    return {"retrieved": retrieved, "answer": text}
"""


def test_the_answers_of_an_adapter_asked_then_reused(tiny_adapter: Callable[..., Config]) -> None:
    config = tiny_adapter("check_dry_rag", ADAPTER)
    first = check(config).answers
    assert Path(first.source).is_file()  # saved, where the next command finds them
    assert (first.adapter, first.asked, first.reused, first.total) == (
        "check_dry_rag:answer",
        4,
        False,
        4,
    )
    assert first.describe() == (
        "check_dry_rag:answer asked 4 question(s), its answers saved; judge run reuses them "
        "and asks the adapter nothing (--fresh-answers asks all 4)"
    )
    again = check(config).answers
    assert (again.source, again.asked, again.reused) == (first.source, 0, True)
    assert again.describe() == (
        "saved answers of check_dry_rag:answer reused (not asked); judge run reuses them and "
        "asks the adapter nothing (--fresh-answers asks all 4)"
    )
    assert len(sys.modules["check_dry_rag"].CALLS) == 4  # the second check asked nothing


def test_the_preflight_follows_valid_inputs_only(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad inputs are reported (exit 2) before any judge is opened: the two are not mixed."""
    opened: list[object] = []
    monkeypatch.setattr("judge.pipeline.session.open_backend", opened.append)
    config = tiny(run=[])
    with pytest.raises(InputError):
        check(config, preflight_judge=True)
    assert opened == []
