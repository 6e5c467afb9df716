"""Batch export and import with chunk grades and correctness on (judge.pipeline.batch): their
requests go out beside the answers', each reply comes back under its own task's fingerprint,
and the run after the import asks nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.judging.backends.openai_batch import read_manifest, task_of
from judge.judging.tasks.chunk import chunk_schema
from judge.judging.tasks.correctness import correctness_schema
from judge.judging.tasks.registry import FURTHER
from judge.pipeline.batch import BatchExport, export_batch, import_batch
from judge.pipeline.evaluate import evaluate
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO
from tests.judging.backends.test_openai_batch_output import VERDICT, answered
from tests.pipeline.test_batch import live_backend, openai_config, requests_of

Tiny = Callable[..., Config]
Line = dict[str, Any]
REPLIES = {
    "answer": VERDICT,
    "chunk": json.dumps({"grade": 2, "reason": "holds part of the answer"}),
    "correctness": json.dumps({"correctness": 1, "reason": "misses a fact"}),
}
#: The further judgements a ``custom_id`` may name (every registered one).
FURTHER_NAMES = [task.name for task in FURTHER]


def further_config(tiny: Tiny, references: bool = True) -> Config:
    config = openai_config(tiny)
    return config.with_overrides(
        judge={
            "chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md", "depth": 2},
            "correctness": {"enabled": True, "prompt": REPO / "prompts" / "correctness.v1.md"},
        }
    )


def top_chunks(config: Config) -> int:
    """The chunks graded at depth 2: the top 2 of each answer (fewer where fewer came)."""
    run = load_inputs(config, None, with_labels=False).run
    return sum(min(2, len(record.retrieved)) for record in run.records.values())


def engine(export: BatchExport, name: str = "results.jsonl") -> Path:
    """Answer every request in the shape of its task, as a batch engine serving the judge."""
    lines = [
        answered(r, REPLIES[task_of(r["custom_id"], FURTHER_NAMES)[0]]) for r in requests_of(export)
    ]
    out = export.out_dir / name
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return out


def test_export_writes_each_tasks_requests_with_its_schema_and_an_id_naming_the_task(
    tiny: Tiny,
) -> None:
    config = further_config(tiny)
    export = export_batch(config)
    requests = requests_of(export)
    by_task: dict[str, list[Line]] = {}
    for request in requests:
        by_task.setdefault(task_of(request["custom_id"], FURTHER_NAMES)[0], []).append(request)
    answers = len(by_task["answer"])
    chunks = top_chunks(config)
    assert answers == 4 and len(by_task["chunk"]) == chunks  # the top 2 of each
    assert all(r["custom_id"].startswith("chunk/h1:") for r in by_task["chunk"])
    assert all(r["custom_id"].startswith("correctness/h1:") for r in by_task.get("correctness", []))
    schema = by_task["chunk"][0]["body"]["response_format"]["json_schema"]["schema"]
    assert schema == chunk_schema()
    for request in by_task.get("correctness", []):
        assert request["body"]["response_format"]["json_schema"]["schema"] == correctness_schema()
    manifest = read_manifest(export.manifest) if export.manifest else None
    assert manifest is not None and set(manifest.tasks) == {"chunk", "correctness"}
    assert manifest.tasks["chunk"].fingerprint != manifest.fingerprint
    assert set(manifest.items) == {r["custom_id"] for r in requests}
    assert export.tasks["chunk"] == (chunks, chunks)
    assert export.pending == len(requests) == export.total


def test_after_the_import_a_run_asks_nothing_of_any_judgement(tiny: Tiny) -> None:
    config = further_config(tiny)
    export = export_batch(config)
    imported = import_batch(config, [engine(export)])
    assert (imported.problems, imported.still_pending) == ([], 0)
    assert imported.imported == export.pending
    chats: list[Line] = []
    run = evaluate(config, backend=live_backend(config, chats), progress=False)
    assert chats == []  # judged nothing, graded nothing
    grades = [g for row in run.report.questions for g in row.chunk_grades or ()]
    assert len(grades) == top_chunks(config) and all(g.cached and g.grade == 2 for g in grades)
    verdicts = [row.correctness for row in run.report.questions if row.correctness]
    assert all(v.cached and v.correctness == 1 for v in verdicts)
    # A second export finds nothing pending.
    assert export_batch(config).pending == 0


def test_a_changed_chunk_prompt_refuses_the_import(tiny: Tiny, tmp_path: Path) -> None:
    config = further_config(tiny)
    export = export_batch(config)
    results = engine(export)
    edited = tmp_path / "chunk.md"
    edited.write_text((REPO / "prompts" / "chunk.v1.md").read_text() + "\nMore.\n", "utf-8")
    changed = config.with_overrides(
        judge={"chunks": {"enabled": True, "prompt": edited, "depth": 2}}
    )
    with pytest.raises(InputError) as caught:
        import_batch(changed, [results])
    (problem,) = caught.value.problems
    assert "its chunk requests were exported for judge configuration" in problem
    assert "(changed: prompt_sha256)" in problem
