"""The adapter: a Python function answering each question, called concurrently, failures kept."""

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.inputs.adapter import produce_run
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run, save_run
from tests.inputs.conftest import ADAPTER

Tiny = Callable[..., Config]


def test_adapter_run_reports_the_failing_question_and_goes_on(
    tiny: Tiny, adapter_module: str
) -> None:
    golden = load_golden(tiny().data)
    events = []
    run = produce_run(f"{adapter_module}:answer", golden, concurrency=3, on_progress=events.append)
    assert list(run.records) == ["q1", "q2", "q3"]
    assert run.meta.failed == {"q4": "RuntimeError: search index offline"}
    assert run.records["q3"].retrieved[0].score == 0.9
    assert len(events) == 4 and events[-1].done == 4 and events[-1].total == 4
    assert [e.question_id for e in events if e.error] == ["q4"]


def test_async_adapter(tiny: Tiny, adapter_module: str) -> None:
    run = produce_run(f"{adapter_module}:answer_async", load_golden(tiny().data), concurrency=2)
    assert run.records["q1"].answer == "非同期の回答"


def test_adapter_with_wrong_output_fails_each_question_with_a_reason(
    tiny: Tiny, adapter_module: str
) -> None:
    run = produce_run(f"{adapter_module}:bad_shape", load_golden(tiny().data), concurrency=1)
    assert run.records == {}
    assert run.meta.failed["q1"].startswith(
        "ValueError: returned field 'retrieved' missing; unknown field 'chunks'"
    )


