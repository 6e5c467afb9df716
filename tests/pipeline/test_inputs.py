"""``judge.pipeline.inputs``: every command's inputs loaded once: the run from ``data.run``, a
file given instead, or the adapter's saved answers (reused, with its failures asked again); the
warnings every command shows before its output; retrieval scored on them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.inputs.golden import Leak
from judge.io.jsonl import write_jsonl
from judge.pipeline.inputs import load_inputs, measure_retrieval
from tests.conftest import RUN

Tiny = Callable[..., Config]
HALF_RAG = (
    "def answer(question):\n"
    "    if 'Windows' in question or 'iPad' in question:\n"
    "        raise TimeoutError('search took too long')\n"
    "    return {'retrieved': ['pricing/plans'], 'answer': 'x'}\n"
)


def test_the_run_file_of_the_configuration(tiny: Tiny) -> None:
    config = tiny()
    inputs = load_inputs(config)
    assert [q.id for q in inputs.golden.questions] == ["q1", "q2", "q3", "q4"]
    assert sorted(inputs.run.records) == ["q1", "q2", "q3", "q4"]
    assert inputs.run_source == str(config.data.run)
    assert (inputs.reused, inputs.asked_again, inputs.adapter_log) == (False, 0, None)
    assert inputs.leaks == [] and inputs.warnings() == []


def test_a_run_file_given_replaces_the_configurations(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    other = copy.deepcopy(RUN)
    other[1]["answer"] = "別の答えです。"
    path = tmp_path / "other.jsonl"
    write_jsonl(path, other)
    inputs = load_inputs(config, path)
    assert inputs.run_source == str(path)
    assert inputs.run.records["q1"].answer == "別の答えです。"


def test_no_run_and_no_adapter_is_one_line(tiny: Tiny) -> None:
    config = tiny().with_overrides(data={"run": None})
    with pytest.raises(ConfigError) as caught:
        load_inputs(config)
    assert str(caught.value) == "no run: set data.run (a file) or data.adapter (module:function)"


def test_the_adapters_answers_are_saved_then_reused_asking_its_failures_again(
    tiny_adapter: Callable[..., Config],
) -> None:
    config = tiny_adapter("half_rag_inputs", HALF_RAG)
    first = load_inputs(config)
    assert not first.reused and first.asked_again == 0
    assert sorted(first.run.meta.failed) == ["q3", "q4"]
    assert Path(first.run_source).parent == config.reports.dir / "runs"
    assert first.warnings() == ["the adapter failed for 2 question(s): q3, q4"]
    again = load_inputs(config)
    assert (again.reused, again.asked_again) == (True, 2)
    assert again.warnings()[0] == (
        f"answers reused from {again.run_source} (asked again only the 2 question(s) it had "
        "failed; --fresh-answers asks it)"
    )
    fresh = load_inputs(config, fresh_answers=True)
    assert not fresh.reused


def test_the_warnings_name_leaks_and_reuse_and_leave_labels_out_when_asked(tiny: Tiny) -> None:
    inputs = load_inputs(tiny())
    leaky = inputs._replace(leaks=[Leak("faq/all", ("q1", "q2"))], reused=True, asked_again=0)
    assert leaky.warnings() == [
        "document 'faq/all' quotes 2 golden questions verbatim (q1, q2); the test set may be "
        "leaking into the corpus",
        f"answers reused from {inputs.run_source} (the adapter was not asked again; "
        "--fresh-answers asks it)",
    ]
    assert leaky.warnings(with_labels=False) == leaky.warnings()  # no labels: nothing to leave


def test_retrieval_is_scored_per_question_and_per_type(tiny: Tiny) -> None:
    config = tiny()
    inputs = load_inputs(config)
    measured = measure_retrieval(config, inputs.golden, inputs.run, "the source")
    assert (measured.golden, measured.run, measured.run_source) == (
        inputs.golden,
        inputs.run,
        "the source",
    )
    assert measured.retrieval.rows[-1]["type"] == "all"
    assert measured.retrieval.weakest == "negative"
    assert measured.retrieval.rows[0]["recall@5"] == 1.0  # q1 (factual): its chunk at rank 1
