"""A run's per-question values: the same numbers as its tables, and the same whether taken from
the report being built or read back from its folder."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.pipeline import evaluate
from judge.results.compare import QuestionValues, Section
from judge.results.folder import ReportsDir
from judge.results.tables import TypeTable
from judge.results.values import earlier_values, folder_values, question_values
from tests.conftest import worse_run

Tiny = Callable[..., Config]


def _type_means(values: QuestionValues, section: Section) -> dict[tuple[str, str], float]:
    groups: dict[tuple[str, str], list[float]] = {}
    for metric, per_question in values.values[section].items():
        for qid, value in per_question.items():
            groups.setdefault((values.types[qid], metric), []).append(value)
    return {key: statistics.fmean(group) for key, group in groups.items()}


def test_values_average_to_the_tables_and_read_back_the_same(tiny: Tiny) -> None:
    result = evaluate(tiny(run=worse_run()), backend="lexical")
    report = result.report
    verdicts = {v.question_id: v for v in report.verdicts}
    values = question_values(report.items, verdicts)
    sections: list[tuple[Section, TypeTable]] = [
        ("judge", report.judge),
        ("retrieval", report.retrieval),
    ]
    for section, table in sections:
        means = _type_means(values, section)
        for (type_name, metric), mean in means.items():
            if metric in table.metrics:
                assert mean == pytest.approx(table.frame.loc[type_name, metric]), (
                    type_name,
                    metric,
                )
        # Every mean of the table has its values (context retrieval sits in the retrieval section).
        for type_name in table.frame.index.drop("all"):
            for metric in table.metrics:
                shown = table.frame.loc[type_name, metric]
                if not math.isnan(shown) and metric in values.values[section]:
                    assert (type_name, metric) in means
    # ok_share: 1 per ok verdict, 0 otherwise (all ok with the lexical judge).
    assert set(values.values["judge"]["ok_share"].values()) == {1.0}
    assert folder_values(result.folder) == values
    read = earlier_values(ReportsDir(result.folder.path.parent))
    assert read(result.folder.name) == values
    assert read("20991231T000000Z-gone") is None
