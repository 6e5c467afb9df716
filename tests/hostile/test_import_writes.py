"""`judge import --replace` writes in place of its files, not over them (issue 34, class 4):
a symlink (files kept in a shared place) stays a link and its target gets the new text, the
mode is kept, a read-only file is refused before anything is written; a staging folder a killed
import left is removed by the next import."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.pipeline.imports import import_foreign
from tests.conftest import dead_pid
from tests.inputs.foreign.samples import DATA


def test_replace_over_a_symlink_keeps_the_link_and_the_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    out = tmp_path / "out"
    import_foreign("ragas", DATA / "ragas.jsonl", shared)
    out.mkdir()
    for name in ("questions.jsonl", "corpus.jsonl", "run.jsonl"):
        (shared / name).chmod(0o600)
        (out / name).symlink_to(shared / name)
    import_foreign("deepeval", DATA / "deepeval.json", out, replace=True)
    for name in ("questions.jsonl", "corpus.jsonl", "run.jsonl"):
        assert (out / name).is_symlink()
        assert os.readlink(out / name) == str(shared / name)
        assert stat.S_IMODE((shared / name).stat().st_mode) == 0o600
    assert "deepeval import" in (shared / "run.jsonl").read_text(encoding="utf-8")
    assert sorted(p.name for p in shared.iterdir()) == [
        "corpus.jsonl",
        "questions.jsonl",
        "run.jsonl",
    ]


def test_replace_refuses_a_read_only_file_before_writing_any(tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_foreign("ragas", DATA / "ragas.jsonl", out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (out / "run.jsonl").chmod(0o444)
    with pytest.raises(InputError) as caught:
        import_foreign("deepeval", DATA / "deepeval.json", out, replace=True)
    (line,) = caught.value.problems
    assert line.startswith(f"{out / 'run.jsonl'}: read-only (mode 0444), so nothing was written")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_staging_folder_a_killed_import_left_is_removed_by_the_next(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    stale = out / f".import.{dead_pid()}.partial"
    stale.mkdir()
    (stale / "run.jsonl").write_text("half", encoding="utf-8")
    alive = out / f".import.{os.getppid()}.partial"  # a running process's: left alone
    alive.mkdir()
    import_foreign("ragas", DATA / "ragas.jsonl", out)
    assert not stale.exists()
    assert alive.is_dir()
    assert sorted(p.name for p in out.iterdir()) == [
        alive.name,
        "corpus.jsonl",
        "questions.jsonl",
        "run.jsonl",
    ]
