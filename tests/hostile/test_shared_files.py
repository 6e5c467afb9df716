"""Files that more than one command writes, and outputs named by the second they started.

Classes of the hardening matrix (issue 20), each with a case per file or command that shares it:

- **two writers at once** (two real ``python -m judge`` processes, or two processes of
  ``multiprocessing``): two ``judge audit import`` keep both reviewers' labels; an import
  during a ``judge audit label`` session goes through at once and loses no label; two baseline
  pins, two history appends and two ``judge stability`` (which share the verdict cache) each
  keep what both wrote;
- **a last line without its newline**: ``judge audit label``, ``judge audit import`` and a
  history append each leave a file every command reads, never a label glued onto a line;
- **two outputs in the same second**: ``judge stability`` reports, sweep folders, batch
  exports and report folders each get a name of their own (``<time>-2``), never one file;
- **written in place of a file, not over it** (issue 34): ``judge bars suggest --write`` into a
  ``judge.toml`` that is a symlink keeps the link and writes its target, with its mode 0600;
  ``judge golden accept`` refuses a read-only (0444) questions file in one line, writing
  nothing; the copy and the lock a killed ``golden accept`` left are removed by the next one.

Every process here judges with the lexical backend (no model).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.formatting import timestamp
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels
from judge.io.lock import Busy, lock_file, locked
from judge.io.write import claim_unique
from judge.record.store import ReportsDir
from judge.results.history import append_history, load_history
from tests.conftest import REPO, history_entry, run_lexical

Tiny = Callable[..., Config]
HASHES = [f"{n:064x}" for n in range(1, 41)]
"""Answers labelled in the sheets: 40 per question (their text is not in the sheet)."""


def _judge(toml: Path, *command: str, stdin: str | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judge", "--config", str(toml), *command],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str], stdin: str | None = None) -> tuple[int, str, str]:
    out, err = process.communicate(stdin, timeout=120)
    return process.returncode, out, err


def _sheet(path: Path, labeller: str, scores: tuple[int, int]) -> Path:
    """A filled sheet: every golden question's 40 answers, scored by ``labeller``."""
    rows = ["question_id,answer_sha256,faithfulness,relevance,labeller,note"]
    for qid in ("q1", "q2", "q3", "q4"):
        rows += [f"{qid},{h},{scores[0]},{scores[1]},{labeller}," for h in HASHES]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _many_labels(path: Path, n: int) -> None:
    """``n`` labels of a third labeller, so that reading the file takes each import a while
    (the two imports then overlap, as two reviewers' imports of a large file do)."""
    line = {"question_id": "q1", "faithfulness": 2, "relevance": 2, "labeller": "old"}
    path.write_text(
        "".join(
            json.dumps({**line, "answer_sha256": f"{n + 1000 + i:064x}"}) + "\n" for i in range(n)
        ),
        encoding="utf-8",
    )


def _labels_config(tiny: Tiny, tmp_path: Path) -> tuple[Config, Path, Path]:
    labels = tmp_path / "labels.jsonl"
    config = tiny(extra_toml=f'labels = "{labels}"\n')
    assert config.source is not None
    return config, config.source, labels


# --- two writers at once ------------------------------------------------------------------------


def test_two_audit_imports_at_once_keep_both_reviewers_labels(tiny: Tiny, tmp_path: Path) -> None:
    config, toml, labels = _labels_config(tiny, tmp_path)
    _many_labels(labels, 20_000)
    ana = _sheet(tmp_path / "ana.csv", "ana", (2, 2))
    bo = _sheet(tmp_path / "bo.csv", "bo", (1, 1))
    first = _judge(toml, "audit", "import", str(ana))
    second = _judge(toml, "audit", "import", str(bo))
    for process in (first, second):
        code, out, err = _finish(process)
        assert code == 0, err
        assert "160 added" in out
    kept = load_labels(labels, load_golden(config.data).by_id()).current
    by_labeller = {name: sum(1 for lab in kept if lab.labeller == name) for name in ("ana", "bo")}
    assert by_labeller == {"ana": 160, "bo": 160}
    assert len(kept) == 20_000 + 320
    assert not lock_file(labels).exists()  # released and removed


