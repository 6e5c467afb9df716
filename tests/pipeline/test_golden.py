"""``judge golden accept FILE`` end to end, on copies of both shipped sample sets: confirmed
labels added, idempotent, conflicts refused with nothing written, the dry run, the lock."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import judge.pipeline.golden as golden_pipeline
from judge.cli import main
from judge.config import load_config
from judge.formatting import bom_csv
from judge.inputs.golden import GoldenSet, load_golden
from judge.io.lock import lock_file
from tests.conftest import REPO

COLUMNS = [
    "question_id",
    "type",
    "chunk_id",
    "rank",
    "grade",
    "reason",
    "question",
    "chunk_text",
    "confirmed",
]


def _copy(tmp_path: Path, sample: str) -> Path:
    """The sample set's questions and corpus in ``tmp_path``, and a judge.toml for them."""
    for name in ("questions.jsonl", "corpus.jsonl"):
        shutil.copyfile(REPO / "golden" / sample / name, tmp_path / name)
    toml = tmp_path / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\n', encoding="utf-8"
    )
    return toml


def _golden(toml: Path) -> GoldenSet:
    return load_golden(load_config(toml).data)


def _missing_labels(
    path: Path, golden: GoldenSet, rows: list[tuple[str, str, str]], *, jsonl: bool = False
) -> Path:
    """A filled missing-labels file as the report writes it (CSV through ``bom_csv``, with a
    BOM as Excel keeps it; or JSONL), the question and chunk text from the set."""
    questions = golden.by_id()
    records: list[dict[str, Any]] = [
        {
            "question_id": qid,
            "type": questions[qid].type if qid in questions else "factual",
            "chunk_id": chunk,
            "rank": rank,
            "grade": 2,
            "reason": "the chunk states it",
            "question": questions[qid].question if qid in questions else "",
            "chunk_text": golden.corpus[chunk].text if chunk in golden.corpus else "",
            "confirmed": mark,
        }
        for rank, (qid, chunk, mark) in enumerate(rows, start=1)
    ]
    if jsonl:
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
    else:
        path.write_text(bom_csv(COLUMNS, [list(r.values()) for r in records]), encoding="utf-8")
    return path


def _accept(toml: Path, file: Path, *extra: str) -> int:
    return main(["--config", str(toml), "golden", "accept", str(file), *extra])


def _changed_lines(before: bytes, after: bytes) -> list[int]:
    old, new = before.split(b"\n"), after.split(b"\n")
    assert len(old) == len(new)  # line order and count kept
    return [n for n, (a, b) in enumerate(zip(old, new, strict=True), start=1) if a != b]


def test_japanese_labels_are_added_once_and_a_second_run_changes_no_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _copy(tmp_path, "sample")
    questions = tmp_path / "questions.jsonl"
    before = questions.read_bytes()
    golden = _golden(toml)
    q01, q06 = golden.by_id()["q01"], golden.by_id()["q06"]
    assert q01.relevant_chunks == ("pricing/yearly-plan",)
    rows = [
        ("q01", "pricing/monthly-plan", "yes"),
        ("q06", "restore/model-change", "Y"),
        ("q01", "pricing/yearly-plan", "✓"),  # already listed
        ("q04", "pricing/free-plan", "no"),
        ("q04", "pricing/free-trial", ""),  # not decided
    ]
    file = _missing_labels(tmp_path / "missing-labels.csv", golden, rows)
    assert _accept(toml, file) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"added 2 labels to {questions} (q01 + pricing/monthly-plan, q06 + "
        "restore/model-change); 1 already listed; 1 marked no; 1 not decided (confirmed left "
        "empty), skipped",
        "the golden set changed: the next run is not compared with runs on the old one (pin a "
        "new baseline after it), and an adapter is asked again",
    ]
    after = questions.read_bytes()
    assert _changed_lines(before, after) == [1, 6]  # q01 and q06; every other line identical
    assert after.split(b"\n")[0] == before.split(b"\n")[0].replace(
        b'"relevant_chunks": ["pricing/yearly-plan"]',
        b'"relevant_chunks": ["pricing/yearly-plan", "pricing/monthly-plan"]',
    )
    reloaded = _golden(toml)  # the written file loads
    assert reloaded.by_id()["q01"].relevant_chunks == (
        "pricing/yearly-plan",
        "pricing/monthly-plan",
    )
    assert reloaded.by_id()["q06"].relevant_chunks == (*q06.relevant_chunks, "restore/model-change")
    assert [q.id for q in reloaded.questions] == [q.id for q in golden.questions]
    assert reloaded.questions_hash != golden.questions_hash
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "corpus.jsonl",
        "judge.toml",
        "missing-labels.csv",
        "questions.jsonl",
    ]  # no staged file, no lock file left behind

    mtime = questions.stat().st_mtime_ns
    assert _accept(toml, file) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"no labels to add to {questions}; 3 already listed; 1 marked no; 1 not decided "
        "(confirmed left empty), skipped"
    ]
    assert questions.read_bytes() == after
    assert questions.stat().st_mtime_ns == mtime  # not even rewritten


