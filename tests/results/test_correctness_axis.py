"""The correctness axis downstream of its verdicts: values, the judge table, the gate, the
diagnosis, verdicts.csv and report.md (issue 23 part 5). Correctness verdicts are built by
hand and handed to ``build_report`` in ``Judged.correctness``, as the judging stage does."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from judge.axes import (
    JUDGE_TABLE_METRICS,
    JUDGE_VALUES,
    OPTIONAL_AXES,
    judge_table_metrics,
    judge_values_with,
    metric_scale,
)
from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.grading import Fingerprint
from judge.judging.types import CorrectnessVerdict, Verdict
from judge.pipeline.build import build_report
from judge.pipeline.inputs import measure_retrieval
from judge.record.model import Record
from judge.record.stages import Earlier, Judged, TaskResults
from judge.record.store import SavedValues
from judge.report.data import verdicts_csv
from judge.report.markdown import render_report_md
from judge.results.compare import GateRule, QuestionValues, collapsible, compare_values, decide
from judge.results.diagnosis import diagnose
from judge.results.gate import GATE_JUDGE_METRICS, gate_judge_metrics
from judge.results.item_record import ItemRecord
from judge.results.manifest import JudgeInfo
from judge.results.values import question_values
from tests.conftest import QUESTIONS

Tiny = Callable[..., Config]

REFERENCES = {
    "q1": "年額プランは3,800円です。",
    "q2": "設定を開き、バックアップを選び、復元をタップします。",
    "q3": "いいえ、iPadには対応していません。",
}


def _questions() -> list[dict[str, Any]]:
    questions = copy.deepcopy(QUESTIONS)
    for q in questions:
        if q["id"] in REFERENCES:
            q["reference_answer"] = REFERENCES[q["id"]]
    return questions


def _verdict(qid: str, f: int = 2, r: int = 2) -> Verdict:
    return Verdict(question_id=qid, item_key=qid, status="ok", faithfulness=f, relevance=r)


def _correct(qid: str, score: int | None, status: str = "ok") -> CorrectnessVerdict:
    return CorrectnessVerdict(
        question_id=qid,
        item_key=f"c-{qid}",
        status=status,  # type: ignore[arg-type]
        correctness=score,
        reason=f"reason {qid}",
        error=None if status == "ok" else "no JSON in the reply",
    )


JUDGE = JudgeInfo(
    backend="fake",
    model="fake-1",
    digest=None,
    server_version=None,
    endpoint=None,
    chosen_because="a test",
    prompt="judge.v1.md",
    prompt_sha256="0" * 64,
    evidence_verifier_version=1,
)


def record(
    config: Config,
    correctness: dict[str, CorrectnessVerdict],
    verdicts: dict[str, Verdict] | None = None,
) -> Record:
    golden = load_golden(config.data)
    assert config.data.run is not None
    measured = measure_retrieval(config, golden, load_run(config.data.run, golden), "run")
    verdicts = verdicts or {q.id: _verdict(q.id) for q in golden.questions}
    tasks = {"correctness": TaskResults("correctness", correctness, Fingerprint("fc", {}))}
    judged = Judged(verdicts, JUDGE, Fingerprint("fp", {}), 1.0, tasks=tasks if correctness else {})
    earlier = Earlier([], None, lambda _: None, lambda _: None)
    started = datetime(2026, 12, 1, tzinfo=UTC)
    return build_report(config, measured, judged, [], started, "20261201T000000Z-aa", earlier)


# --- axes ---------------------------------------------------------------------------------


def test_correctness_is_an_optional_score_axis_after_relevance() -> None:
    assert OPTIONAL_AXES == ("correctness",)
    assert metric_scale("correctness") == "score"
    # Off: the lists are what they were; on: correctness right after relevance.
    assert judge_table_metrics() == JUDGE_TABLE_METRICS
    assert judge_values_with() == JUDGE_VALUES
    assert judge_table_metrics(["correctness"]) == (
        "faithfulness",
        "relevance",
        "correctness",
        "full_marks",
        "quote_verified",
    )
    assert judge_values_with({"correctness"})[:3] == ("faithfulness", "relevance", "correctness")
    assert gate_judge_metrics() == GATE_JUDGE_METRICS
    assert gate_judge_metrics(["faithfulness", "correctness"]) == (
        *GATE_JUDGE_METRICS,
        "correctness",
    )
    assert "correctness" in collapsible(["faithfulness", "correctness"])
    assert GateRule().margin("correctness") == GateRule().margin_score


# --- values ---------------------------------------------------------------------------------


def _item(qid: str, qtype: str = "factual") -> ItemRecord:
    return ItemRecord(
        question_id=qid,
        type=qtype,
        split="",
        question="年額プランはいくらですか？" if qid != "e1" else "How much is the annual plan?",
        answer="年額3,800円です。",
        reference_answer="3,800円",
        context=[],
        relevant_chunks=["pricing/plans"],
        retrieval={},
        labels=[],
    )


def test_values_gain_correctness_for_ok_verdicts_only() -> None:
    items = [_item("q1"), _item("q2"), _item("q3"), _item("e1")]
    verdicts = {i.question_id: _verdict(i.question_id) for i in items}
    correctness = {
        "q1": _correct("q1", 2),
        "q2": _correct("q2", 0),
        "q3": _correct("q3", None, "parse_error"),  # no value, never a silent 0
        "e1": _correct("e1", 1),
    }
    values = question_values(items, verdicts, correctness)
    judge = values.values["judge"]
    assert judge["correctness"] == {"q1": 2.0, "q2": 0.0, "e1": 1.0}
    assert list(judge)[:3] == ["faithfulness", "relevance", "correctness"]
    # full_marks keeps its meaning: faithfulness and relevance both 2, whatever correctness.
    assert judge["full_marks"]["q2"] == 1.0
    # Off (no verdicts): no correctness metric at all, exactly the old values.
    assert "correctness" not in question_values(items, verdicts).values["judge"]
    assert question_values(items, verdicts) == question_values(items, verdicts, {})


def test_saved_values_without_correctness_still_read() -> None:
    old = SavedValues.model_validate_json(
        '{"format_version": 2, "types": {"q1": "factual"}, '
        '"values": {"judge": {"faithfulness": {"q1": 2.0}}, "retrieval": {}}}'
    )
    assert "correctness" not in old.question_values().values["judge"]
    new = SavedValues(
        types={"q1": "factual"},
        values={"judge": {"correctness": {"q1": 1.0}}, "retrieval": {}},
    )
    read = SavedValues.model_validate_json(new.model_dump_json()).question_values()
    assert read.values["judge"]["correctness"] == {"q1": 1.0}


# --- the judge table, report.md, verdicts.csv ---------------------------------------------------


def test_the_judge_table_shows_correctness_per_type_only_when_on(tiny: Tiny) -> None:
    config = tiny(questions=_questions())
    off = record(config, {})
    assert "correctness" not in off.judge.metrics
    assert not any(c.startswith("correctness") for c in off.judge.count_columns)
    correctness = {
        "q1": _correct("q1", 2),
        "q2": _correct("q2", 1),
        "q3": _correct("q3", None, "backend_error"),
        "q4": _correct("q4", 2),  # out of scope: a correct refusal is correct
    }
    on = record(config, correctness)
    table = on.judge
    assert table.metrics[:3] == ["faithfulness", "relevance", "correctness"]
    assert table.primary == "faithfulness"  # the weakest type stays decided by faithfulness
    frame = table.frame
    assert frame.loc["factual", "correctness"] == 2.0
    assert frame.loc["procedural", "correctness"] == 1.0
    assert np.isnan(frame.loc["negative", "correctness"])  # its only verdict failed
    # all: mean over the three ok verdicts, (2 + 1 + 2) / 3
    assert frame.loc["all", "correctness"] == pytest.approx(5 / 3)
    assert list(frame["correctness_asked"]) == [1, 1, 1, 1, 4]
    assert list(frame["correctness_not_ok"]) == [0, 0, 1, 0, 1]
    # The split tables show the column too.
    assert all("correctness" in t.metrics for t in on.splits.values())
    # The record's values pair it; the old run's columns are unchanged.
    assert on.values().values["judge"]["correctness"] == {"q1": 2.0, "q2": 1.0, "q4": 2.0}
    # The builder's values (remembered for values.json) are the record's, derived afresh.
    for built in (on, off):
        assert built.values() == question_values(
            built.items,
            {v.question_id: v for v in built.verdicts},
            {r.question_id: r.correctness for r in built.questions if r.correctness},
        )
    assert off.judge.metrics == [m for m in table.metrics if m != "correctness"]


def test_report_md_shows_correctness_per_type_and_says_what_it_measures(tiny: Tiny) -> None:
    config = tiny(questions=_questions())
    off = render_report_md(record(config, {}))
    assert "correctness" not in off
    assert "wrong per reference" not in off
    on = render_report_md(
        record(config, {"q1": _correct("q1", 0), "q2": _correct("q2", 2), "q4": _correct("q4", 2)})
    )
    header = next(line for line in on.splitlines() if line.startswith("| type") and "n" in line)
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells.index("relevance") + 1 == cells.index("correctness")
    factual = next(line for line in on.splitlines() if line.startswith("| factual"))
    assert [c.strip() for c in factual.strip("|").split("|")][cells.index("correctness")] == "0.000"
    assert "against the question's reference answer" in on
    assert "questions without a reference answer are not scored" in on
    # q1 is at full marks but wrong per the reference: diagnosed, and in "Bad answers first".
    assert "wrong per reference" in on
    assert "F2 R2 C0" in on


def test_verdicts_csv_has_correctness_columns_only_when_on(tiny: Tiny) -> None:
    config = tiny(questions=_questions())
    off = verdicts_csv(record(config, {})).lstrip("\ufeff").splitlines()[0].split(",")
    assert "correctness" not in off and "correctness_reason" not in off
    text = verdicts_csv(
        record(config, {"q1": _correct("q1", 1), "q3": _correct("q3", None, "parse_error")})
    )
    lines = text.lstrip("\ufeff").splitlines()
    header = lines[0].split(",")
    assert header.index("relevance") + 1 == header.index("correctness")
    assert header.index("correctness") + 1 == header.index("correctness_reason")
    rows = {line.split(",")[0]: line.split(",") for line in lines[1:]}
    at = header.index("correctness")
    assert rows["q1"][at : at + 2] == ["1", "reason q1"]
    assert rows["q2"][at : at + 2] == ["", ""]  # not asked
    assert rows["q3"][at : at + 2] == ["", "no JSON in the reply"]


# --- the diagnosis ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "context", "score", "want"),
    [
        ("年額プランはいくらですか？", ["pricing/plans"], 0, "wrong per reference"),
        ("How much is the annual plan?", ["pricing/plans"], 1, "wrong per reference"),
        ("年額プランはいくらですか？", ["pricing/plans"], 2, "ok"),
        # The chunks did not hold the reference's facts: retrieval's, as below full marks.
        ("How much is the annual plan?", ["pricing/trial"], 0, "retrieval miss"),
    ],
)
def test_a_faithful_relevant_answer_wrong_per_the_reference(
    question: str, context: list[str], score: int, want: str
) -> None:
    from judge.judging.types import ContextChunk

    item = _item("q1").model_copy(
        update={
            "question": question,
            "context": [ContextChunk(rank=1, chunk_id=c, text="…") for c in context],
        }
    )
    verdict = _verdict("q1")
    got = diagnose(item, verdict, out_of_scope=False, correctness=_correct("q1", score))
    assert got == want
    # Without a correctness verdict (or a failed one) nothing changes.
    before = diagnose(item, verdict, out_of_scope=False)
    assert before in ("ok", "retrieval miss")
    failed = _correct("q1", None, "parse_error")
    assert diagnose(item, verdict, out_of_scope=False, correctness=failed) == before


def test_the_diagnosis_leaves_an_answer_below_full_marks_and_out_of_scope_alone() -> None:
    item = _item("q1")
    low = _verdict("q1", f=1)
    wrong = _correct("q1", 0)
    assert diagnose(item, low, out_of_scope=False, correctness=wrong) == diagnose(
        item, low, out_of_scope=False
    )
    refusal = item.model_copy(update={"answer": "記載がありません。"})
    assert diagnose(refusal, _verdict("q1"), out_of_scope=True, correctness=wrong) == "ok"


# --- the gate -----------------------------------------------------------------------------------


def _values(correctness: dict[str, float], types: dict[str, str]) -> QuestionValues:
    faithful = dict.fromkeys(types, 2.0)
    return QuestionValues(
        types,
        {
            "judge": {"faithfulness": faithful, "relevance": faithful, "correctness": correctness},
            "retrieval": {},
        },
    )


def test_the_gate_sees_a_correctness_fall_question_by_question() -> None:
    types = {f"q{i:02d}": "factual" for i in range(12)}
    old = _values(dict.fromkeys(types, 2.0), types)
    # Every answer loses a point of correctness; faithfulness and relevance stay.
    new = _values(dict.fromkeys(types, 1.0), types)
    rule = GateRule()
    changes = compare_values("judge", old, new, rule, ["factual"])
    fell = next(c for c in changes if c.metric == "correctness" and c.type == "factual")
    assert fell.n == 12 and fell.delta == pytest.approx(-1.0)
    assert fell.margin == rule.margin_score
    assert fell.p_fall == pytest.approx(2**-12)  # twelve falls, none rising
    from judge.results.compare import SectionComparison

    decided = decide([SectionComparison("judge", "last", changes, "")], rule)
    regressed = {(c.type, c.metric): c.direction for c in decided[0].regressions}
    # Holm over the family of three metrics: 2^-12 <= 0.001 / 3; and over all questions the
    # mean fell by a point: the pooled collapse sees it too.
    assert regressed == {
        ("factual", "correctness"): "regressed",
        ("all", "correctness"): "collapsed",
    }


def test_correctness_at_its_floor_collapses_a_small_type() -> None:
    types = {"q1": "negative", "q2": "negative"}
    old = _values({"q1": 2.0, "q2": 2.0}, types)
    new = _values({"q1": 0.0, "q2": 0.0}, types)
    changes = compare_values("judge", old, new, GateRule(), ["negative"])
    fell = next(c for c in changes if c.metric == "correctness" and c.type == "negative")
    assert fell.direction == "collapsed"


def test_a_run_without_correctness_compares_as_before() -> None:
    types = {"q1": "factual", "q2": "factual"}
    old = _values({"q1": 2.0, "q2": 2.0}, types)
    new = QuestionValues(types, {"judge": {"faithfulness": dict.fromkeys(types, 2.0)}})
    changes = compare_values("judge", old, new, GateRule(), ["factual"])
    assert not [c for c in changes if c.metric == "correctness"]
