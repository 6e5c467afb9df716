"""`judge report`: a folder's files rendered again from its record, or rebuilt from its run and
the cache when the record no longer holds (labels changed, another judge version, a damaged
report.json) or when asked (`--rederive`)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from judge.hashing import text_sha256
from judge.pipeline.report import rerender
from judge.record.store import read_record
from tests.conftest import RUN, run_lexical, write_jsonl

Tiny = Callable[..., Config]
#: The module that wires ``judge report`` (``rerender`` and the ``_rederive`` a test replaces).
report_module = importlib.import_module("judge.pipeline.report")


def _folder(config: Config) -> Path:
    name = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    return config.reports.dir / name


def _rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders rebuilt from their run and the cache (the record path never calls it)."""
    rebuilt: list[str] = []
    original = report_module._rederive

    def spy(*args: object, **kwargs: object) -> object:
        rebuilt.append(args[2].name)  # type: ignore[attr-defined]
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(report_module, "_rederive", spy)
    return rebuilt


def _with_labels(tiny: Tiny, tmp_path: Path) -> Config:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("", encoding="utf-8")
    return tiny(extra_toml=f'labels = "{labels}"\n')


def _label_q1(config: Config, note: str) -> None:
    assert config.data.labels is not None
    write_jsonl(
        config.data.labels,
        [
            {
                "question_id": "q1",
                "answer_sha256": text_sha256(RUN[1]["answer"]),
                "faithfulness": 0,
                "relevance": 0,
                "labeller": "ana",
                "note": note,
                "labelled_at": "2025-01-01T00:00:00Z",
            }
        ],
    )


