"""A UTF-8 byte-order mark before a file's first byte: every input is read as without it.

Windows editors put one there (Notepad until 2019; Excel's "CSV UTF-8"), and a person saving
``judge.toml`` or a labels file in one did nothing wrong: the harness drops a leading BOM and
reads on (issue 34, item 7: a ``judge.toml`` with one was refused as "Invalid statement (line 1,
column 1)", which does not name it). One case per kind of file the harness reads: the
configuration, the JSONL inputs, the labels, the CSV sheets, the confirmations of ``golden
accept``, the imports' tables, the JSON state files, the ``latest`` pointer, ``history.jsonl``
and a prompt file. A BOM anywhere but first is text, and where an id may not hold it, it is
refused as U+FEFF (``tests/io/test_text.py``, ``tests/io/test_jsonl.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.inputs.foreign.read import read_foreign
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels, load_labels_if_any
from judge.judging.prompts import load_prompt
from judge.results.history import append_history, load_history
from tests.conftest import REPO, history_entry, run_lexical

Tiny = Callable[..., Config]
BOM = b"\xef\xbb\xbf"
FOREIGN = REPO / "tests" / "data" / "foreign"


def _with_bom(path: Path) -> Path:
    path.write_bytes(BOM + path.read_bytes())
    return path


def _cli(config: Config, *args: str) -> list[str]:
    assert config.source is not None
    return ["--config", str(config.source), *args]


@pytest.mark.parametrize("name", ["judge.toml", "questions.jsonl", "corpus.jsonl", "run.jsonl"])
def test_the_configuration_and_the_jsonl_inputs_are_read_with_a_bom(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    config = tiny()
    _with_bom(tmp_path / name)
    assert load_config(tmp_path / "judge.toml") == config
    assert main(_cli(config, "check", "--no-judge")) == 0, capsys.readouterr().err
    assert [q.id for q in load_golden(config.data).questions] == ["q1", "q2", "q3", "q4"]


def test_bars_written_into_a_configuration_with_a_bom_keep_it(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    toml = _with_bom(tmp_path / "judge.toml")
    before = toml.read_bytes()
    assert main(_cli(config, "bars", "suggest", "--write")) == 0, capsys.readouterr().err
    after = toml.read_bytes()
    assert after.startswith(before)  # the BOM and every other byte kept, the bars appended
    assert not after[len(BOM) :].startswith(BOM)
    assert load_config(toml).bars


def _label(hash_number: int) -> str:
    record = {
        "question_id": "q1",
        "answer_sha256": f"{hash_number:064x}",
        "faithfulness": 2,
        "relevance": 1,
        "labeller": "ana",
    }
    return json.dumps(record) + "\n"


def test_a_labels_file_with_a_bom_is_read_and_one_holding_only_a_bom_is_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(BOM + (_label(1) + _label(2)).encode())
    labels = load_labels(path, {"q1"})
    assert [lab.answer_sha256 for lab in labels.current] == [f"{1:064x}", f"{2:064x}"]
    path.write_bytes(BOM)  # Notepad's "empty" file
    assert load_labels_if_any(path, {"q1"}).current == []
    path.write_bytes(BOM + b"\r\n")
    assert load_labels_if_any(path, {"q1"}).current == []


def test_a_filled_sheet_with_a_bom_is_imported(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    rows = ["question_id,answer_sha256,faithfulness,relevance,labeller,note"]
    rows += [f"q1,{n:064x},2,1,ana," for n in (1, 2)]
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes(BOM + "\r\n".join(rows).encode() + b"\r\n")
    assert main(_cli(config, "audit", "import", str(sheet))) == 0, capsys.readouterr().err
    assert "2 added" in capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_confirmations_with_a_bom_are_accepted(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    config = tiny()
    file = tmp_path / f"confirmed{suffix}"
    if suffix == ".jsonl":
        body = json.dumps({"question_id": "q1", "chunk_id": "pricing/trial", "confirmed": True})
    else:
        body = "question_id,chunk_id,confirmed\r\nq1,pricing/trial,yes"
    file.write_bytes(BOM + body.encode() + b"\n")
    assert main(_cli(config, "golden", "accept", str(file))) == 0, capsys.readouterr().err
    q1 = load_golden(config.data).by_id()["q1"]
    assert q1.relevant_chunks == ("pricing/plans", "pricing/trial")


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        ("ragas", "ragas.jsonl"),
        ("ragas", "ragas.csv"),
        ("deepeval", "deepeval.json"),
        ("deepeval", "deepeval.csv"),
        ("otel", "otel.jsonl"),
    ],
)
def test_an_import_reads_a_table_with_a_bom_as_without(
    tmp_path: Path, tool: str, name: str
) -> None:
    plain = read_foreign(tool, FOREIGN / name)  # type: ignore[arg-type]
    copy = tmp_path / name
    copy.write_bytes(BOM + (FOREIGN / name).read_bytes())
    with_bom = read_foreign(tool, copy)  # type: ignore[arg-type]
    moved = [
        r._replace(where=r.where.replace(str(copy), str(FOREIGN / name))) for r in with_bom.records
    ]
    assert moved == plain.records and plain.records  # the same records, on the same lines
    assert with_bom.problems == plain.problems == []


def test_the_state_files_and_the_latest_pointer_are_read_with_a_bom(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    assert main(_cli(config, "baseline", "pin")) == 0
    reports = config.reports.dir
    latest = _with_bom(reports / "latest")
    folder = reports / latest.read_text(encoding="utf-8-sig").strip()
    _with_bom(folder / "manifest.json")
    _with_bom(folder / "report.json")
    _with_bom(config.reports.baseline)
    capsys.readouterr()
    assert main(_cli(config, "show", "q1")) == 0, capsys.readouterr().err
    assert main(_cli(config, "report")) == 0, capsys.readouterr().err
    assert main(_cli(config, "run", "--backend", "lexical", "--fail-on-regression")) == 0


def test_a_history_with_a_bom_is_read_and_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_bytes(BOM + history_entry("first").model_dump_json().encode() + b"\n")
    assert [e.folder for e in load_history(path).entries] == ["first"]
    append_history(path, history_entry("second"))
    history = load_history(path)
    assert history.warnings == [] and [e.folder for e in history.entries] == ["first", "second"]
    path.write_bytes(BOM + b'{"folder": "tor')  # a torn first line after the BOM
    assert load_history(path).entries == [] and load_history(path).torn_at == len(BOM)
    append_history(path, history_entry("third"))
    assert [e.folder for e in load_history(path).entries] == ["third"]


def test_a_prompt_with_a_bom_is_the_same_prompt(tmp_path: Path) -> None:
    shipped = REPO / "prompts" / "judge.v1.md"
    copy = tmp_path / "judge.v1.md"
    copy.write_bytes(BOM + shipped.read_bytes())
    assert load_prompt(copy).text == load_prompt(shipped).text
    assert load_prompt(copy).sha256 == load_prompt(shipped).sha256


def test_no_file_of_the_user_is_read_as_plain_utf8() -> None:
    """The class, not the cases: a new reader that decodes a file with ``read_text(encoding=
    "utf-8")`` would keep a BOM as the text's first character (a TOML or JSON parser then
    refuses it without naming it). Files are read through ``judge.io`` (``utf-8-sig``) or with
    ``encoding="utf-8-sig"``; only the package's own assets, which have no BOM, are not."""
    found = []
    for path in sorted((REPO / "judge").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if 'read_text(encoding="utf-8")' in line and "resources.files(" not in line:
                found.append(f"{path.relative_to(REPO)}:{number}")
    assert found == []