def test_an_import_during_a_terminal_labelling_session_goes_through_at_once_and_loses_no_label(
    tiny: Tiny, tmp_path: Path
) -> None:
    """``judge audit label`` appends each label as it is given, under the labels file's lock
    held for that append only: an import meanwhile neither waits for the session to end (it
    used to wait 30 s, then be refused) nor drops what the session wrote, and the session's
    next label lands in the file the import wrote."""
    config, toml, labels = _labels_config(tiny, tmp_path)
    assert run_lexical(config) == 0
    session = _judge(toml, "audit", "label", "--labeller", "cy", stdin="")
    assert session.stdin is not None
    # Two items labelled; the session then waits for the third.
    session.stdin.write("2\n2\n\n1\n1\n\n")
    session.stdin.flush()
    _wait_until(
        lambda: (
            session.poll() is not None
            or (labels.exists() and len(labels.read_text(encoding="utf-8").splitlines()) >= 2)
        )
    )
    assert session.poll() is None, session.communicate()
    importer = _judge(toml, "audit", "import", str(_sheet(tmp_path / "ana.csv", "ana", (2, 2))))
    code, out, err = _finish(importer)  # while the session still waits for its third item
    assert code == 0, err
    assert "160 added" in out
    assert session.poll() is None  # the import did not wait for the session to end
    code, _, err = _finish(session, "2\n1\n\nq\n")  # a third label, after the import
    assert code == 0, err
    kept = load_labels(labels, load_golden(config.data).by_id()).current
    assert sum(1 for lab in kept if lab.labeller == "cy") == 3
    assert sum(1 for lab in kept if lab.labeller == "ana") == 160
    assert not lock_file(labels).exists()  # released between labels and removed


def test_a_command_that_cannot_get_a_shared_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    holder = multiprocessing.get_context("spawn").Process(target=_hold, args=(path, 5.0))
    holder.start()
    try:
        _wait_until(lambda: lock_file(path).exists() and lock_file(path).read_text().strip())
        with pytest.raises(Busy) as caught, locked(path, wait_s=0.2):
            pass
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith(f"{path}: another judge command (pid {holder.pid}) is writing")
        assert "run this again" in message
    finally:
        holder.terminate()
        holder.join()
    with locked(path, wait_s=1.0):  # the holder died: its lock went with it
        pass


def _hold(path: Path, seconds: float) -> None:
    import time

    with locked(path):
        time.sleep(seconds)


def _wait_until(condition: Callable[[], object]) -> None:
    import time

    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _append(path: str, folders: list[str]) -> None:
    for name in folders:
        append_history(Path(path), history_entry(name))


def test_two_processes_appending_history_keep_every_line(tmp_path: Path) -> None:
    """A line beyond MAX_ENTRIES or after a torn one rewrites the file: unlocked, it would
    replace the file under the other process's append."""
    path = tmp_path / "history.jsonl"
    path.write_text('{"folder": "torn', encoding="utf-8")  # a crash mid-append
    spawn = multiprocessing.get_context("spawn")
    writers = [
        spawn.Process(target=_append, args=(str(path), [f"{who}{i}" for i in range(30)]))
        for who in ("a", "b")
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)
        assert writer.exitcode == 0
    history = load_history(path)
    assert history.warnings == []
    assert sorted(e.folder for e in history.entries) == sorted(
        [f"a{i}" for i in range(30)] + [f"b{i}" for i in range(30)]
    )


def test_two_baseline_pins_at_once_pin_once_and_refuse_the_other(
    tiny: Tiny, tmp_path: Path
) -> None:
    config, toml, _ = _labels_config(tiny, tmp_path)
    assert run_lexical(config) == 0
    pins = [_judge(toml, "baseline", "pin"), _judge(toml, "baseline", "pin")]
    results = [_finish(p) for p in pins]
    assert sorted(code for code, _, _ in results) == [0, 2], results
    refused = next(err for code, _, err in results if code == 2)
    assert refused.count("\n") == 1 and "exists; 'judge baseline ratchet' raises it" in refused
    ratchets = [_judge(toml, "baseline", "ratchet"), _judge(toml, "baseline", "ratchet")]
    for process in ratchets:
        code, _, err = _finish(process)
        assert code == 0, err
    pinned = json.loads(config.reports.baseline.read_text(encoding="utf-8"))
    assert len(pinned["pinned_from"]) == 3  # the pin, then each ratchet on top of the other


def test_two_stability_checks_at_once_keep_two_reports(tiny: Tiny, tmp_path: Path) -> None:
    """Both start in the same second (most often): each keeps its report, and both write the
    one verdict cache (SQLite in WAL mode, a busy timeout for the writers)."""
    config, toml, _ = _labels_config(tiny, tmp_path)
    command = ("stability", "--backend", "lexical", "--sample", "3")
    checks = [_judge(toml, *command), _judge(toml, *command)]
    outputs = [_finish(check) for check in checks]
    for code, _, err in outputs:
        assert code == 0, err
    reports = sorted((config.reports.dir / "stability").glob("*.md"))
    assert len(reports) == 2
    said = sorted(out.strip().splitlines()[-1] for _, out, _ in outputs)
    assert said == sorted(f"report: {path}" for path in reports)
    assert all(path.read_text(encoding="utf-8").strip() for path in reports)


