"""Helpers for tests of the gate on real runs, and the golden questions and graded chunks of the
chunk-grade tests (tests/results/test_chunk_grades.py, tests/audit/test_chunk_agreement.py)."""

from __future__ import annotations

import pytest

import judge.pipeline.session
from judge.config import Config, load_config
from judge.inputs.golden import GoldenQuestion
from judge.judging.backends.base import JudgeBackend
from judge.judging.backends.registry import OpenedBackend
from judge.results.chunk_grades import GradedChunk
from judge.results.compare import Change, Moved


def with_reports(config: Config, lines: str) -> Config:
    """``config``'s judge.toml with ``lines`` added to its ``[reports]`` table (the last table
    of the tiny set's judge.toml)."""
    assert config.source is not None
    text = config.source.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1].startswith("dir = "), "[reports] is not last"
    config.source.write_text(text + lines + "\n", encoding="utf-8")
    return load_config(config.source)


def use_backend(monkeypatch: pytest.MonkeyPatch, backend: JudgeBackend) -> None:
    """Make every ``evaluate`` that opens a backend (the CLI's ``run`` and ``nightly``) use
    ``backend``: the name the session looks up when it opens one."""
    monkeypatch.setattr(
        judge.pipeline.session,
        "open_backend",
        lambda _: OpenedBackend(backend, "scripted for a test"),
    )


#: The tiny and sample sets' question types, in their configured order.
TYPES = ("factual", "procedural", "negative", "out_of_scope")


def question(
    qid: str,
    relevant: tuple[str, ...] | None,
    qtype: str = "factual",
    text: str = "What?",
) -> GoldenQuestion:
    """A golden question of ``qtype`` listing ``relevant`` chunks (None: unlabelled); an
    out-of-scope one is unanswerable."""
    return GoldenQuestion(
        id=qid,
        type=qtype,
        question=text,
        relevant_chunks=relevant,
        answerable=qtype != "out_of_scope",
    )


def pool(qid: str, grades: list[tuple[str, int | None]]) -> list[GradedChunk]:
    """Graded chunks at ranks 1, 2, ... with reasons naming the chunk."""
    return [
        GradedChunk(qid, chunk, rank, grade, f"why {chunk}")
        for rank, (chunk, grade) in enumerate(grades, start=1)
    ]


def fallen_change(direction: str, n: int = 12, moved: int = 1, **changes: object) -> Change:
    """A factual faithfulness change of -1/3 over ``n`` questions (interval -7/12 to -1/12),
    ``moved`` questions from 2 to 1, decided ``direction`` (exact p 0.0001 for a fall the gate
    fails, else 0.0625); ``changes`` replace fields."""
    ids = [f"q{i:02d}" for i in range(1, moved + 1)]
    change = Change(
        "judge",
        "factual",
        "faithfulness",
        n,
        2.0,
        5 / 3,
        -1 / 3,
        -7 / 12,
        -1 / 12,
        0.1,
        direction,  # type: ignore[arg-type]
        tuple(Moved(q, 2.0, 1.0) for q in ids),
        0.0001 if direction in ("regressed", "collapsed") else 0.0625,
    )
    return change._replace(**changes)