def test_saved_adapter_run_records_failures(
    tiny: Tiny, adapter_module: str, tmp_path: Path
) -> None:
    golden = load_golden(tiny().data)
    run = produce_run(f"{adapter_module}:answer", golden, concurrency=1)
    save_run(run, tmp_path / "produced.jsonl")
    header = json.loads((tmp_path / "produced.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["run_meta"]["failed"] == {"q4": "RuntimeError: search index offline"}
    assert load_run(tmp_path / "produced.jsonl", golden) == run


def test_adapter_answers_are_saved_before_validation(
    tiny: Tiny, adapter_module: str, tmp_path: Path
) -> None:
    from judge.pipeline.inputs import load_inputs

    (tmp_path / "my_rag.py").write_text(
        ADAPTER
        + "\ndef bad_chunk(question):\n    return {'retrieved': ['no/such'], 'answer': 'x'}\n",
        encoding="utf-8",
    )
    sys.modules.pop("my_rag", None)
    config = tiny().with_overrides(data={"run": None, "adapter": "my_rag:bad_chunk"})
    with pytest.raises(InputError) as caught:
        load_inputs(config)
    (saved,) = (config.reports.dir / "runs").glob("adapter-*.jsonl")
    assert str(saved) in caught.value.problems[0]
    assert "chunk 'no/such' (rank 1) is not in the corpus" in caught.value.problems[0]
    good = tiny().with_overrides(data={"run": None, "adapter": "my_rag:answer"})
    inputs = load_inputs(good)
    assert inputs.run_source.startswith(str(config.reports.dir / "runs" / "adapter-"))
    assert inputs.run.meta.failed == {"q4": "RuntimeError: search index offline"}


# --- saved answers: reused when valid, the failed questions asked again ------------------------

SWITCHABLE = """
import pathlib

HERE = pathlib.Path(__file__).parent

def answer(question):
    with (HERE / "calls.txt").open("a", encoding="utf-8") as handle:
        handle.write(question + "\\n")
    mode = (HERE / "mode.txt").read_text(encoding="utf-8").strip()
    if mode == "down":
        raise ConnectionError("the RAG service is down")
    if mode == "bad chunk":
        return {"retrieved": ["no/such"], "answer": "x"}
    return {"retrieved": ["pricing/plans"], "answer": "回答"}
"""


@pytest.fixture
def switchable(tiny: Tiny, tmp_path: Path) -> Iterator[tuple[Config, Callable[[str], int]]]:
    """A config whose adapter behaves as ``mode.txt`` says; ``set_mode`` returns calls so far."""
    (tmp_path / "switch_rag.py").write_text(SWITCHABLE, encoding="utf-8")
    config = tiny().with_overrides(data={"run": None, "adapter": "switch_rag:answer"})

    def set_mode(mode: str) -> int:
        (tmp_path / "mode.txt").write_text(mode, encoding="utf-8")
        calls = tmp_path / "calls.txt"
        return len(calls.read_text(encoding="utf-8").splitlines()) if calls.exists() else 0

    sys.path.insert(0, str(tmp_path))
    yield config, set_mode
    sys.path.remove(str(tmp_path))
    sys.modules.pop("switch_rag", None)


def test_answers_that_fail_validation_are_never_reused(
    switchable: tuple[Config, Callable[[str], int]],
) -> None:
    from judge.pipeline.inputs import load_inputs

    config, set_mode = switchable
    set_mode("bad chunk")
    with pytest.raises(InputError) as caught:
        load_inputs(config)
    (kept,) = (config.reports.dir / "runs").glob("*.invalid.jsonl")
    assert str(kept) in caught.value.problems[0]
    assert caught.value.problems[-1].startswith(f"the answers are kept in {kept} but never reused")
    assert set_mode("ok") == 4
    inputs = load_inputs(config)  # the adapter was fixed: asked again, not the broken answers
    assert set_mode("ok") == 8
    assert not inputs.reused and inputs.run.records["q1"].answer == "回答"
    again = load_inputs(config)  # now valid answers exist: reused
    assert set_mode("ok") == 8
    assert again.reused and again.run_source == inputs.run_source


def test_questions_the_adapter_failed_are_asked_again_the_others_reused(
    switchable: tuple[Config, Callable[[str], int]],
) -> None:
    from judge.pipeline.inputs import load_inputs

    config, set_mode = switchable
    set_mode("down")
    outage = load_inputs(config)
    assert outage.run.records == {} and len(outage.run.meta.failed) == 4
    assert "the adapter failed for 4 question(s): q1, q2, q3, q4" in outage.warnings()
    assert set_mode("ok") == 4
    recovered = load_inputs(config)  # the service is back: only the failed ones are asked
    assert set_mode("ok") == 8
    assert recovered.reused and recovered.asked_again == 4
    assert recovered.run.meta.failed == {} and len(recovered.run.records) == 4
    assert list(recovered.run.records) == ["q1", "q2", "q3", "q4"]  # golden order
    assert any(
        "asked again only the 4 question(s) it had failed" in w for w in recovered.warnings()
    )
    assert load_inputs(config).asked_again == 0
    assert set_mode("ok") == 8


# --- async adapters: one loop, bounded, and an adapter's own exit is one failed question ------

BOUNDED = """
import asyncio

in_flight = 0
most = 0

async def answer(question):
    global in_flight, most
    in_flight += 1
    most = max(most, in_flight)
    await asyncio.sleep(0.05)
    in_flight -= 1
    if "Windows" in question:
        raise KeyboardInterrupt
    if "iPad" in question:
        raise SystemExit(3)
    return {"retrieved": ["pricing/plans"], "answer": "回答"}
"""


def test_async_adapters_are_bounded_and_survive_an_adapter_that_exits(
    tiny: Tiny, tmp_path: Path
) -> None:
    (tmp_path / "bounded_rag.py").write_text(BOUNDED, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        golden = load_golden(tiny().data)
        run = produce_run("bounded_rag:answer", golden, concurrency=2)
        module = sys.modules["bounded_rag"]
        assert module.most == 2  # 4 questions, 2 at a time
        assert run.meta.failed == {
            "q3": "RuntimeError: the adapter raised SystemExit(3)",
            "q4": "RuntimeError: the adapter raised KeyboardInterrupt()",
        }
        assert list(run.records) == ["q1", "q2"]
        # The loop survived: the next run in this process works as well.
        assert list(produce_run("bounded_rag:answer", golden, concurrency=4).records) == [
            "q1",
            "q2",
        ]
        assert module.most == 4
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("bounded_rag", None)


# --- deadlines and Ctrl-C ------------------------------------------------------------------------

HANGING = """
import threading

RELEASE = threading.Event()
STARTED = []

def answer(question):
    STARTED.append(question)
    if "年額" in question:
        RELEASE.wait(30)
    return {"retrieved": ["pricing/plans"], "answer": "回答"}

def exits(question):
    import sys
    sys.exit(0)
"""


@pytest.fixture
def hanging_module(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "hanging_rag.py").write_text(HANGING, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    yield "hanging_rag"
    sys.path.remove(str(tmp_path))
    module = sys.modules.pop("hanging_rag", None)
    if module is not None:
        module.RELEASE.set()


def test_a_question_past_its_deadline_fails_and_another_thread_takes_its_place(
    tiny: Tiny, hanging_module: str
) -> None:
    import time

    golden = load_golden(tiny().data)
    events = []
    start = time.monotonic()
    run = produce_run(
        f"{hanging_module}:answer", golden, 1, on_progress=events.append, timeout_s=0.3
    )
    elapsed = time.monotonic() - start
    # q1 hangs for good in the only worker thread; q2..q4 still get answers, at once.
    assert run.meta.failed == {"q1": "timed out after 0.3 s (data.adapter_timeout_s)"}
    assert list(run.records) == ["q2", "q3", "q4"]
    assert 0.3 <= elapsed < 15  # at once, not the hanging question's time (wide: load)
    assert [(e.question_id, e.done) for e in events] == [("q1", 1), ("q2", 2), ("q3", 3), ("q4", 4)]


def test_sys_exit_in_a_plain_adapter_is_one_failed_question(
    tiny: Tiny, hanging_module: str
) -> None:
    run = produce_run(f"{hanging_module}:exits", load_golden(tiny().data), 2)
    assert run.records == {}
    assert set(run.meta.failed.values()) == {"RuntimeError: the adapter raised SystemExit(0)"}


def test_ctrl_c_hands_back_the_answers_so_far(tiny: Tiny, hanging_module: str) -> None:
    from judge.inputs.adapter import AnswersInterrupted

    def ctrl_c_after_the_first(event: object) -> None:
        raise KeyboardInterrupt

    golden = load_golden(tiny().data)
    questions = golden._replace(questions=golden.questions[1:] + golden.questions[:1])
    with pytest.raises(AnswersInterrupted) as stopped:
        produce_run(f"{hanging_module}:answer", questions, 1, ctrl_c_after_the_first)
    assert list(stopped.value.run.records) == ["q2"]
    assert stopped.value.run.meta.failed == dict.fromkeys(
        ["q3", "q4", "q1"], "not answered: the run was interrupted"
    )
    assert isinstance(stopped.value, KeyboardInterrupt)


# --- an answer the run file could not hold ---------------------------------------------------

HUGE_ANSWER = """
def answer(question):
    if "バックアップ" in question:
        return {"retrieved": ["backup/restore"], "answer": "年" * 400_000}  # 1.2 MB in UTF-8
    return {"retrieved": ["pricing/plans"], "answer": "回答"}
"""


def test_an_answer_over_the_record_limit_is_a_failed_question_and_the_next_run_works(
    tiny_adapter: Callable[..., Config],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import judge.io.jsonl
    from tests.conftest import latest_report, run_lexical

    # A 1 MB limit instead of 4 MB: the same code path with a quarter of the text.
    monkeypatch.setattr(judge.io.jsonl, "MAX_RECORD_MB", 1)
    config = tiny_adapter("huge_rag", HUGE_ANSWER)
    assert run_lexical(config) == 0
    failed = latest_report(config)["adapter_failed"]
    assert list(failed) == ["q2"]  # q2 asks about backups
    assert failed["q2"].startswith(
        "ValueError: returned an answer that cannot be saved: the line is 1.2 MB, over the 1 MB "
        "limit for one record"
    )
    assert "shorten the answer" in failed["q2"]
    # The saved answers hold the three others and can be read back: nothing over the limit.
    (saved,) = (config.reports.dir / "runs").glob("adapter-*.jsonl")
    run = load_run(saved, load_golden(config.data))
    assert sorted(run.records) == ["q1", "q3", "q4"] and list(run.meta.failed) == ["q2"]
    capsys.readouterr()
    # The next run reuses them, asks the adapter q2 again (failed again), and works.
    assert run_lexical(config) == 0
    assert "error" not in capsys.readouterr().err
    assert list(latest_report(config)["adapter_failed"]) == ["q2"]
