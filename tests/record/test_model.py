"""The record's model (``judge.record.model``): the keys report.json holds and their order, a
row of typed fields of fixed depth, and a record of an earlier shape of this format read as
today's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.record.model import DERIVED
from judge.record.store import ReportsDir, read_record
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


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

    from judge.record.model import QuestionRow

    # The validation schema: the serialized rows are the same fields (``plain`` writes a named
    # tuple as an object of its fields, no deeper).
    assert _free_form(QuestionRow.model_json_schema(mode="validation")) == []

    class Loose(BaseModel):  # the check can fail
        extra: dict[str, Any]
        anything: Any

    assert len(_free_form(Loose.model_json_schema(mode="validation"))) == 2


def test_a_record_written_before_the_season_gate_still_reads(tiny: Tiny, tmp_path: Path) -> None:
    # The previous release wrote format 2 too: its rule had min_questions, a move in a small
    # type was "too_few", and nothing of the season, the diagnosis, the exact p-values, the
    # tokens or the gate's notes and moves existed. Such a folder must still be compared with,
    # shown and re-rendered (checked by hand against that release's code too).
    config = tiny()
    assert run_lexical(config) == 0
    assert run_lexical(config) == 0
    folder = ReportsDir(config.reports.dir).folder(None).path
    # report.json as the releases before folder format 4 wrote it: each row with its item
    # and verdict (pydantic's dump of the record).
    data = read_record(folder).model_dump(mode="json", by_alias=True)
    data["format_version"] = 3
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