# --- a last line without its newline -------------------------------------------------------------


def _unterminated(labels: Path) -> None:
    line = {"question_id": "q1", "faithfulness": 2, "relevance": 2, "labeller": "old"}
    labels.write_text(json.dumps({**line, "answer_sha256": HASHES[0]}), encoding="utf-8")


def test_terminal_labelling_on_a_file_without_a_final_newline_leaves_it_readable(
    tiny: Tiny, tmp_path: Path
) -> None:
    config, toml, labels = _labels_config(tiny, tmp_path)
    assert run_lexical(config) == 0
    _unterminated(labels)
    code, _, err = _finish(_judge(toml, "audit", "label", "--labeller", "bo", stdin=""), "2\n1\n\n")
    assert code == 0, err
    kept = load_labels(labels, load_golden(config.data).by_id()).current
    assert sorted((lab.labeller, lab.faithfulness, lab.relevance) for lab in kept) == [
        ("bo", 2, 1),
        ("old", 2, 2),
    ]
    assert labels.read_text(encoding="utf-8").count("\n") == 2
    assert main(["--config", str(toml), "check", "--no-judge"]) == 0  # every command reads it
    assert main(["--config", str(toml), "audit"]) == 0


def test_an_import_into_a_file_without_a_final_newline_keeps_every_label(
    tiny: Tiny, tmp_path: Path
) -> None:
    config, toml, labels = _labels_config(tiny, tmp_path)
    _unterminated(labels)
    sheet = _sheet(tmp_path / "ana.csv", "ana", (1, 2))
    assert main(["--config", str(toml), "audit", "import", str(sheet)]) == 0
    kept = load_labels(labels, load_golden(config.data).by_id()).current
    assert len(kept) == 161
    assert labels.read_text(encoding="utf-8").endswith("}\n")


