"""The adapter: a Python function answering each question, called concurrently, failures kept."""

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import AdapterError, InputError
from judge.inputs.adapter import produce_run
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run, save_run

Tiny = Callable[..., Config]

ADAPTER = """
import asyncio

def answer(question):
    if "Windows" in question:
        raise RuntimeError("search index offline")
    if "iPad" in question:
        return {"retrieved": [{"chunk_id": "widgets/sizes", "score": 0.9}], "answer": "非対応です。"}
    return {"retrieved": ["pricing/plans", "backup/restore"], "answer": "回答"}

async def answer_async(question):
    await asyncio.sleep(0)
    return {"retrieved": ["pricing/plans"], "answer": "非同期の回答"}

def bad_shape(question):
    return {"chunks": [], "answer": "x"}
"""


@pytest.fixture
def adapter_module(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "my_rag.py").write_text(ADAPTER, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    yield "my_rag"
    sys.path.remove(str(tmp_path))
    sys.modules.pop("my_rag", None)


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


def test_adapter_that_cannot_be_loaded(tiny: Tiny, adapter_module: str) -> None:
    golden = load_golden(tiny().data)
    with pytest.raises(AdapterError, match="expected 'module:function'"):
        produce_run("my_rag", golden, 1)
    with pytest.raises(AdapterError, match="cannot import 'no_such_module'"):
        produce_run("no_such_module:answer", golden, 1)
    with pytest.raises(AdapterError, match="'my_rag' has no callable 'missing'"):
        produce_run(f"{adapter_module}:missing", golden, 1)


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
    from judge.pipeline import load_inputs

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
