"""The per-type tables: rows per question type, then all, with the weakest type named."""

from collections.abc import Callable

import pytest

from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.pipeline.inputs import measure_retrieval

Tiny = Callable[..., Config]


def test_per_type_retrieval_table(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    table = measure_retrieval(config, golden, load_run(config.data.run, golden), "run").retrieval
    frame = table.frame
    assert list(frame.index) == ["factual", "procedural", "negative", "out_of_scope", "all"]
    assert list(frame["n"]) == [1, 1, 1, 0, 3]
    assert list(frame["excluded"]) == [0, 0, 0, 1, 1]
    # recall@5 per type: q1 = 1, q2 = 1, q3 = 0; all = (1 + 1 + 0) / 3
    assert frame.loc["all", "recall@5"] == pytest.approx(2 / 3)
    assert frame.loc["negative", "recall@5"] == 0.0
    assert table.primary == "recall@5"
    assert table.weakest == "negative"
    assert frame.columns[:4].tolist() == ["n", "excluded", "recall@5", "hit@5"]
    payload = table.to_json()
    assert payload["weakest_type"] == "negative"
    oos = payload["rows"][3]
    assert oos == {
        "type": "out_of_scope",
        "n": 0,
        "excluded": 1,
        **{m: None for m in table.metrics},
    }


def test_expected_scores_sit_beside_the_scores_when_the_judge_gives_probabilities(
    tiny: Tiny,
) -> None:
    from judge.judging.types import Verdict
    from judge.results.tables import EXPECTED_METRICS, JUDGE_METRICS, judge_table

    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    scores = measure_retrieval(config, golden, load_run(config.data.run, golden), "run").scores

    def verdict(
        qid: str, f: int, probabilities: dict[str, tuple[float, float, float]] | None
    ) -> Verdict:
        return Verdict(
            question_id=qid,
            item_key=qid,
            status="ok",
            faithfulness=f,
            relevance=2,
            score_probabilities=probabilities,
        )

    plain = [verdict("q1", 2, None), verdict("q2", 1, None)]
    table = judge_table(config, golden, scores, plain, failed=[])
    assert not set(EXPECTED_METRICS) & set(table.metrics)  # no probabilities: no columns
    with_probabilities = [
        verdict("q1", 2, {"faithfulness": (0.1, 0.2, 0.7), "relevance": (0, 0, 1)}),
        verdict("q2", 1, {"faithfulness": (0.2, 0.5, 0.3), "relevance": (0, 0.4, 0.6)}),
        verdict("q3", 2, None),  # a verdict without them counts in the scores only
    ]
    assert with_probabilities[1].expected_scores == pytest.approx(
        {"faithfulness": 1.1, "relevance": 1.6}
    )
    frame = judge_table(config, golden, scores, with_probabilities, failed=[]).frame
    assert list(frame.columns[:2]) == ["n", "parse_error"]
    metrics = [c for c in frame.columns if c in JUDGE_METRICS or c in EXPECTED_METRICS]
    assert metrics == [*JUDGE_METRICS, *EXPECTED_METRICS]
    assert frame.loc["factual", "expected_faithfulness"] == pytest.approx(1.6)  # q1
    assert frame.loc["all", "expected_faithfulness"] == pytest.approx((1.6 + 1.1) / 2)
    assert frame.loc["all", "faithfulness"] == pytest.approx(5 / 3)
