"""A run's per-question values: the same numbers as its tables, and the same whether taken from
the report being built or read back from its folder."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.pipeline.evaluate import earlier_runs, evaluate
from judge.record.store import ReportsDir
from judge.results.compare import QuestionValues, Section
from judge.results.tables import TypeTable
from judge.results.values import question_values
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
    assert result.folder.record().values() == values
    # The wiring's reader of earlier runs: a folder's record by name, None for one gone.
    read = earlier_runs(tiny(), ReportsDir(result.folder.path.parent)).record
    earlier = read(result.folder.name)
    assert earlier is not None and earlier.values() == values
    assert read("20991231T000000Z-gone") is None
    # Its gate alone (what the notes of the falls that ended read), without the whole record;
    # once the record is read, its gate.
    fresh = earlier_runs(tiny(), ReportsDir(result.folder.path.parent))
    assert fresh.gate is not None
    assert fresh.gate(result.folder.name) == result.report.gate
    assert fresh.gate("20991231T000000Z-gone") is None
    (result.folder.path / "report.json").write_text("{", encoding="utf-8")
    assert fresh.gate(result.folder.name) == result.report.gate  # read once, kept
    broken = earlier_runs(tiny(), ReportsDir(result.folder.path.parent))
    assert broken.gate is not None and broken.gate(result.folder.name) is None


def test_a_cited_sentence_is_not_a_verified_quote_and_sentences_give_a_supported_share() -> None:
    from judge.judging.types import EvidenceMatch, SentenceCheck, Verdict
    from judge.results.values import verdict_values

    base = Verdict(question_id="q", item_key="k", status="ok", faithfulness=2, relevance=2)
    quoted = base.model_copy(update={"match": EvidenceMatch(kind="exact", coverage=1.0)})
    cited = base.model_copy(
        update={"match": EvidenceMatch(kind="cited", coverage=1.0), "mode": "cited"}
    )
    assert verdict_values(quoted)["quote_verified"] == 1.0
    assert "quote_verified" not in verdict_values(cited)
    assert "sentences_supported" not in verdict_values(cited)

    def check(n: int, verdict: str) -> SentenceCheck:
        return SentenceCheck(n=n, text="s", start=0, end=1, verdict=verdict)  # type: ignore[arg-type]

    checks = (
        check(1, "supported"),
        check(2, "unsupported"),
        check(3, "no_claim"),
        check(4, "supported"),
    )
    by_sentence = base.model_copy(
        update={
            "mode": "sentences",
            "faithfulness": 1,
            "sentences": checks,
            "match": EvidenceMatch(kind="empty"),
        }
    )
    values = verdict_values(by_sentence)
    assert values["sentences_supported"] == pytest.approx(2 / 3)  # no_claim is not checkable
    assert "quote_verified" not in values
    # An answer that claims nothing has no share (never a 0, never NaN).
    nothing = by_sentence.model_copy(
        update={"faithfulness": 2, "sentences": (check(1, "no_claim"),)}
    )
    assert "sentences_supported" not in verdict_values(nothing)
    assert verdict_values(nothing)["faithfulness"] == 2.0
