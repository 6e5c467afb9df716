"""The run record: report.json is its dump, and a folder reads back into the same object."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.folders import ReportsDir, read_record
from judge.judging.types import Verdict
from judge.pipeline.evaluate import evaluate
from judge.record import DERIVED, QuestionRow, record_json
from judge.results.item_record import ItemRecord
from tests.conftest import QUESTIONS, run_lexical

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


def test_report_json_is_the_record_then_what_follows_from_it(tiny: Tiny) -> None:
    result = evaluate(tiny(), backend="lexical")
    data = json.loads((result.folder.path / "report.json").read_text(encoding="utf-8"))
    assert next(iter(data)) == "format_version"
    assert list(data)[-len(DERIVED) :] == list(DERIVED)
    record = result.report
    assert data["regressions"] == len(record.regressions)
    assert data["needs_review"] == {r.question_id: r.triage.reasons for r in record.needs_review}
    assert data["adapter_failed"] == {}
    # The comparisons keep their readable shape: objects, with "against".
    assert all({"section", "against", "note", "changes"} <= set(c) for c in data["comparisons"])


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
    import judge.record

    record = evaluate(tiny(), backend="lexical").report
    data = record_json(record)
    assert not data.isascii()  # Japanese: its bytes are not its characters
    size = len(data)
    mb = 1024 * 1024
    kind = judge.record.REPORT_FILE
    monkeypatch.setattr(judge.record, "REPORT_FILE", kind._replace(max_mb=size / mb))
    assert record_json(record) == data  # exactly at the limit: written
    monkeypatch.setattr(judge.record, "REPORT_FILE", kind._replace(max_mb=(size - 1) / mb))
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
    """report.json is pydantic's own indented dump of the record, derived keys included (no
    text assembled by hand), and reads back into the same record."""
    result = evaluate(tiny(), backend="lexical")
    text = (result.folder.path / "report.json").read_text(encoding="utf-8")
    assert text == result.report.model_dump_json(indent=2, by_alias=True) + "\n"
    assert text.startswith('{\n  "format_version": 3,\n  "manifest": {\n')
    rows = json.loads(text)["questions"]
    assert [row["question_id"] for row in rows] == [q.question_id for q in result.report.questions]
    assert read_record(result.folder.path) == result.report


def test_a_row_holds_its_item_and_verdict_as_the_jsonl_files_do(tiny: Tiny) -> None:
    """report.json's row holds the item and verdict that items.jsonl and verdicts.jsonl hold
    (those without the unset optional fields): the row keeps the model's field order, and a
    question text holding what the row's JSON looks like around its item changes nothing."""
    first = {**QUESTIONS[0], "question": QUESTIONS[0]["question"] + ' ,"failure": null, \\'}
    result = evaluate(tiny(questions=[first, *QUESTIONS[1:]]), backend="lexical")
    path = result.folder.path
    data = json.loads((path / "report.json").read_text(encoding="utf-8"))
    rows = data["questions"]
    assert [list(row) for row in rows] == [list(QuestionRow.model_fields)] * len(rows)
    assert rows[0]["question"] == first["question"]
    items = (path / "items.jsonl").read_text("utf-8").splitlines()
    verdicts = (path / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
    # The JSONL lines leave out the unset optional fields, which read back as the same values.
    assert [ItemRecord.model_validate_json(line) for line in items] == [
        ItemRecord.model_validate(row["item"]) for row in rows if row["item"] and row["verdict"]
    ]
    assert [Verdict.model_validate_json(line) for line in verdicts] == [
        Verdict.model_validate(row["verdict"]) for row in rows if row["verdict"]
    ]
    assert all('":null' not in line for line in [*items, *verdicts])
    assert read_record(path) == result.report


def _free_form(schema: dict[str, Any]) -> list[str]:
    """Where a JSON schema lets data of any shape in (an ``Any``: no type at all; a
    ``dict[str, Any]``) or refers back to itself (unbounded depth): the paths, empty when every
    value has a type and the whole a fixed depth."""
    defs = schema.get("$defs", {})
    typed = {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"}
    found: list[str] = []

    def walk(node: dict[str, Any], path: str, seen: tuple[str, ...]) -> None:
        if not typed & set(node):
            found.append(f"{path or '/'} (any JSON)")
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name in seen:
                found.append(f"{path} (refers back to {name})")
                return
            walk(defs[name], f"{path}<{name}>", (*seen, name))
        extra = node.get("additionalProperties")
        if extra is True:
            found.append(f"{path} (an object of any keys and values)")
        elif isinstance(extra, dict):
            walk(extra, f"{path}/*", seen)
        for key in ("properties", "patternProperties"):
            for name, sub in node.get(key, {}).items():
                walk(sub, f"{path}/{name}", seen)
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for index, sub in enumerate(node.get(key, [])):
                walk(sub, f"{path}[{index}]", seen)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]", seen)

    walk({k: v for k, v in schema.items() if k != "$defs"}, "", ())
    return found


def test_a_question_row_holds_typed_fields_of_fixed_depth_only() -> None:
    """What lets ``record_json`` skip reading the rows back (see its docstring): a row field of
    free-form JSON would need the rows read back too."""
    from pydantic import BaseModel

    from judge.record import QuestionRow

    # The validation schema: the serialized rows are the same fields (``plain`` writes a named
    # tuple as an object of its fields, no deeper).
    assert _free_form(QuestionRow.model_json_schema(mode="validation")) == []

    class Loose(BaseModel):  # the check can fail
        extra: dict[str, Any]
        anything: Any

    assert len(_free_form(Loose.model_json_schema(mode="validation"))) == 2


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


def test_a_record_written_before_the_season_gate_still_reads(tiny: Tiny, tmp_path: Path) -> None:
    # The previous release wrote format 2 too: its rule had min_questions, a move in a small
    # type was "too_few", and nothing of the season, the diagnosis, the exact p-values, the
    # tokens or the gate's notes and moves existed. Such a folder must still be compared with,
    # shown and re-rendered (checked by hand against that release's code too).
    config = tiny()
    assert run_lexical(config) == 0
    assert run_lexical(config) == 0
    folder = ReportsDir(config.reports.dir).folder(None).path
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    data["rule"]["min_questions"] = 8
    data.pop("season", None)
    data["manifest"].pop("tokens", None)
    for row in data["questions"]:
        row.pop("diagnosis", None)
        if row["item"] is not None:
            row["item"].pop("reference_answer", None)
    changes = [c for comp in data["comparisons"] for c in comp["changes"]]
    assert changes
    for c in changes:
        for key in ("p_fall", "p_rise", "nights"):
            c.pop(key)
    changes[0]["direction"] = "too_few"
    data["gate"]["listed"] = [changes[0]]
    data["gate"].pop("notes")
    for check in data["gate"]["checks"]:
        check.pop("moves")
    old = tmp_path / "old"
    old.mkdir()
    for name in ("manifest.json", "items.jsonl", "verdicts.jsonl"):
        (old / name).write_bytes((folder / name).read_bytes())
    (old / "report.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    record = read_record(old)
    assert record.comparisons[0].changes[0].direction == "listed"
    assert record.gate.listed[0].direction == "listed"
    assert record.rule.margin_share == data["rule"]["margin_share"]
    assert {row.diagnosis for row in record.questions} == {"not judged"}
    assert record.values() == read_record(folder).values()
