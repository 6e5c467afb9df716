"""``judge golden accept CANDIDATES.jsonl`` (``judge.inputs.golden_add`` and its wiring), on
copies of both shipped samples: the accepted candidates appended, every other byte and the line
order kept, new ids that never collide, the split rule, idempotent, the fingerprint changed,
problems refused with nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import load_config
from judge.inputs.candidates import Candidate, save_candidates
from judge.inputs.golden import GoldenQuestion, load_golden
from judge.inputs.golden_add import assign_split, new_ids
from judge.pipeline.golden import CandidatesAccepted, accept
from tests.conftest import REPO

NEW = {
    "sample": [
        ("factual", "ＰＤＦの書き出しって無料プランでも使えるの？", ["backup/export-pdf"]),
        ("out_of_scope", "スマートウォッチで日記を読み上げてくれる機能はありますか", []),
    ],
    "sample-en": [
        ("factual", "how many satellites can I chain off one router", ["mesh/limits"]),
        ("out_of_scope", "does the kestrel app run on a smart tv", []),
    ],
}


def _copy(tmp_path: Path, sample: str) -> Path:
    for name in ("questions.jsonl", "corpus.jsonl"):
        shutil.copyfile(REPO / "golden" / sample / name, tmp_path / name)
    toml = tmp_path / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\n', encoding="utf-8"
    )
    return toml


def _candidates(tmp_path: Path, sample: str, decisions: list[Any]) -> Path:
    rows = [
        Candidate(
            candidate_id=f"c-{n}",
            type=kind,
            question=question,
            relevant_chunks=tuple(chunks),
            answerable=kind != "out_of_scope",
            source="questions",
            decision=decision,
        )
        for n, ((kind, question, chunks), decision) in enumerate(
            zip(NEW[sample], decisions, strict=True)
        )
    ]
    rows.append(
        Candidate(
            candidate_id="c-dup",
            type="factual",
            question="anything",
            relevant_chunks=None,
            answerable=True,
            source="questions",
            rejected=("covered: golden q01 is 0.95 similar",),
        )
    )
    path = tmp_path / "candidates.jsonl"
    save_candidates(path, rows)
    return path


@pytest.mark.parametrize("sample", ["sample", "sample-en"])
def test_accepted_candidates_are_appended_and_a_second_accept_changes_nothing(
    tmp_path: Path, sample: str, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _copy(tmp_path, sample)
    questions = tmp_path / "questions.jsonl"
    before_bytes = questions.read_bytes()
    before = load_golden(load_config(toml).data)
    file = _candidates(tmp_path, sample, ["accept", "accept"])
    assert main(["--config", str(toml), "golden", "accept", str(file), "--dry-run"]) == 0
    assert questions.read_bytes() == before_bytes
    assert main(["--config", str(toml), "golden", "accept", str(file)]) == 0
    out = capsys.readouterr().out
    after_bytes = questions.read_bytes()
    assert after_bytes.startswith(before_bytes)  # every old byte and line, in order
    after = load_golden(load_config(toml).data)  # valid
    old_ids = [q.id for q in before.questions]
    assert [q.id for q in after.questions][: len(old_ids)] == old_ids
    added = after.questions[len(old_ids) :]
    n = len(old_ids)
    assert [q.id for q in added] == [f"q{n + 1:02d}", f"q{n + 2:02d}"]
    assert [q.question for q in added] == [q for _, q, _ in NEW[sample]]
    assert added[1].relevant_chunks == () and not added[1].answerable
    assert all(q.split in ("tune", "holdout") for q in added)
    assert after.questions_hash != before.questions_hash  # the history sees a new golden set
    assert f"added 2 questions to {questions}" in out
    assert (
        "0 already in the golden set; 0 rejected by the person; 0 not decided; 1 rejected by the checks"
        in out
    )
    assert before.questions_hash in out and after.questions_hash in out
    # idempotent: the same file again adds nothing and writes nothing
    assert main(["--config", str(toml), "golden", "accept", str(file)]) == 0
    assert questions.read_bytes() == after_bytes
    assert "no questions to add; 2 already in the golden set" in capsys.readouterr().out.replace(
        f" to {questions}", ""
    )


def test_crlf_a_missing_last_newline_and_a_persons_rejection(tmp_path: Path) -> None:
    toml = _copy(tmp_path, "sample")
    questions = tmp_path / "questions.jsonl"
    text = questions.read_text(encoding="utf-8").rstrip("\n").replace("\n", "\r\n")
    questions.write_bytes(text.encode("utf-8"))
    file = _candidates(tmp_path, "sample", ["accept", "reject"])
    result = accept(load_config(toml), file)
    assert isinstance(result, CandidatesAccepted) and result.written
    assert result.add.rejected_by_person == 1 and len(result.add.added) == 1
    raw = questions.read_bytes()
    assert raw.startswith(text.encode("utf-8") + b"\r\n") and raw.endswith(b"\r\n")
    assert raw.count(b"\r\n") == 31 and b"\n" not in raw.replace(b"\r\n", b"")


def test_problems_are_refused_all_at_once_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _copy(tmp_path, "sample")
    questions = tmp_path / "questions.jsonl"
    before = questions.read_bytes()
    rows = [
        Candidate(
            candidate_id="c-a",
            type="factual",
            question="新しい質問です",
            relevant_chunks=("nowhere/chunk",),
            answerable=True,
            source="questions",
            decision="accept",
        ),
        Candidate(
            candidate_id="c-b",
            type="factual",
            question="もうひとつの質問です",
            relevant_chunks=None,
            answerable=True,
            source="corpus",
            rejected=("span_absent: not in it",),
            decision="accept",
        ),
    ]
    file = tmp_path / "c.jsonl"
    save_candidates(file, rows)
    assert main(["--config", str(toml), "golden", "accept", str(file)]) == 2
    err = capsys.readouterr().err
    assert f"{file}:1: relevant_chunks not in the corpus: nowhere/chunk" in err
    assert f"{file}:2: c-b is accepted but verification rejected it (span_absent: not in it)" in err
    assert "Traceback" not in err and questions.read_bytes() == before


def test_new_ids_continue_the_common_form_and_never_collide() -> None:
    assert new_ids(["q01", "q02", "q30"], 2) == ["q31", "q32"]
    assert new_ids(["q1", "q9", "x-1"], 1) == ["q10"]
    assert new_ids(["q001", "extra"], 1) == ["q002"]
    assert new_ids([], 1) == ["q01"]
    assert new_ids(["a1", "a2", "b7"], 1) == ["a3"]


def _q(qid: str, kind: str, chunks: tuple[str, ...], split: str) -> GoldenQuestion:
    return GoldenQuestion.model_validate(
        {
            "id": qid,
            "type": kind,
            "question": qid,
            "relevant_chunks": chunks,
            "answerable": bool(chunks),
            "split": split,
        }
    )


def test_the_split_follows_a_shared_chunk_else_keeps_a_third_of_each_type_held_out() -> None:
    golden = [_q("q1", "factual", ("a/1",), "holdout"), _q("q2", "factual", ("a/2",), "tune")]
    on_a1 = Candidate(
        candidate_id="c",
        type="factual",
        question="x",
        relevant_chunks=("a/1",),
        answerable=True,
        source="corpus",
    )
    assert assign_split(on_a1, golden, []) == "holdout"
    on_new = on_a1.model_copy(update={"relevant_chunks": ("a/9",)})
    assert assign_split(on_new, golden, []) == "tune"  # 1 of 3 would be held out already
    tune = [_q("q1", "factual", ("a/1",), "tune"), _q("q2", "factual", ("a/2",), "tune")]
    assert assign_split(on_new, tune, []) == "holdout"


def test_a_missing_labels_file_still_goes_to_the_label_accept(tmp_path: Path) -> None:
    toml = _copy(tmp_path, "sample")
    file = tmp_path / "missing-labels.jsonl"
    row = {"question_id": "q01", "chunk_id": "pricing/yearly-plan", "confirmed": True}
    file.write_text(json.dumps(row) + "\n", encoding="utf-8")
    result = accept(load_config(toml), file)
    assert not isinstance(result, CandidatesAccepted) and result.edit.already == 1
