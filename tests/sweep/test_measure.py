"""What a sweep measures per setting (judge.sweep.measure) on the tiny set: retrieval per scored
question with a failed question scored 0 and listed, the judge's means per type and overall,
and the pooled paired change of a setting against the default."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.inputs.golden import GoldenSet, load_golden
from judge.inputs.runs import Run, load_run
from judge.judging.types import Verdict
from judge.sweep.measure import (
    SettingScores,
    judge_means,
    pooled_change,
    scored_questions,
    setting_scores,
)
from judge.sweep.settings import Setting

Tiny = Callable[..., Config]
TYPES = ("factual", "procedural", "negative", "out_of_scope")


def _inputs(tiny: Tiny) -> tuple[Config, GoldenSet, Run]:
    config = tiny()
    golden = load_golden(config.data)
    return config, golden, load_run(config.data.run, golden)


def _scores(setting: Setting, values: dict[str, list[float]]) -> SettingScores:
    ids = [f"q{i}" for i in range(len(next(iter(values.values()))))]
    return SettingScores(setting, "run.jsonl", False, values, ids, {}, None)  # type: ignore[arg-type]


def test_retrieval_scores_the_questions_with_relevant_chunks(tiny: Tiny) -> None:
    config, golden, run = _inputs(tiny)
    # q4 is out of scope (no relevant chunk): retrieval does not score it.
    assert scored_questions(golden) == ["q1", "q2", "q3"]
    scores = setting_scores(config, golden, Setting({"k": 1}), run, "runs/k1.jsonl", True)
    assert (scores.setting, scores.run_path, scores.reused) == (
        Setting({"k": 1}),
        "runs/k1.jsonl",
        True,
    )
    assert scores.question_ids == ["q1", "q2", "q3"] and scores.failed == {}
    # q1 finds its one chunk first; q2 one of two at rank 1; q3 never its chunk.
    assert scores.values["recall@1"] == [1.0, 0.5, 0.0]
    # q2: relevant at ranks 1 and 3, DCG 1 + 1/log2(4) over the ideal 1 + 1/log2(3).
    assert scores.values["ndcg@5"] == pytest.approx([1.0, 1.5 / (1 + 1 / math.log2(3)), 0.0])
    assert scores.mean("recall@1") == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert scores.table.rows[-1]["type"] == "all" and scores.table.rows[-1]["n"] == 3


def test_a_question_the_adapter_failed_scores_zero_and_is_listed(tiny: Tiny) -> None:
    config, golden, run = _inputs(tiny)
    failed = Run(
        run.meta.model_copy(update={"failed": {"q1": "index shard missing"}}),
        {qid: record for qid, record in run.records.items() if qid not in ("q1", "q2")},
    )
    scores = setting_scores(config, golden, Setting({"k": 2}), failed, "runs/k2.jsonl", False)
    # Still every scored question, in the same order: a failure is worse, not left out.
    assert scores.question_ids == ["q1", "q2", "q3"]
    assert scores.values["recall@1"] == [0.0, 0.0, 0.0]
    assert scores.failed == {"q1": "index shard missing", "q2": "no answer"}


def test_the_mean_of_a_metric_without_questions_is_zero() -> None:
    assert _scores(Setting({"k": 1}), {"mrr": [1.0, 0.5, 0.0, 0.5]}).mean("mrr") == 0.5
    empty = SettingScores(Setting({"k": 1}), "r", False, {"mrr": []}, [], {}, None)  # type: ignore[arg-type]
    assert empty.mean("mrr") == 0.0


def _verdict(qid: str, status: str = "ok", f: int | None = None, r: int | None = None) -> Verdict:
    return Verdict.model_validate(
        {"question_id": qid, "item_key": "k", "status": status, "faithfulness": f, "relevance": r}
    )


def test_the_judges_means_per_type_then_all(tiny: Tiny) -> None:
    _, golden, _ = _inputs(tiny)
    verdicts = {
        "q1": _verdict("q1", f=2, r=2),
        "q2": _verdict("q2", f=1, r=2),
        "q3": _verdict("q3", status="parse_error"),
        "q4": _verdict("q4", f=0, r=1),
    }
    means = judge_means(golden, verdicts, TYPES)
    assert means.per_type == {
        "factual": {"n": 1, "ok": 1, "faithfulness": 2.0, "relevance": 2.0},
        "procedural": {"n": 1, "ok": 1, "faithfulness": 1.0, "relevance": 2.0},
        # Judged, but not ok: counted in n, no mean (None, never 0).
        "negative": {"n": 1, "ok": 0, "faithfulness": None, "relevance": None},
        "out_of_scope": {"n": 1, "ok": 1, "faithfulness": 0.0, "relevance": 1.0},
        # Over the 3 ok verdicts: F (2 + 1 + 0) / 3, R (2 + 2 + 1) / 3.
        "all": {"n": 4, "ok": 3, "faithfulness": 1.0, "relevance": pytest.approx(5 / 3)},
    }
    assert means.verdicts == verdicts
    # A type of the order with no judged answer still gets its row.
    only_q1 = judge_means(golden, {"q1": verdicts["q1"]}, TYPES).per_type
    assert only_q1["negative"] == {"n": 0, "ok": 0, "faithfulness": None, "relevance": None}


def test_the_pooled_change_is_new_minus_old_question_by_question() -> None:
    old = _scores(Setting({"k": 1}), {"ndcg@5": [0.5, 0.5, 1.0, 0.0]})
    new = _scores(Setting({"k": 2}), {"ndcg@5": [1.0, 0.5, 0.5, 0.5]})
    change = pooled_change(old, new, "ndcg@5")
    assert change is not None
    # Changes +0.5, 0, −0.5, +0.5: mean 0.125 over 4.
    assert (change.metric, change.n, change.mean) == ("ndcg@5", 4, 0.125)
    # A resampled mean lies between the smallest and the largest change.
    assert -0.5 <= change.low <= change.mean <= change.high <= 0.5
    assert pooled_change(old, new, "ndcg@5") == change  # seeded by the two settings
    # Every question changed alike: the interval is that change.
    same = _scores(Setting({"k": 2}), {"ndcg@5": [0.75, 0.75, 1.25, 0.25]})
    assert pooled_change(old, same, "ndcg@5") == ("ndcg@5", 4, 0.25, 0.25, 0.25)


def test_no_question_no_pooled_change() -> None:
    empty = SettingScores(Setting({"k": 1}), "r", False, {"mrr": []}, [], {}, None)  # type: ignore[arg-type]
    assert pooled_change(empty, empty, "mrr") is None
