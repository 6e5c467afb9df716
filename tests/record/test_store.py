"""The record's store (``judge.record.store``): report.json is the record's dump, refused when its
reader would refuse it; a folder reads back into the same record; the reports directory
resolves folders, reads their records and publishes a new one whole."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.judging.types import ContextChunk, Verdict
from judge.pipeline.evaluate import evaluate
from judge.record.model import QuestionRow
from judge.record.store import (
    ReportFolder,
    ReportsDir,
    read_gate,
    read_record,
    read_saved_verdicts,
    record_json,
)
from judge.results.item_record import ItemRecord
from tests.conftest import QUESTIONS, RUN, history_entry, run_lexical

Tiny = Callable[..., Config]


def test_a_folder_reads_back_into_the_record_it_was_written_from(tiny: Tiny) -> None:
    evaluate(tiny(), backend="lexical")  # an earlier run, so the second has comparisons
    result = evaluate(tiny(), backend="lexical")
    record = result.report
    assert record.comparisons and all(c.baseline for c in record.comparisons)
    back = read_record(result.folder.path)
    # Everything but what lives in memory only (the audit object).
    assert back.model_dump(mode="json") == record.model_dump(mode="json")
    assert back.gate.verdict == record.gate.verdict
    assert [row.question_id for row in back.questions] == [q.question_id for q in record.questions]
    assert back.audit is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("half a character \ud800", "lone UTF-16 surrogate"),
        (10**5000, "an integer has more than 4300 digits"),
    ],
    ids=["lone-surrogate", "5000-digit-integer"],
)
def test_a_record_its_reader_would_refuse_is_not_written(
    tiny: Tiny, value: object, problem: str
) -> None:
    record = evaluate(tiny(), backend="lexical").report
    meta = record.manifest.run.meta.model_copy(update={"chunking": {"x": value}})
    run = record.manifest.run.model_copy(update={"meta": meta})
    manifest = record.manifest.model_copy(update={"run": run})
    broken = record.model_copy(update={"manifest": manifest})
    with pytest.raises(InputError, match=problem) as caught:
        record_json(broken)
    (line,) = caught.value.problems
    assert line.startswith(f"{record.manifest.folder}: the report.json is not written: ")


def test_a_record_over_the_size_limit_is_not_written(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured in bytes of UTF-8: a file exactly at the limit is written, a byte more is not."""
    import judge.record.store

    record = evaluate(tiny(), backend="lexical").report
    data = record_json(record)
    assert not data.isascii()  # Japanese: its bytes are not its characters
    size = len(data)
    mb = 1024 * 1024
    kind = judge.record.store.REPORT_FILE
    monkeypatch.setattr(judge.record.store, "REPORT_FILE", kind._replace(max_mb=size / mb))
    assert record_json(record) == data  # exactly at the limit: written
    monkeypatch.setattr(judge.record.store, "REPORT_FILE", kind._replace(max_mb=(size - 1) / mb))
    with pytest.raises(InputError, match=r"MB limit for a report\.json") as caught:
        record_json(record)
    (line,) = caught.value.problems
    assert line.startswith(f"{record.manifest.folder}: the report.json is not written: it is ")


def test_nesting_its_reader_would_refuse_is_not_written_either(tiny: Tiny) -> None:
    """JSON nested deeper than it can be written (here in the judge fingerprint's parts, JSON
    of a shape the record does not fix): one located line, no traceback."""
    record = evaluate(tiny(), backend="lexical").report
    deep: object = 1
    for _ in range(600):  # deeper than pydantic's serializer goes (the reader would go on)
        deep = [deep]
    prints = record.manifest.fingerprints.model_copy(update={"judge_parts": {"x": deep}})
    broken = record.model_copy(
        update={"manifest": record.manifest.model_copy(update={"fingerprints": prints})}
    )
    with pytest.raises(InputError, match="nested too deeply"):
        record_json(broken)