def test_a_history_append_after_a_last_line_without_its_newline_is_a_line_of_its_own(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(history_entry("first").model_dump_json(), encoding="utf-8")
    append_history(path, history_entry("second"))
    assert [e.folder for e in load_history(path).entries] == ["first", "second"]


# --- two outputs in the same second ------------------------------------------------------------


def test_a_claimed_name_is_never_given_twice(tmp_path: Path) -> None:
    stamp = timestamp(datetime(2026, 12, 1, 16, 58, tzinfo=UTC))
    files = [claim_unique(tmp_path, stamp, ".md") for _ in range(3)]
    assert [f.name for f in files] == [f"{stamp}.md", f"{stamp}-2.md", f"{stamp}-3.md"]
    folders = [claim_unique(tmp_path / "sweeps", stamp, folder=True) for _ in range(2)]
    assert [f.name for f in folders] == [stamp, f"{stamp}-2"]
    assert all(f.is_dir() for f in folders)


def _claim(parent: str, stem: str, out: multiprocessing.Queue[str]) -> None:
    for _ in range(20):
        out.put(claim_unique(Path(parent), stem, ".md").name)


def test_processes_claiming_the_same_second_get_distinct_names(tmp_path: Path) -> None:
    spawn = multiprocessing.get_context("spawn")
    names: multiprocessing.Queue[str] = spawn.Queue()
    workers = [spawn.Process(target=_claim, args=(str(tmp_path), "t", names)) for _ in range(2)]
    for worker in workers:
        worker.start()
    got = [names.get(timeout=60) for _ in range(40)]
    for worker in workers:
        worker.join(timeout=60)
    assert len(set(got)) == 40


def test_two_sweeps_in_the_same_second_keep_two_folders(tmp_path: Path) -> None:
    from judge.pipeline.sweep import _new_sweep_folder, _write_folder

    moment = datetime(2026, 12, 1, 16, 58, tzinfo=UTC)
    first = _new_sweep_folder(tmp_path, moment)
    second = _new_sweep_folder(tmp_path, moment)
    _write_folder(second, {"sweep.md": "second\n"})
    _write_folder(first, {"sweep.md": "first\n"})
    assert (first / "sweep.md").read_text(encoding="utf-8") == "first\n"
    assert (second / "sweep.md").read_text(encoding="utf-8") == "second\n"
    assert second.name == f"{timestamp(moment)}-2"


def test_two_batch_exports_in_the_same_second_keep_two_folders(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judge.pipeline import batch

    moment = datetime(2026, 12, 1, 16, 58, tzinfo=UTC)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Frozen:  # type: ignore[override]
            return cls.fromtimestamp(moment.timestamp(), UTC)

    monkeypatch.setattr(batch, "datetime", Frozen)
    config = tiny()
    first = batch.export_batch(config)
    second = batch.export_batch(config)
    assert first.out_dir != second.out_dir
    assert second.out_dir.name == f"{first.out_dir.name}-2"
    assert first.manifest is not None and first.manifest.is_file()
    assert second.manifest is not None and second.manifest.is_file()


def test_two_report_folders_of_the_same_second_get_two_names(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path)
    moment = datetime(2026, 12, 1, 16, 58, tzinfo=UTC)
    first = reports.new_folder_name("judge:abcdef0123", moment, [])
    (tmp_path / first).mkdir()
    second = reports.new_folder_name("judge:abcdef0123", moment, [])
    assert (first, second) == (f"{timestamp(moment)}-abcdef01", f"{timestamp(moment)}-abcdef01-2")


# --- written in place of a file, not over it ----------------------------------------------------


def _leftovers(folder: Path, name: str) -> list[str]:
    """The hidden files beside ``name``: its temporary copies and its lock."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


def test_bars_written_into_a_symlinked_config_keep_the_link_and_its_mode(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    target = config.source
    assert target is not None
    target.chmod(0o600)
    (tmp_path / "mine").mkdir()
    link = tmp_path / "mine" / "judge.toml"  # a shared configuration, linked
    link.symlink_to(target)
    before = target.read_bytes()
    assert main(["--config", str(link), "bars", "suggest", "--write"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes().startswith(before) and load_config(link).bars
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert _leftovers(tmp_path, "judge.toml") == _leftovers(tmp_path / "mine", "judge.toml") == []
    target.chmod(0o400)  # read-only now: refused in one line, the file as it was
    written = target.read_bytes()
    capsys.readouterr()
    assert main(["--config", str(link), "bars", "suggest", "--write", "--replace"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{link} (a link to {target}): read-only (mode 0400), so nothing was written" in err
    assert target.read_bytes() == written


def _confirmations(path: Path) -> Path:
    """A reviewer's yes for a chunk q1 does not list yet."""
    record = {"question_id": "q1", "chunk_id": "pricing/trial", "confirmed": True}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_golden_accept_refuses_a_read_only_questions_file_in_one_line(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused by its mode bits: these tests run as root, who may write a 0444 file."""
    config = tiny()
    assert config.source is not None
    questions = config.data.questions
    questions.chmod(0o444)
    before = questions.read_bytes()
    file = _confirmations(tmp_path / "confirmed.jsonl")
    assert main(["--config", str(config.source), "golden", "accept", str(file)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {questions}: read-only (mode 0444), so nothing was written; allow writing to it "
        f"(chmod u+w {questions}) and run this again\n"
    )
    assert questions.read_bytes() == before
    assert stat.S_IMODE(questions.stat().st_mode) == 0o444
    assert _leftovers(tmp_path, "questions.jsonl") == []


_KILLED_MID_WRITE = """
import sys, time
from pathlib import Path
from judge.io.lock import locked
from judge.io.write import write_atomic

def check(copy: Path) -> None:
    print("ready", flush=True)
    time.sleep(120)

path = Path(sys.argv[1])
with locked(path, doing="editing"):
    write_atomic(path, path.read_text(encoding="utf-8") + "half", check=check)
"""


def test_the_copy_and_lock_of_a_killed_accept_are_removed_by_the_next_one(
    tiny: Tiny, tmp_path: Path
) -> None:
    config = tiny()
    assert config.source is not None
    questions = config.data.questions
    before = questions.read_bytes()
    writer = subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_WRITE, str(questions)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    writer.kill()  # SIGKILL: no finally, no atexit
    writer.wait()
    writer.stdout.close()
    older = tmp_path / f".questions.jsonl.{writer.pid}.accept"  # an earlier release's copy
    older.write_bytes(before)
    assert _leftovers(tmp_path, "questions.jsonl") == sorted(
        [older.name, f".questions.jsonl.{writer.pid}.tmp", lock_file(questions).name]
    )
    assert questions.read_bytes() == before
    file = _confirmations(tmp_path / "confirmed.jsonl")
    assert main(["--config", str(config.source), "golden", "accept", str(file)]) == 0
    assert _leftovers(tmp_path, "questions.jsonl") == []
    q1 = load_golden(config.data).by_id()["q1"]
    assert q1.relevant_chunks == ("pricing/plans", "pricing/trial")