def test_english_labels_from_jsonl_are_added_and_idempotent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _copy(tmp_path, "sample-en")
    questions = tmp_path / "questions.jsonl"
    before = questions.read_bytes()
    golden = _golden(toml)
    listed = golden.by_id()["q02"].relevant_chunks
    assert listed is not None
    other = next(c for c in golden.corpus if c.startswith("wifi/") and c not in listed)
    file = _missing_labels(
        tmp_path / "missing-labels.jsonl",
        golden,
        [("q02", other, "true"), ("q01", "wifi/bands", "false")],
        jsonl=True,
    )
    assert _accept(toml, file) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"added 1 label to {questions} (q02 + {other}); 0 already listed; 1 marked no"
    )
    after = questions.read_bytes()
    assert _changed_lines(before, after) == [2]
    assert _golden(toml).by_id()["q02"].relevant_chunks == (*listed, other)
    assert _accept(toml, file) == 0
    assert questions.read_bytes() == after
    assert capsys.readouterr().out.startswith(f"no labels to add to {questions}; 1 already")


def test_a_dry_run_says_what_would_change_and_writes_nothing_nor_locks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = _copy(tmp_path, "sample")
    questions = tmp_path / "questions.jsonl"
    before = questions.read_bytes()
    file = _missing_labels(
        tmp_path / "missing-labels.csv", _golden(toml), [("q03", "widgets/sizes", "yes")]
    )
    real = golden_pipeline.plan_label_edit
    locks: list[bool] = []

    def plan(*args: Any) -> Any:
        locks.append(lock_file(questions).exists())
        return real(*args)

    monkeypatch.setattr(golden_pipeline, "plan_label_edit", plan)
    assert _accept(toml, file, "--dry-run") == 0
    assert capsys.readouterr().out.splitlines() == [
        f"would add 1 label to {questions} (q03 + widgets/sizes); 0 already listed; 0 marked no",
        "nothing written (--dry-run); line(s) 3 would change",
    ]
    assert questions.read_bytes() == before
    assert _accept(toml, file) == 0  # for real: planned holding the file's lock
    assert locks == [False, True]
    assert questions.read_bytes() != before
    assert not lock_file(questions).exists()


def test_conflicts_exit_2_with_every_located_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _copy(tmp_path, "sample")
    questions = tmp_path / "questions.jsonl"
    before = questions.read_bytes()
    file = _missing_labels(
        tmp_path / "missing-labels.csv",
        _golden(toml),
        [
            ("q01", "pricing/monthly-plan", "yes"),  # fine, but not written either
            ("q05", "pricing/free-plan", "yes"),  # q05 is out of scope
            ("q01", "pricing/yearly-plan", "no"),  # listed
            ("q01", "pricing/monthly-plan", "no"),  # and yes on line 2
        ],
    )
    assert _accept(toml, file) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = captured.err.splitlines()
    assert errors[0].startswith(f"error: {file}:3: q05 pricing/free-plan is marked yes, but q05")
    assert f"{questions}:5" in errors[0]
    assert errors[1].startswith(f"error: {file}:4: q01 pricing/yearly-plan is marked no, but")
    assert errors[2] == (
        f"error: {file}:5: q01 pricing/monthly-plan is marked no here and yes at {file}:2; keep "
        "one of the two"
    )
    assert errors[3] == (
        f"error: nothing was written to {questions}; fix the rows above and run again"
    )
    assert questions.read_bytes() == before


def test_a_file_saved_between_the_read_and_the_write_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = _copy(tmp_path, "sample")
    questions = tmp_path / "questions.jsonl"
    file = _missing_labels(
        tmp_path / "missing-labels.csv", _golden(toml), [("q03", "widgets/sizes", "yes")]
    )
    real = golden_pipeline.plan_label_edit
    saved = questions.read_bytes() + b"\n"

    def plan_then_someone_saves(*args: Any) -> Any:
        edit = real(*args)
        questions.write_bytes(saved)  # an editor saves the file meanwhile
        return edit

    monkeypatch.setattr(golden_pipeline, "plan_label_edit", plan_then_someone_saves)
    assert _accept(toml, file) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {questions}: the file changed while the labels were being added (saved in an "
        "editor?); nothing was written: run judge golden accept again"
    ]
    assert questions.read_bytes() == saved


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("nope.csv", None, "nope.csv: file not found"),
        ("bad.csv", "question_id,chunk_id\n", "bad.csv:1: missing column(s) confirmed"),
    ],
)
def test_a_bad_confirmations_file_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str | None,
    expected: str,
) -> None:
    toml = _copy(tmp_path, "sample")
    file = tmp_path / name
    if content is not None:
        file.write_text(content, encoding="utf-8")
    assert _accept(toml, file) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {tmp_path / expected}")


def test_the_command_is_in_the_parser_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["golden", "accept", "--help"])
    assert exited.value.code == 0
    assert "--dry-run" in capsys.readouterr().out