def test_report_json_is_the_serializers_dump_of_the_record(tiny: Tiny) -> None:
    """report.json is pydantic's own compact dump of the record, derived keys included (no
    text assembled by hand), each row without the item and verdict that items.jsonl and
    verdicts.jsonl hold, and reads back into the same record."""
    result = evaluate(tiny(), backend="lexical")
    text = (result.folder.path / "report.json").read_text(encoding="utf-8")
    referenced = {
        i: {"item", "verdict"} if row.item is not None else {"verdict"}
        for i, row in enumerate(result.report.questions)
        if row.verdict is not None
    }
    assert referenced
    dump = result.report.model_dump_json(by_alias=True, exclude={"questions": referenced})
    assert text == dump + "\n"
    assert text.startswith('{"format_version":4,"manifest":{') and text.count("\n") == 1
    rows = json.loads(text)["questions"]
    assert [row["question_id"] for row in rows] == [q.question_id for q in result.report.questions]
    assert read_record(result.folder.path) == result.report


def _joined(path: Path) -> list[ItemRecord]:
    """items.jsonl with each chunk named by id given its text from chunks.jsonl."""
    texts = {
        c["chunk_id"]: c["text"]
        for c in map(json.loads, (path / "chunks.jsonl").read_text("utf-8").splitlines())
    }
    items = []
    for line in (path / "items.jsonl").read_text("utf-8").splitlines():
        item = json.loads(line)
        for chunk in item["context"]:
            chunk.setdefault("text", texts[chunk["chunk_id"]])
        items.append(ItemRecord.model_validate(item))
    return items


