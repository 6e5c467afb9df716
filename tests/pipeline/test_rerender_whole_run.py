"""`judge report` on an intact folder renders every file of it again, byte for byte: the record
holds the whole run (the audit's figures, the typed configuration, the bar checks, every
judgement's results). On the shipped sample with its human labels, chunk grades and correctness
on, with bars checked, and on a folder of the previous format (2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.audit.agreement import as_json
from judge.cli import main
from judge.formatting import markdown_text
from judge.record.store import read_record
from judge.results.manifest import FORMAT_VERSION
from tests.conftest import REPO, SAMPLE, sample_toml


def _sample_toml(folder: Path) -> Path:
    """The shipped sample (labels included) with chunk grades and correctness on."""
    path = folder / "judge.toml"
    prompts = REPO / "prompts"
    path.write_text(
        f'[data]\nquestions = "{SAMPLE / "questions.jsonl"}"\n'
        f'corpus = "{SAMPLE / "corpus.jsonl"}"\nrun = "{SAMPLE / "run.jsonl"}"\n'
        f'labels = "{SAMPLE / "labels.jsonl"}"\n'
        'question_types = ["factual", "procedural", "negative", "out_of_scope"]\n'
        'out_of_scope_types = ["out_of_scope"]\n'
        f'\n[judge]\nprompt = "{prompts / "judge.v1.md"}"\ncache_path = "cache.sqlite3"\n'
        f'\n[judge.chunks]\nenabled = true\nprompt = "{prompts / "chunk.v1.md"}"\n'
        f'\n[judge.correctness]\nenabled = true\nprompt = "{prompts / "correctness.v1.md"}"\n'
        '\n[reports]\ndir = "reports"\n',
        encoding="utf-8",
    )
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    toml = _sample_toml(tmp_path)
    assert main(["--config", str(toml), "run", "--backend", "lexical"]) == 0
    name = (tmp_path / "reports" / "latest").read_text(encoding="utf-8").strip()
    capsys.readouterr()
    return toml, tmp_path / "reports" / name


def test_judge_report_renders_every_file_of_a_labelled_run_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml, folder = _run(tmp_path, capsys)
    before = _files(folder)
    report_md = before["report.md"].decode("utf-8")
    assert "## Agreement with human labels" in report_md
    assert "### Corrected estimates" in report_md
    data = json.loads(before["report.json"])
    assert data["audit"]["judge"]["n"] == 42
    assert any(row["chunk_grades"] for row in data["questions"])
    assert any(row["correctness"] for row in data["questions"])
    # The views; items.jsonl, chunks.jsonl and verdicts.jsonl are the record's rows (format 4).
    for name in ("report.md", "verdicts.csv", "review.html", "values.json", "marks.json"):
        (folder / name).write_text("damaged", encoding="utf-8")
    assert main(["--config", str(toml), "report"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"re-rendered {folder} (nothing judged)\n", "")
    after = _files(folder)
    assert list(after) == list(before)
    for name, content in before.items():
        assert after[name] == content, name


def _as_format_2(folder: Path) -> None:
    """Rewrite a current folder into the shape format 2 wrote: its version in every state
    file, the configuration as a plain dict (the same JSON), the agreement as the untyped dict
    ``as_json`` made, and no bar checks in the gate (format 2 added them after writing)."""
    record = read_record(folder)
    assert record.audit is not None
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    audit = report.pop("audit")
    assert audit is not None
    derived = {k: report.pop(k) for k in ("adapter_failed", "needs_review", "regressions")}
    report["gate"]["checks"] = [c for c in report["gate"]["checks"] if c["kind"] != "bar"]
    report.update(
        format_version=2,
        manifest={**report["manifest"], "format_version": 2},
        agreement=as_json(record.audit),
        **derived,
    )
    (folder / "report.json").write_text(json.dumps(report, ensure_ascii=False), "utf-8")
    for name in ("manifest.json", "values.json"):
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        (folder / name).write_text(json.dumps({**data, "format_version": 2}), "utf-8")


def test_a_folder_of_format_2_reads_renders_and_renders_again_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml, folder = _run(tmp_path, capsys)
    current = _files(folder)
    _as_format_2(folder)
    old = read_record(folder)  # it reads: its configuration typed, without its untyped agreement
    assert old.manifest.format_version == 2 and old.format_version == FORMAT_VERSION
    assert old.audit is None and old.gate.bar_checks == []
    assert old.manifest.config.data.labels == SAMPLE / "labels.jsonl"
    assert [row.question_id for row in old.questions] == [
        row.question_id for row in read_record(folder).questions
    ]

    assert main(["--config", str(toml), "report"]) == 0
    out, err = capsys.readouterr()
    assert err == (
        f"warning: {folder.name}: its report.json is of format 2 (this judge writes "
        f"{FORMAT_VERSION}); rebuilding its record from its run and the cache\n"
    )
    assert out == f"re-rendered {folder} (nothing judged)\n"
    once = _files(folder)
    report_md = once["report.md"].decode("utf-8")
    assert "## Agreement with human labels" in report_md
    assert "### Corrected estimates" in report_md
    # Rebuilt from the run and the cache: the folder as this judge wrote it, every file.
    assert json.loads(once["report.json"])["format_version"] == FORMAT_VERSION
    assert list(once) == list(current)
    for name, content in current.items():
        assert once[name] == content, name

    assert main(["--config", str(toml), "report"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"re-rendered {folder} (nothing judged)\n", "")
    assert _files(folder) == once


def test_the_bars_a_run_checked_are_in_its_record_and_rendered_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = sample_toml(
        tmp_path, extra="\n[bars]\nfaithfulness = { factual = 0.5, negative = 1.9 }\n"
    )
    assert main(["--config", str(toml), "run", "--bars"]) == 1
    out = capsys.readouterr().out
    name = (tmp_path / "reports" / "latest").read_text(encoding="utf-8").strip()
    folder = tmp_path / "reports" / name
    before = _files(folder)
    data = json.loads(before["report.json"])
    bars = [c for c in data["gate"]["checks"] if c["kind"] == "bar"]
    assert [(c["name"], c["passed"]) for c in bars] == [
        ("bar: factual faithfulness", True),
        ("bar: negative faithfulness", False),
    ]
    crossed = bars[1]["message"]
    assert crossed.startswith("bar: negative faithfulness ") and " < 1.90 " in crossed
    assert f"\nbars: 1 of 2 met\n{crossed}\n" in out
    assert f"gate: FAILED: {crossed}; " in out
    report_md = before["report.md"].decode("utf-8")
    assert f"## Bars\n\n1 of 2 met.\n\n- {markdown_text(crossed)}\n" in report_md
    assert read_record(folder).gate.verdict.startswith(f"FAILED: {crossed}; ")
    (folder / "report.md").write_text("damaged", encoding="utf-8")
    assert main(["--config", str(toml), "report"]) == 0
    assert _files(folder) == before
    # A rebuild from the run and the cache checks them again.
    assert main(["--config", str(toml), "report", "--rederive"]) == 0
    assert _files(folder) == before
