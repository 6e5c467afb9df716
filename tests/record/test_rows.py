"""The record's per-question parts (``judge.record.rows``): one row per golden question in
golden-set order, with its status, and the further judgements each in its row's field."""

from collections.abc import Callable
from typing import Any

from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.grading import Fingerprint
from judge.judging.types import CorrectnessVerdict, Verdict
from judge.pipeline.inputs import measure_retrieval
from judge.record.rows import _task_fields, item_records, question_rows
from judge.record.stages import Judged, TaskResults
from tests.record.test_stages import JUDGE

Tiny = Callable[..., Config]


def _verdict(qid: str) -> Verdict:
    return Verdict(question_id=qid, item_key=qid, status="ok", faithfulness=2, relevance=2)


def test_a_typed_field_is_set_even_empty_and_the_rest_go_under_judgements() -> None:
    correct = CorrectnessVerdict(
        question_id="q1", item_key="c-q1", status="ok", correctness=1, reason="partly"
    )
    other: dict[str, Any] = {"q1": (correct,)}
    tasks = {
        "correctness": TaskResults("correctness", {"q1": correct}, Fingerprint("fc", {})),
        "toy": TaskResults("judgements", other, Fingerprint("ft", {})),
    }
    assert _task_fields(tasks, "q1") == {"correctness": correct, "judgements": {"toy": (correct,)}}
    # No result: the typed field holds None, and no "judgements" key at all.
    assert _task_fields(tasks, "q2") == {"correctness": None}


def test_every_golden_question_has_a_row_in_order_with_its_status(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    measured = measure_retrieval(config, golden, load_run(config.data.run, golden), "run")
    ids = [q.id for q in golden.questions]
    judged = Judged({ids[0]: _verdict(ids[0])}, JUDGE, Fingerprint("fp", {}), 1.0)
    items = {item.question_id: item for item in item_records(config, measured, [], judged)}
    assert list(items) == [ids[0]]  # only the judged questions have an item
    rows = question_rows(config, measured, items, judged, {ids[1]: "timed out"})
    assert [row.question_id for row in rows] == ids
    assert [row.status for row in rows[:2]] == ["ok", "adapter_failed"]
    assert {row.status for row in rows[2:]} == {"not_judged"}
    assert rows[1].failure == "timed out" and rows[0].failure is None
    assert rows[0].item == items[ids[0]] and rows[1].item is None