def test_a_row_references_its_item_and_verdict_which_the_jsonl_files_hold(tiny: Tiny) -> None:
    """report.json's row leaves out the item and verdict that items.jsonl and verdicts.jsonl
    hold (those without the unset optional fields, each chunk by id, its text once in
    chunks.jsonl): the row keeps the model's field order, and a question text holding what
    the row's JSON looks like around its item changes nothing."""
    first = {**QUESTIONS[0], "question": QUESTIONS[0]["question"] + ' ,"failure": null, \\'}
    result = evaluate(tiny(questions=[first, *QUESTIONS[1:]]), backend="lexical")
    path = result.folder.path
    data = json.loads((path / "report.json").read_text(encoding="utf-8"))
    rows = data["questions"]
    fields = [f for f in QuestionRow.model_fields if f not in ("item", "verdict")]
    assert [list(row) for row in rows] == [fields] * len(rows)
    assert rows[0]["question"] == first["question"]
    items = (path / "items.jsonl").read_text("utf-8").splitlines()
    verdicts = (path / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
    # The JSONL lines leave out the unset optional fields, which read back as the same values.
    assert _joined(path) == result.report.items
    assert [Verdict.model_validate_json(line) for line in verdicts] == result.report.verdicts
    assert all('":null' not in line for line in [*items, *verdicts])
    assert all('"text"' not in line for line in items)  # every chunk by id
    chunks = (path / "chunks.jsonl").read_text("utf-8").splitlines()
    shown = {c.chunk_id: c.text for item in result.report.items for c in item.context}
    assert sorted(chunks) == sorted(
        json.dumps({"chunk_id": k, "text": v}, ensure_ascii=False, separators=(",", ":"))
        for k, v in shown.items()
    )
    assert read_record(path) == result.report


def test_a_folders_values_are_its_records_and_read_without_the_record(tiny: Tiny) -> None:
    # values.json holds what the comparisons read (Record.values), so a later run reads a few
    # numbers per question rather than validating a whole record; a folder without it (written
    # earlier in this format) falls back to its record.
    config = tiny()
    assert run_lexical(config) == 0
    reports = ReportsDir(config.reports.dir)
    folder = reports.folder(None)
    from_file = folder.values()
    assert folder._record is None  # the record was not read
    assert from_file == folder.record().values()
    (folder.path / "values.json").unlink()
    assert ReportsDir(config.reports.dir).folder(None).values() == from_file


def test_a_folders_gate_is_read_alone_with_the_records_checks(tiny: Tiny) -> None:
    # A later run's notes of the falls that ended read only the last run's gate (issue 35: the
    # whole record of 10,000 questions took ten times longer to validate): the same gate, the
    # same refusals of the file (version, JSON) in the same located line.
    evaluate(tiny(), backend="lexical")
    path = evaluate(tiny(), backend="lexical").folder.path
    assert read_gate(path) == read_record(path).gate
    report = path / "report.json"
    data = json.loads(report.read_text(encoding="utf-8"))
    data["questions"][0]["question"] = 5  # rows are not the gate's: it still reads
    report.write_text(json.dumps(data), encoding="utf-8")
    before = read_gate(path)
    with pytest.raises(ConfigError):
        read_record(path)
    assert read_gate(path) == before
    lone = json.dumps(data).replace('"question": 5', '"question": "half \\ud800"', 1)
    huge = json.dumps(data).replace('"question": 5', '"question": ' + "9" * 5000, 1)
    assert lone != huge != json.dumps(data)
    for broken in ({**data, "format_version": 999}, "{not json", lone, huge):
        report.write_text(broken if isinstance(broken, str) else json.dumps(broken), "utf-8")
        with pytest.raises(ConfigError) as gate_error:
            read_gate(path)
        with pytest.raises(ConfigError) as record_error:
            read_record(path)
        assert str(gate_error.value) == str(record_error.value)
        assert str(gate_error.value).count("\n") == 0 and "report.json" in str(gate_error.value)


def test_no_latest_folder_before_the_first_run(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path / "reports")
    with pytest.raises(ConfigError, match="no runs in") as caught:
        reports.folder(None)
    assert str(caught.value) == f"no runs in {tmp_path / 'reports'} yet; run 'judge run' first"


def test_latest_a_name_and_a_path_resolve_to_the_same_folder(tiny: Tiny) -> None:
    config = tiny()
    result = evaluate(config, backend="lexical")
    reports = ReportsDir(config.reports.dir)
    by_latest = reports.folder(None)
    by_name = reports.folder(result.folder.name)
    by_path = reports.folder(str(result.folder.path))
    assert by_latest.path == by_name.path == by_path.path == config.reports.dir / result.folder.name
    assert by_latest.manifest == by_name.manifest == by_path.manifest
    with pytest.raises(ConfigError, match="not a report folder"):
        reports.folder("19700101T000000Z-00000000")


def test_items_are_typed_records_of_what_the_judge_saw(tiny: Tiny) -> None:
    config = tiny()
    folder = evaluate(config, backend="lexical").folder
    items = folder.items()
    assert list(items) == ["q1", "q2", "q3", "q4"]
    q2 = items["q2"]
    assert isinstance(q2, ItemRecord)
    assert q2.type == "procedural" and q2.split == "tune"
    assert q2.answer == RUN[2]["answer"]
    assert all(isinstance(c, ContextChunk) for c in q2.context)
    # context_k is 5 by default: all three chunks q2's run retrieved, in rank order.
    assert [(c.rank, c.chunk_id) for c in q2.context] == [
        (1, "backup/auto"),
        (2, "widgets/sizes"),
        (3, "backup/restore"),
    ]
    assert q2.context[2].text.startswith("1. 設定を開きます。")
    assert q2.relevant_chunks == ["backup/restore", "backup/auto"]
    assert items["q4"].relevant_chunks == []
    assert q2.labels == []
    assert set(folder.verdicts()) == {"q1", "q2", "q3", "q4"}


def test_publish_leaves_no_partial_folder_and_points_latest_at_it(tiny: Tiny) -> None:
    config = tiny()
    first = evaluate(config, backend="lexical").folder
    second = evaluate(config, backend="lexical").folder
    assert first.name != second.name
    reports = config.reports.dir
    assert list(reports.glob("*.partial")) == list(reports.glob(".*.partial")) == []
    assert (reports / "latest").read_text(encoding="utf-8") == second.name + "\n"
    assert [e.folder for e in ReportsDir(reports).history()] == [first.name, second.name]
    assert {"manifest.json", "items.jsonl", "verdicts.jsonl", "run.jsonl", "report.md"} <= {
        p.name for p in second.path.iterdir()
    }


def test_new_folder_name_adds_a_suffix_when_the_name_is_taken(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path)
    now = datetime(2026, 11, 29, 13, 5, 28, tzinfo=UTC)
    fingerprint = "h1:4f71d269aabbccdd"
    name = reports.new_folder_name(fingerprint, now)
    assert name == "20261129T130528Z-4f71d269"
    (tmp_path / name).mkdir()
    assert reports.new_folder_name(fingerprint, now) == "20261129T130528Z-4f71d269-2"
    (tmp_path / "20261129T130528Z-4f71d269-2").mkdir()
    assert reports.new_folder_name(fingerprint, now) == "20261129T130528Z-4f71d269-3"


def test_publish_replaces_a_stale_partial_folder_of_this_process(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path / "reports")
    name = "20261129T130528Z-4f71d269"
    stale = tmp_path / "reports" / f".{name}.{os.getpid()}.partial"
    stale.mkdir(parents=True)
    (stale / "left-over.txt").write_text("from a crashed attempt", encoding="utf-8")
    entry = history_entry(name, started_at="2026-11-29T13:05:28+00:00")
    folder = reports.publish(name, {"report.md": "# Report\n"}, entry)
    assert folder.path == tmp_path / "reports" / name
    assert sorted(p.name for p in folder.path.iterdir()) == ["report.md"]
    assert not stale.exists()
    assert sorted(p.name for p in reports.path.iterdir()) == [name, "history.jsonl", "latest"]
    assert (reports.path / "latest").read_text(encoding="utf-8") == name + "\n"
    assert reports.history() == [entry]


def test_publish_writes_files_as_they_are_rendered_and_leaves_nothing_on_a_failure(
    tmp_path: Path,
) -> None:
    """Files given as (name, text) pairs are written one at a time, each before the next is
    rendered (``judge.report.files.folder_files``); a file that cannot be rendered leaves no
    partial folder, no history line and no pointer."""
    reports = ReportsDir(tmp_path / "reports")
    name = "20261129T130528Z-4f71d269"
    entry = history_entry(name, started_at="2026-11-29T13:05:28+00:00")
    written: list[list[str]] = []

    def files(fail: bool) -> Iterator[tuple[str, str]]:
        yield "report.md", "# 報告\n"
        partial = tmp_path / "reports" / f".{name}.{os.getpid()}.partial"
        written.append(sorted(p.name for p in partial.iterdir()))
        if fail:
            raise InputError(["review.html: cannot be rendered"])
        yield "review.html", "<html></html>\n"

    with pytest.raises(InputError):
        reports.publish(name, files(fail=True), entry)
    assert written == [["report.md"]]
    assert sorted(p.name for p in reports.path.iterdir()) == []
    folder = reports.publish(name, files(fail=False), entry)
    assert sorted(p.name for p in folder.path.iterdir()) == ["report.md", "review.html"]
    assert reports.history() == [entry]


def test_publish_removes_the_partial_folder_of_a_run_that_died(tiny: Tiny) -> None:
    from judge.pipeline.evaluate import evaluate

    config = tiny()
    config.reports.dir.mkdir(parents=True)
    dead = config.reports.dir / ".20261129T000000Z-deadbeef.99999.partial"
    dead.mkdir()
    (dead / "manifest.json").write_text("{", encoding="utf-8")
    evaluate(config, backend="lexical")
    assert not dead.exists()
    assert [p.name for p in config.reports.dir.glob(".*.partial")] == []


def test_latest_is_a_name_too(tiny: Tiny) -> None:
    from judge.pipeline.evaluate import evaluate

    config = tiny()
    folder = evaluate(config, backend="lexical").folder
    reports = ReportsDir(config.reports.dir)
    assert reports.folder("latest").path == folder.path == reports.folder(None).path


# --- a report folder: found, read, named and published (was judge.folders) ---------------

NOW = datetime(2026, 12, 1, 16, 58, 0, tzinfo=UTC)
FINGERPRINT = "h1:0123456789abcdef"


@pytest.fixture
def judged(tiny: Tiny) -> tuple[ReportsDir, str]:
    """The tiny set judged once by the lexical baseline: its reports directory and the folder
    name ``latest`` holds."""
    config = tiny()
    assert run_lexical(config) == 0
    reports = ReportsDir(config.reports.dir)
    return reports, (reports.path / "latest").read_text(encoding="utf-8").strip()


def test_no_latest_run_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path / "reports")
    for name in (None, "latest"):
        with pytest.raises(ConfigError) as caught:
            reports.folder(name)
        assert str(caught.value) == f"no runs in {reports.path} yet; run 'judge run' first"


