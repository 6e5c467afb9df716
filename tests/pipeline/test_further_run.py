"""Chunk grades and correctness in a run (judge.pipeline.evaluate, session, check): both samples
with the lexical baseline, the cache, re-rendering, Ctrl-C, the cost said before, the check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.config import Config, load_config
from judge.errors import Interrupted, PromptError
from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.verdict import Reply
from judge.pipeline.check import check
from judge.pipeline.evaluate import Hooks, evaluate
from judge.pipeline.report import rerender
from judge.pipeline.session import JudgeChoice
from judge.record.model import Record
from tests.conftest import REPO

SAMPLES = ["judge.toml", "golden/sample-en/judge.toml"]


def on(config_file: str, tmp_path: Path, **judge: Any) -> Config:
    """A shipped sample's configuration with chunk grading and correctness on, its cache and
    reports in ``tmp_path``."""
    config = load_config(REPO / config_file)
    return config.with_overrides(
        judge={
            "cache_path": tmp_path / "cache.sqlite3",
            "chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md"},
            "correctness": {"enabled": True, "prompt": REPO / "prompts" / "correctness.v1.md"},
            **judge,
        },
        reports={"dir": tmp_path / "reports"},
    )


class Counting(LexicalBackend):
    """The baseline, recording each request; ``stop_at``: Ctrl-C at that chunk request."""

    def __init__(self, stop_at: int | None = None) -> None:
        super().__init__()
        self.asked: list[JudgeRequest] = []
        self.stop_at = stop_at

    def complete(self, request: JudgeRequest) -> Reply:
        chunks = sum(r.task == "chunk" for r in self.asked)
        if request.task == "chunk" and chunks == self.stop_at:
            raise KeyboardInterrupt
        self.asked.append(request)
        return super().complete(request)


def grades_of(record: Record) -> dict[str, list[tuple[str, int, int | None, str]]]:
    return {
        row.question_id: [(g.chunk_id, g.rank, g.grade, g.status) for g in row.chunk_grades]
        for row in record.questions
        if row.chunk_grades
    }


@pytest.mark.parametrize("config_file", SAMPLES)
def test_a_run_grades_the_top_chunks_and_judges_correctness_then_a_second_asks_nothing(
    config_file: str, tmp_path: Path
) -> None:
    config = on(config_file, tmp_path)
    choices: list[JudgeChoice] = []
    backend = Counting()
    first = evaluate(
        config, backend=backend, progress=False, hooks=Hooks(on_judge_chosen=choices.append)
    )
    golden = first.inputs.golden
    answered = [q for q in golden.questions if q.id in first.inputs.run.records]
    k = config.retrieval.context_k
    rows = {row.question_id: row for row in first.report.questions}
    for question in answered:
        grades = rows[question.id].chunk_grades
        assert grades is not None and [g.rank for g in grades] == list(range(1, k + 1))
        retrieved = first.inputs.run.records[question.id].retrieved[:k]
        assert [g.chunk_id for g in grades] == [r.chunk_id for r in retrieved]
        assert all(g.status == "ok" and g.grade in (0, 1, 2, 3) for g in grades)
        correctness = rows[question.id].correctness
        if question.reference_answer or not question.answerable:
            assert correctness is not None and correctness.status == "ok"
            assert correctness.correctness in (0, 1, 2)
        else:
            assert correctness is None  # never a silent 0
    tasks = [r.task for r in backend.asked]
    assert tasks.count("answer") == len(answered)
    assert tasks.count("chunk") == len(
        {g.item_key for r in rows.values() for g in r.chunk_grades or ()}
    )
    assert tasks.count("correctness") == sum(r.correctness is not None for r in rows.values())
    # The cost of each was said before anything was asked.
    (choice,) = choices
    chunk_line, correctness_line = choice.extra
    assert chunk_line.startswith(f"chunk grades (top {k} chunks of {len(answered)} answers)")
    assert "chunk.v1.md; to judge:" in chunk_line
    assert correctness_line.startswith("correctness (answers with a reference")
    assert choice.lines()[-2:] == list(choice.extra)
    # The manifest records each judgement's fingerprint, none equal to the answers'.
    fingerprints = first.report.manifest.fingerprints
    chunks, correctness = fingerprints.tasks["chunk"], fingerprints.tasks["correctness"]
    assert chunks.value and correctness.value and chunks.parts
    assert len({fingerprints.judge, chunks.value, correctness.value}) == 3
    # A second run asks nothing new: everything comes from the cache.
    again_backend = Counting()
    again = evaluate(config, backend=again_backend, progress=False)
    assert again_backend.asked == []
    assert grades_of(again.report) == grades_of(first.report)
    assert all(g.cached for row in again.report.questions for g in row.chunk_grades or ())
    assert all(row.correctness.cached for row in again.report.questions if row.correctness)
    # Re-rendering re-derives the same grades and verdicts from the cache, and keeps that
    # they came from the cache in the run.
    folder = rerender(config, again.folder.name)
    record = folder.record()
    assert grades_of(record) == grades_of(again.report)
    assert [r.correctness for r in record.questions] == [
        r.correctness for r in again.report.questions
    ]
    assert record.manifest.fingerprints == again.report.manifest.fingerprints


def test_off_by_default_nothing_is_graded_and_the_manifest_says_none(tmp_path: Path) -> None:
    config = load_config(REPO / "judge.toml").with_overrides(
        judge={"cache_path": tmp_path / "c.sqlite3"}, reports={"dir": tmp_path / "reports"}
    )
    choices: list[JudgeChoice] = []
    backend = Counting()
    run = evaluate(
        config, backend=backend, progress=False, hooks=Hooks(on_judge_chosen=choices.append)
    )
    assert {r.task for r in backend.asked} == {"answer"}
    assert all(row.chunk_grades is None and row.correctness is None for row in run.report.questions)
    assert choices[0].extra == ()
    assert "chunk" not in run.report.manifest.fingerprints.tasks
    assert run.report.manifest.fingerprints.tasks == {}
    rerendered = rerender(config, run.folder.name).record()
    assert all(row.chunk_grades is None for row in rerendered.questions)


def test_a_bad_chunk_prompt_fails_before_anything_is_asked(tmp_path: Path) -> None:
    config = on("judge.toml", tmp_path)
    config = config.with_overrides(
        judge={"chunks": {"enabled": True, "prompt": REPO / "prompts" / "judge.v1.md"}}
    )
    backend = Counting()
    with pytest.raises(PromptError, match=r"given as judge\.chunks\.prompt"):
        evaluate(config, backend=backend, progress=False)
    assert backend.asked == []


def test_ctrl_c_mid_grading_keeps_what_was_graded_and_the_next_run_resumes(
    tmp_path: Path,
) -> None:
    config = on("golden/sample-en/judge.toml", tmp_path)
    with pytest.raises(Interrupted) as caught:
        evaluate(config, backend=Counting(stop_at=7), progress=False)
    assert str(caught.value).startswith("every answer judged, and 7 of ")
    assert "chunks graded; all cached; run the same command again to resume" in str(caught.value)
    resumed = Counting()
    run = evaluate(config, backend=resumed, progress=False)
    tasks = [r.task for r in resumed.asked]
    assert "answer" not in tasks  # the answers were kept
    graded = {g.item_key for row in run.report.questions for g in row.chunk_grades or ()}
    assert tasks.count("chunk") == len(graded) - 7
    cached = {
        g.item_key for row in run.report.questions for g in row.chunk_grades or () if g.cached
    }
    assert len(cached) == 7


def test_the_check_says_each_judgement_is_on_with_its_calls_and_cache(tmp_path: Path) -> None:
    config = on("golden/sample-en/judge.toml", tmp_path)
    before = check(config, preflight_judge=True, backend="lexical")
    assert before.judge is not None
    chunks, correctness = before.judge.further
    assert (chunks.task, chunks.cached, correctness.task, correctness.cached) == (
        "chunk",
        0,
        "correctness",
        0,
    )
    assert chunks.line().startswith("chunk grades (top 5 chunks of 20 answers): on (judge.chunks, ")
    assert chunks.line().endswith(
        f"{chunks.calls} calls, 0 of them in the cache; {chunks.calls} to judge"
    )
    evaluate(config, backend="lexical", progress=False)
    after = check(config, preflight_judge=True, backend="lexical")
    assert after.judge is not None
    assert [(f.calls, f.cached) for f in after.judge.further] == [
        (chunks.calls, chunks.calls),
        (correctness.calls, correctness.calls),
    ]
    off = check(
        load_config(REPO / "golden/sample-en/judge.toml"), preflight_judge=True, backend="lexical"
    )
    assert off.judge is not None and off.judge.further == ()


def test_the_check_reports_a_bad_correctness_prompt_with_the_other_problems(tmp_path: Path) -> None:
    from judge.errors import InputError

    bad = tmp_path / "c.md"
    bad.write_text("$question $answer", encoding="utf-8")
    config = on("judge.toml", tmp_path, correctness={"enabled": True, "prompt": bad})
    with pytest.raises(InputError) as caught:
        check(config)
    assert any("missing placeholder $reference" in p for p in caught.value.problems)


def test_the_cost_uses_the_rate_of_earlier_replies_of_the_same_task(tmp_path: Path) -> None:
    config = on("judge.toml", tmp_path)
    evaluate(config, backend="lexical", progress=False)
    # Another chunk depth: new chunk items, priced at the rate of the earlier chunk replies.
    deeper = config.with_overrides(
        judge={"chunks": {"enabled": True, "depth": 6, "prompt": REPO / "prompts" / "chunk.v1.md"}}
    )
    choices: list[JudgeChoice] = []
    evaluate(deeper, backend="lexical", progress=False, hooks=Hooks(on_judge_chosen=choices.append))
    chunk_line = choices[0].extra[0]
    assert chunk_line.startswith("chunk grades (top 6 chunks of 30 answers)")
    assert "in the cache); about" in chunk_line and "at the rate of this judge's last" in chunk_line
