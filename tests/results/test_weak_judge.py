"""A weak judge from its replies (``judge.results.weak_judge``): the prompt's format example
repeated, or one reply for most items; flagged in the console, report.md and the review queue."""

from __future__ import annotations

import json
from pathlib import Path

from judge.config import Config
from judge.judging.backends.base import JudgeRequest
from judge.judging.verdict import Reply as BackendReply
from judge.pipeline.evaluate import evaluate
from judge.report.markdown import judge_warnings
from judge.report.summary import console_summary
from judge.results.review import TRIAGE_FLAGS
from judge.results.weak_judge import (
    SAME_REPLY_MIN,
    Judgements,
    JudgeReply,
    is_format_example,
    weak_judge,
    weak_judgements,
    weak_reasons,
)
from tests.conftest import REPO
from tests.fakes import good_reply


def _varied(n: int) -> list[JudgeReply]:
    return [
        JudgeReply(f'{{"grade": {i % 4}, "reason": "passage {i}"}}', f"passage {i}")
        for i in range(n)
    ]


def test_the_format_example_is_a_placeholder_in_english_or_japanese_text() -> None:
    for reason in ("...", " … ", "<one short sentence>", "<理由>"):
        assert is_format_example(reason)
    for reason in ("", "The passage gives the price.", "価格が書かれている。", "see ... below"):
        assert not is_format_example(reason)


def test_the_example_or_one_reply_for_most_items_is_a_weak_judge() -> None:
    example = JudgeReply('{ "grade": 2, "reason": "..."}', "...")
    assert weak_judge("chunk grades", [example] * 80) == (
        "chunk grades",
        '{ "grade": 2, "reason": "..."}',
        80,
        80,
        True,
    )
    found = weak_judge("chunk grades", [example] * 80)
    assert found is not None and found.warning.startswith(
        "weak judge: 80 of 80 chunk grades repeat the prompt's format example"
    )
    same = JudgeReply('{"correctness": 2, "reason": "Matches."}', "Matches.")
    nine_of_twelve = weak_judge("correctness verdicts", [same] * 9 + _varied(3))
    assert nine_of_twelve is not None and not nine_of_twelve.example
    assert nine_of_twelve.warning.startswith(
        'weak judge: 9 of 12 correctness verdicts are one and the same reply ({"correctness": 2,'
    )
    assert weak_judge("correctness verdicts", [same] * 8 + _varied(4)) is None  # under 3/4
    assert weak_judge("chunk grades", [example] * (SAME_REPLY_MIN - 1)) is None  # too few
    assert weak_judge("chunk grades", _varied(40)) is None


def test_the_items_whose_replies_those_are_get_a_reason_and_the_lexical_judge_never() -> None:
    example = JudgeReply('{"grade": 2, "reason": "..."}', "...")
    found = Judgements(
        answers={f"q{i}": JudgeReply(f"answer {i}", "fine") for i in range(12)},
        chunks={"q1": [example] * 5 + _varied(1), "q2": [example] * 6},
        correctness={},
    )
    weak = weak_judgements(found, "ollama")
    assert [w.task for w in weak] == ["chunk grades"]
    assert weak_reasons(found, weak) == {
        "q1": ["weak judge: 5 of its chunk grades are the run's repeated reply"],
        "q2": ["weak judge: 6 of its chunk grades are the run's repeated reply"],
    }
    assert weak_judgements(found, "lexical") == []
    assert "weak_judge" in TRIAGE_FLAGS


def _one_reply(request: JudgeRequest) -> BackendReply:
    """The same verdict for every answer, whatever it is (a judge that does not read)."""
    payload = {"evidence": "", "faithfulness": 2, "relevance": 2, "note": "Looks right."}
    return BackendReply(text=json.dumps(payload), finish_reason="stop")


def test_a_run_whose_judge_gives_one_reply_warns_everywhere(
    sample_config: Config, tmp_path: Path
) -> None:
    from tests.fakes import ScriptedBackend

    config = sample_config.with_overrides(
        reports={"dir": tmp_path / "reports"}, judge={"cache_path": tmp_path / "cache.sqlite3"}
    )
    result = evaluate(config, backend=ScriptedBackend(_one_reply))
    report = result.report
    warnings = [w for w in judge_warnings(report) if w.startswith("weak judge")]
    assert len(warnings) == 1 and "answer verdicts are one and the same reply" in warnings[0]
    console = "\n".join(console_summary(report, result.folder.path))
    assert "warning: weak judge:" in console
    markdown = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "weak judge:" in markdown
    flagged = [row for row in report.questions if "weak_judge" in row.triage.flags]
    assert len(flagged) == len([v for v in report.verdicts if v.status == "ok"])
    # a judge whose replies differ item by item is not flagged
    varied = evaluate(
        config.with_overrides(judge={"cache_path": tmp_path / "other.sqlite3"}),
        backend=ScriptedBackend(good_reply),
    )
    assert not [w for w in judge_warnings(varied.report) if w.startswith("weak judge")]
    assert (REPO / "prompts" / "chunk.v1.md").read_text(encoding="utf-8").count('"grade": 2') == 0
