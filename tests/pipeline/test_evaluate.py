"""``judge.pipeline.evaluate``: what the result of an evaluation offers beyond its record (its
wiring is exercised by tests/test_pipeline.py and the command tests)."""

from __future__ import annotations

from collections.abc import Callable

from judge.config import Config
from judge.pipeline.evaluate import evaluate


def test_questions_carry_the_diagnosis_of_each_question(tiny: Callable[..., Config]) -> None:
    """result.questions() had no diagnosis column: the record's, one per question."""
    result = evaluate(tiny(), backend="lexical", progress=False)
    questions = result.questions()
    expected = {row.question_id: row.diagnosis for row in result.report.questions}
    assert questions["diagnosis"].to_dict() == expected
    assert len(set(expected.values())) > 1  # the tiny set's questions are not all alike