def test_a_folder_without_a_manifest_is_refused_by_name(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path)
    (tmp_path / "half").mkdir()
    with pytest.raises(ConfigError) as caught:
        reports.folder("half")
    assert str(caught.value) == f"half: not a report folder (no manifest.json); see 'ls {tmp_path}'"


def test_the_latest_a_name_and_a_path_find_the_same_folder(judged: tuple[ReportsDir, str]) -> None:
    reports, name = judged
    latest = reports.folder(None)
    assert latest.name == name and latest.path == reports.path / name
    assert reports.folder("latest").path == latest.path
    assert reports.folder(name).path == latest.path
    assert reports.folder(str(latest.path)).path == latest.path
    assert latest.run_path == latest.path / "run.jsonl" and latest.run_path.is_file()
    assert reports.runs_dir == reports.path / "runs"
    assert reports.history_path == reports.path / "history.jsonl"


def test_a_folders_record_is_read_once_and_gives_items_and_verdicts_in_order(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, _ = judged
    folder = reports.folder(None)
    record = folder.record()
    assert folder.record() is record  # read once
    assert list(folder.items()) == ["q1", "q2", "q3", "q4"]
    assert list(folder.verdicts()) == ["q1", "q2", "q3", "q4"]
    assert folder.items()["q2"].question_id == "q2"
    assert folder.manifest.judge.backend == "lexical"
    # verdicts.jsonl holds the record's verdicts, one a line
    saved = read_saved_verdicts(folder.path)
    assert {k: v.model_dump() for k, v in saved.items()} == {
        k: v.model_dump() for k, v in folder.verdicts().items()
    }
    assert read_record(folder.path).model_dump() == record.model_dump()


def test_values_come_from_values_json_or_else_from_the_record(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, name = judged
    saved = reports.folder(name).values()
    (reports.path / name / "values.json").unlink()
    assert ReportFolder(reports.path / name).values() == saved


def test_the_history_line_of_a_folder(judged: tuple[ReportsDir, str], tmp_path: Path) -> None:
    reports, name = judged
    folder = reports.folder(name)
    [entry] = reports.history()
    assert reports.history_entry(folder) == entry and entry.folder == name
    stranger = ReportFolder(tmp_path / "elsewhere")
    with pytest.raises(ConfigError) as caught:
        reports.history_entry(stranger)
    assert str(caught.value) == f"elsewhere is not in {reports.history_path}"


def test_a_new_folder_name_is_the_time_and_the_fingerprint_and_takes_no_used_name(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, name = judged
    [entry] = reports.history()
    first = reports.new_folder_name(FINGERPRINT, NOW)
    assert first == "20261201T165800Z-01234567"
    (reports.path / first).mkdir()  # a folder of that name: the next suffix
    assert reports.new_folder_name(FINGERPRINT, NOW) == f"{first}-2"
    # a history line of a deleted folder keeps its name taken too
    taken = [entry.model_copy(update={"folder": f"{first}-2"})]
    assert reports.new_folder_name(FINGERPRINT, NOW, taken) == f"{first}-3"
    assert reports.new_folder_name(FINGERPRINT, NOW, []) == f"{first}-2"
    assert name != first


def test_publish_writes_the_folder_whole_then_history_and_latest(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, name = judged
    [entry] = reports.history()
    stale = reports.path / ".dead.123.partial"
    stale.mkdir()
    (stale / "report.json").write_text("{", encoding="utf-8")
    new = reports.new_folder_name(FINGERPRINT, NOW)
    files: dict[str, str | bytes] = {"a.txt": "first\n", "b.bin": b"\x00\x01"}
    with reports.lock():
        published = reports.publish(new, files, entry.model_copy(update={"folder": new}))
    assert published.path == reports.path / new
    assert (published.path / "a.txt").read_text(encoding="utf-8") == "first\n"
    assert (published.path / "b.bin").read_bytes() == b"\x00\x01"
    assert not stale.exists() and not list(reports.path.glob(".*.partial"))
    assert [e.folder for e in reports.history()] == [name, new]
    assert (reports.path / "latest").read_text(encoding="utf-8").strip() == new
    published.write_files({"a.txt": "second\n"})
    assert (published.path / "a.txt").read_text(encoding="utf-8") == "second\n"
    assert sorted(p.name for p in published.path.iterdir()) == ["a.txt", "b.bin"]
