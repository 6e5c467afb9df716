import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run, save_run
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


def test_run_loads_with_its_header(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    run = load_run(config.data.run, golden)
    assert run.meta.system == "test-rag"
    assert run.meta.chunking == {"method": "heading"}


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


@pytest.mark.parametrize(
    ("retrieved", "said"),
    [
        (
            {"chunk_id": "pricing/plans", "score": "0.9"},
            'score: must be a number such as 0.5, not "0.9"',
        ),
        (
            {"chunk_id": "pricing/plans", "score": True},
            "score: must be a number such as 0.5, not true",
        ),
        ({"chunk_id": "pricing plans"}, "chunk_id: contains U+0020 (a space)"),
    ],
)
def test_retrieved_chunks_are_read_strictly(
    tiny: Tiny, retrieved: dict[str, Any], said: str
) -> None:
    config = tiny(run=_run(q1={"retrieved": [retrieved]}))
    assert _problems(config)[0] == f"{config.data.run}:2: retrieved.0.{said}" or _problems(config)[
        0
    ].startswith(f"{config.data.run}:2: retrieved.0.{said}")


def test_an_integer_score_is_a_number(tiny: Tiny) -> None:
    """JSON has one number type: a score of 1 is the number 1.0 (documented in golden/README.md)."""
    config = tiny(run=_run(q1={"retrieved": [{"chunk_id": "pricing/plans", "score": 1}]}))
    golden = load_golden(config.data)
    assert config.data.run is not None
    score = load_run(config.data.run, golden).records["q1"].retrieved[0].score
    assert score == 1.0 and isinstance(score, float)


def test_run_meta_is_read_strictly(tiny: Tiny) -> None:
    run = _run()
    run[0]["run_meta"]["created_at"] = 1700000000
    config = tiny(run=run)
    assert _problems(config)[0].startswith(
        f"{config.data.run}:1: run_meta.created_at: must be an ISO 8601 date-time string"
    )
