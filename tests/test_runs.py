import copy
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.errors import AdapterError, InputError
from judge.inputs.adapter import produce_run
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run, save_run
from judge.judging.items import context_for
from tests.conftest import RUN

Tiny = Callable[..., Config]


def _run(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    out = copy.deepcopy(RUN)
    for record in out[1:]:
        record.update(changes.get(record["id"], {}))
    return out


def _problems(config: Config) -> list[str]:
    golden = load_golden(config.data)
    assert config.data.run is not None
    with pytest.raises(InputError) as caught:
        load_run(config.data.run, golden)
    return caught.value.problems


def test_run_loads_with_header_and_context(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    run = load_run(config.data.run, golden)
    assert run.meta.system == "test-rag"
    assert run.meta.chunking == {"method": "heading"}
    context = context_for(run.records["q2"], golden.corpus, 2)
    assert [(c.rank, c.chunk_id) for c in context] == [(1, "backup/auto"), (2, "widgets/sizes")]
    assert context[0].text.startswith("自動バックアップは")


def test_text_in_the_run_wins_over_the_corpus(tiny: Tiny) -> None:
    run = _run(q1={"retrieved": [{"chunk_id": "pricing/plans", "text": "as the generator saw it"}]})
    config = tiny(run=run)
    golden = load_golden(config.data)
    assert config.data.run is not None
    record = load_run(config.data.run, golden).records["q1"]
    assert context_for(record, golden.corpus, 5)[0].text == "as the generator saw it"


def test_missing_questions_are_listed(tiny: Tiny) -> None:
    run = [r for r in RUN if r.get("id") not in ("q2", "q4")]
    assert _problems(tiny(run=run)) == ["the run has no record for 2 golden question(s): q2, q4"]


def test_unknown_chunk_duplicate_chunk_empty_answer_and_unknown_id(tiny: Tiny) -> None:
    run = _run(
        q1={"retrieved": [{"chunk_id": "pricing/plans"}, {"chunk_id": "pricing/plans"}]},
        q2={"retrieved": [{"chunk_id": "nowhere/chunk"}]},
        q3={"answer": " \n"},
    )
    run.append({"id": "q99", "retrieved": [], "answer": "x"})
    run.append(dict(run[1]))
    problems = _problems(tiny(run=run))
    assert any(p.endswith("run.jsonl:4: answer: must not be empty") for p in problems)
    assert any(p.endswith("run.jsonl:7: duplicate id 'q1' (first on line 2)") for p in problems)
    assert any(
        p.endswith(
            "run.jsonl:2: retrieved: chunk 'pricing/plans' appears twice in the ranking "
            "for question 'q1' (again at rank 2)"
        )
        for p in problems
    )
    assert any(
        p.endswith("run.jsonl:3: retrieved: chunk 'nowhere/chunk' (rank 1) is not in the corpus")
        for p in problems
    )
    assert any(p.endswith("run.jsonl:6: id: 'q99' is not a golden question") for p in problems)
    # q3's record is malformed, not missing: it is reported once, for what is wrong with it.
    assert len(problems) == 5


def test_bad_header_and_nan_score(tiny: Tiny, tmp_path: Path) -> None:
    run = _run()
    run[0] = {"run_meta": {"sytem": "typo"}}
    (problem,) = _problems(tiny(run=run))
    assert problem.endswith("run.jsonl:1: unknown field 'run_meta.sytem'")
    config = tiny()
    assert config.data.run is not None
    text = config.data.run.read_text(encoding="utf-8").replace("0.9", "NaN")
    config.data.run.write_text(text, encoding="utf-8")
    (problem,) = _problems(config)
    assert problem.endswith("run.jsonl:2: retrieved.0.score: Input should be a finite number")


def test_save_and_load_round_trip(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    run = load_run(config.data.run, golden)
    save_run(run, tmp_path / "copy.jsonl")
    assert load_run(tmp_path / "copy.jsonl", golden) == run


# --- adapters -----------------------------------------------------------------------------

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
