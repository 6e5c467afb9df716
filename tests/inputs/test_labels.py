"""Human labels: conflicts and bad scores are errors; labels of retired questions are skipped."""

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels
from tests.conftest import write_jsonl

Tiny = Callable[..., Config]


def test_labels_conflict_and_unknown_question(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    base = {
        "question_id": "q1",
        "answer_sha256": "a" * 64,
        "faithfulness": 2,
        "relevance": 2,
        "labeller": "ana",
    }
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            base,
            base,  # an identical repeat is harmless
            {**base, "relevance": 1},
            {**base, "question_id": "q9"},
            {**base, "faithfulness": 3},
        ],
    )
    with pytest.raises(InputError) as caught:
        load_labels(path, golden.by_id())
    problems = caught.value.problems
    # q9 is not a golden id: a retired question's label, skipped rather than an error (below).
    assert len(problems) == 2
    assert ":3: conflicts with line 1: labeller 'ana'" in problems[0]
    assert problems[1].endswith(":5: faithfulness: Input should be less than or equal to 2")


def test_labels_of_retired_questions_do_not_block_a_run(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    base = {"answer_sha256": "a" * 64, "faithfulness": 2, "relevance": 2, "labeller": "ana"}
    path = write_jsonl(
        tmp_path / "labels.jsonl", [{**base, "question_id": "q1"}, {**base, "question_id": "q_old"}]
    )
    labels = load_labels(path, golden.by_id())
    assert [lab.question_id for lab in labels.current] == ["q1"]
    assert [(line, lab.question_id) for line, lab in labels.retired] == [(2, "q_old")]
    assert labels.warning() == (
        f"{path}: 1 label(s) for question(s) no longer in the golden set were skipped (q_old); "
        "'judge check' lists them"
    )
    assert labels.retired_lines() == [
        f"{path}:2: question_id 'q_old' is no longer a golden id; the label is kept but not "
        "counted (delete the line if the question is gone for good)"
    ]
