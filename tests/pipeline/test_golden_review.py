"""``judge golden review``: only verified, undecided candidates are shown, with the span marked
in its chunk; each decision is saved at once, so quitting and starting again resumes; the
CLI prints the counts."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import load_config
from judge.inputs.candidates import Candidate, load_candidates, save_candidates
from judge.inputs.golden import Chunk
from judge.pipeline.golden_review import marked, review_in_terminal
from tests.conftest import REPO


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    for name in ("questions.jsonl", "corpus.jsonl"):
        shutil.copyfile(REPO / "golden" / "sample" / name, tmp_path / name)
    toml = tmp_path / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\n', encoding="utf-8"
    )
    base = Candidate(
        candidate_id="c-1",
        type="factual",
        question="年額っていくら？",
        relevant_chunks=("pricing/yearly-plan",),
        answerable=True,
        answer_span="料金は年額3,800円（税込）です。",
        source="corpus",
    )
    rows = [
        base,
        base.model_copy(update={"candidate_id": "c-2", "rejected": ("leak: x",)}),
        base.model_copy(
            update={
                "candidate_id": "c-3",
                "question": "Windows版は？",
                "type": "out_of_scope",
                "relevant_chunks": (),
                "answerable": False,
            }
        ),
        base.model_copy(update={"candidate_id": "c-4", "decision": "reject"}),
    ]
    path = tmp_path / "candidates.jsonl"
    save_candidates(path, rows)
    return toml, path


def _replies(*said: str) -> Iterator[str]:
    yield from said


def test_each_decision_is_saved_at_once_and_a_second_session_resumes(tmp_path: Path) -> None:
    toml, path = _setup(tmp_path)
    shown: list[str] = []
    replies = _replies("maybe", "a", "q")
    done = review_in_terminal(load_config(toml), path, lambda _: next(replies), shown.append)
    assert (done.accepted, done.rejected, done.left) == (1, 0, 1)
    text = "\n".join(shown)
    assert text.startswith("2 candidate(s) to decide (1 rejected by the checks, not shown)")
    assert "«料金は年額3,800円（税込）です。»" in text and "type a or r" in text
    assert [c.decision for c in load_candidates(path)] == ["accept", None, None, "reject"]
    shown.clear()
    replies = _replies("r")
    again = review_in_terminal(load_config(toml), path, lambda _: next(replies), shown.append)
    assert (again.accepted, again.rejected, again.left) == (0, 1, 0)
    assert "chunks: none (out of scope" in "\n".join(shown)
    assert [c.decision for c in load_candidates(path)] == ["accept", None, "reject", "reject"]


def test_the_end_of_input_quits_and_the_cli_prints_the_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    toml, path = _setup(tmp_path)

    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # input() meets the end of input
    assert main(["--config", str(toml), "golden", "review", str(path)]) == 0
    assert "accepted 0, rejected 0; 2 left to decide in" in capsys.readouterr().out


def test_a_span_not_in_the_chunk_is_not_marked() -> None:
    chunk = Chunk(chunk_id="a/1", doc="a", text="The warranty lasts 2 years.")
    assert marked(chunk, "lasts 2 years") == "The warranty «lasts 2 years»."
    assert marked(chunk, "lasts 5 years, always") == chunk.text