def test_an_intact_record_is_rendered_as_it_is_and_kept(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    folder = _folder(config)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    record_stat = (folder / "report.json").stat()
    # The views; items.jsonl, chunks.jsonl and verdicts.jsonl are the record's rows (format 4).
    for name in ("report.md", "verdicts.csv", "review.html", "values.json", "marks.json"):
        (folder / name).write_text("damaged", encoding="utf-8")
    # No cache: rendering the record needs none (a rebuild would keep the saved verdicts, but
    # it reads the cache).
    config.judge.cache_path.unlink()
    rebuilt = _rebuilds(monkeypatch)
    capsys.readouterr()
    assert main(["--config", str(config.source), "report"]) == 0
    out, err = capsys.readouterr()
    assert rebuilt == [] and err == ""
    assert out == f"re-rendered {folder} (nothing judged)\n"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    # The record is the source: not written again.
    assert (folder / "report.json").stat().st_mtime_ns == record_stat.st_mtime_ns
    assert not config.judge.cache_path.exists()


def test_an_intact_record_is_not_encoded_again(tiny: Tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record's own files were just read: rendering the views from it neither encodes nor
    compares them again (their encoding was a tenth of ``judge report`` at 10,000 questions)."""
    config = tiny()
    assert run_lexical(config) == 0
    folder = _folder(config)
    stats = {n: (folder / n).stat().st_mtime_ns for n in ("items.jsonl", "verdicts.jsonl")}
    files_module = importlib.import_module("judge.report.files")

    def refused(*_: object, **__: object) -> object:
        raise AssertionError("the record's files were encoded again")

    monkeypatch.setattr(files_module, "record_files", refused)
    (folder / "report.md").write_text("damaged", encoding="utf-8")
    assert main(["--config", str(config.source), "report"]) == 0
    assert (folder / "report.md").read_text(encoding="utf-8") != "damaged"
    assert {n: (folder / n).stat().st_mtime_ns for n in stats} == stats


def test_labels_changed_since_the_run_rebuild_the_record(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _with_labels(tiny, tmp_path)
    assert run_lexical(config) == 0
    folder = _folder(config)
    assert "## Agreement with human labels" not in (folder / "report.md").read_text("utf-8")
    rebuilt = _rebuilds(monkeypatch)

    _label_q1(config, "違う")  # a label added since the run
    said: list[str] = []
    rerender(config, None, warn=said.append)
    assert rebuilt == [folder.name]
    assert said == [
        f"{folder.name}: the labels of 1 answer(s) changed since the run (q1); rebuilding its "
        "record from its run and the cache"
    ]
    assert "## Agreement with human labels" in (folder / "report.md").read_text("utf-8")
    row = read_record(folder).questions[0]
    assert row.item is not None and row.item.labels[0].note == "違う"

    said.clear()
    rerender(config, None, warn=said.append)  # nothing changed since: the record holds
    assert rebuilt == [folder.name] and said == []

    _label_q1(config, "数字が違う")  # the same label, another note: rebuilt again
    rerender(config, None)
    assert rebuilt == [folder.name, folder.name]
    assert "数字が違う" in (folder / "review.html").read_text("utf-8")

    assert config.data.labels is not None
    config.data.labels.write_text("", encoding="utf-8")  # every label removed: rebuilt
    rerender(config, None)
    assert len(rebuilt) == 3
    assert "## Agreement with human labels" not in (folder / "report.md").read_text("utf-8")


def test_a_record_written_by_another_judge_version_is_rebuilt(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    folder = _folder(config)
    data = json.loads((folder / "report.json").read_text("utf-8"))
    data["manifest"]["versions"]["judge"] = "0.0.1"
    (folder / "report.json").write_text(json.dumps(data), encoding="utf-8")
    rebuilt = _rebuilds(monkeypatch)
    said: list[str] = []
    rerender(config, None, warn=said.append)
    assert rebuilt == [folder.name]
    (line,) = said
    assert line.startswith(f"{folder.name}: it was written by judge 0.0.1, this is judge ")
    assert line.endswith("; rebuilding its record from its run and the cache")
    # Rebuilt with this version's parser and verifier, and recorded as such.
    again = json.loads((folder / "report.json").read_text("utf-8"))
    assert again["manifest"]["versions"]["judge"] != "0.0.1"


def test_a_damaged_record_is_rebuilt_with_one_warning(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    folder = _folder(config)
    before = (folder / "report.json").read_text("utf-8")
    (folder / "report.json").write_text("{not json", encoding="utf-8")
    capsys.readouterr()
    assert main(["--config", str(config.source), "report"]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"warning: {folder / 'report.json'}:1: not valid JSON (")
    assert line.endswith("; rebuilding it from the folder's run and the cache")
    assert (folder / "report.json").read_text("utf-8") == before


@pytest.mark.parametrize("name", ["items.jsonl", "chunks.jsonl"])
def test_a_damaged_line_file_of_the_record_is_rebuilt_with_one_warning(
    tiny: Tiny, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Folder format 4: report.json's rows reference items.jsonl (its chunks' texts in
    chunks.jsonl), so a damaged one is a damaged record: rebuilt from the run and the cache,
    every file as it was."""
    config = tiny()
    assert run_lexical(config) == 0
    folder = _folder(config)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    (folder / name).write_text("{not json\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["--config", str(config.source), "report"]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"warning: {folder / name}:1: not valid JSON (")
    assert line.endswith("; rebuilding it from the folder's run and the cache")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_rederive_rebuilds_even_an_intact_record(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    folder = _folder(config)
    before = (folder / "report.json").read_text("utf-8")
    rebuilt = _rebuilds(monkeypatch)
    assert main(["--config", str(config.source), "report", "--rederive"]) == 0
    assert rebuilt == [folder.name]
    assert (folder / "report.json").read_text("utf-8") == before


def test_rendering_a_record_and_a_lexical_run_import_only_what_they_use(tiny: Tiny) -> None:
    """What keeps `judge report` fast (docs/benchmarks.md): it renders a record, so it needs no
    statistics (numpy), no frames (pandas) and no server (httpx); a lexical `judge run` asks no
    server either. Neither, with its output a log, draws a bar (rich), starts an event loop for
    an adapter (asyncio) or writes JUnit (ElementTree)."""
    import subprocess
    import sys

    from tests.conftest import REPO

    config = tiny()
    assert run_lexical(config) == 0
    heavy = "('numpy', 'pandas', 'httpx', 'rich', 'asyncio', 'xml.etree.ElementTree')"
    for command, expected in ((["report"], "[]"), (["run", "--backend", "lexical"], "['numpy']")):
        code = (
            "import sys\nfrom judge.cli import main\n"
            f"code = main(['--config', {str(config.source)!r}, *{command!r}])\n"
            f"print(code, sorted(m for m in {heavy} if m in sys.modules))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
        )
        assert done.stdout.splitlines()[-1] == f"0 {expected}", (command, done.stdout[-300:])


def test_a_missing_labels_file_is_said_when_the_record_is_rendered_too(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _with_labels(tiny, tmp_path)
    assert run_lexical(config) == 0
    assert config.data.labels is not None
    config.data.labels.unlink()
    rebuilt = _rebuilds(monkeypatch)
    capsys.readouterr()
    assert main(["--config", str(config.source), "report"]) == 0
    assert rebuilt == []  # no labels then, none now: the record holds
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("warning: ") and line.endswith("(no labels are used)")
    assert str(config.data.labels) in line
