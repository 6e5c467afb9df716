"""The per-type tables: rows per question type, then all, with the weakest type named."""

from collections.abc import Callable

import pytest

from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.pipeline import measure_retrieval

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
