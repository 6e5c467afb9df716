"""The audit loop end to end: sample a blind sheet, fill it like a spreadsheet, import, audit."""

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.audit.terminal import label_in_terminal
from judge.cli import main
from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels
from judge.results.folder import RunFolder

Tiny = Callable[..., Config]
HUMAN = {"q1": (2, 2), "q2": (1, 2), "q3": (0, 0), "q4": (2, 2)}


@pytest.fixture
def labelled_setup(tiny: Tiny, tmp_path: Path) -> tuple[Config, str]:
    config = tiny(extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert config.source is not None
    toml = str(config.source)
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    return config, toml


def _fill_like_a_spreadsheet(
    sheet: Path, scores: dict[str, tuple[int, int]], labeller: str
) -> None:
    """Open the sheet as Excel would (BOM, CRLF), fill the score cells, save it back."""
    raw = sheet.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with BOM, so Excel shows the Japanese
    rows = list(csv.reader(raw.decode("utf-8-sig").splitlines(keepends=True)))
    header = rows[0]
    for row in rows[1:]:
        qid = row[header.index("question_id")]
        if qid in scores:
            row[header.index("faithfulness")], row[header.index("relevance")] = map(
                str, scores[qid]
            )
            row[header.index("labeller")] = labeller
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)


def test_sample_fill_import_audit(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    text = sheet.read_text(encoding="utf-8-sig")
    header = text.splitlines()[0].split(",")
    # Blind: nothing from the judge in the sheet.
    assert "evidence" not in header and "note" in header and "faithfulness" in header
    rows = list(csv.DictReader(text.splitlines()))
    assert sorted(r["question_id"] for r in rows) == ["q1", "q2", "q3", "q4"]
    assert all(r["faithfulness"] == "" for r in rows)
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    verdicts = (folder / "verdicts.jsonl").read_text(encoding="utf-8")
    for verdict in map(json.loads, verdicts.splitlines()):
        assert verdict["note"] not in text  # the judge's reasoning never reaches labellers

    _fill_like_a_spreadsheet(sheet, HUMAN, "ana")
    capsys.readouterr()
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    assert "4 added, 0 replaced, 0 already there" in capsys.readouterr().out
    # Idempotent.
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    assert "0 added, 0 replaced, 4 already there" in capsys.readouterr().out
    assert main(["--config", toml, "audit"]) == 0
    out = capsys.readouterr().out
    assert "judge: both scores exact" in out and "lexical baseline: both scores exact" in out
    assert "4 pairs give wide intervals" in out
    # Labelled items are not sampled again.
    assert (
        main(
            ["--config", toml, "audit", "sample", "--n", "4", "--out", str(tmp_path / "again.csv")]
        )
        == 0
    )
    assert "only 0 unlabelled item(s)" in capsys.readouterr().out
    # The gate.
    assert main(["--config", toml, "audit", "--min-agreement", "1.01"]) == 1
    assert "audit gate: FAILED" in capsys.readouterr().out


def test_bad_rows_are_all_reported_and_nothing_is_imported(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    _fill_like_a_spreadsheet(sheet, {"q1": (2, 2), "q2": (3, 2), "q3": (1, 1)}, "ana")
    rows = list(csv.reader(sheet.read_text(encoding="utf-8-sig").splitlines()))
    header = rows[0]
    for row in rows[1:]:
        if row[header.index("question_id")] == "q3":
            row[header.index("answer")] += "（編集）"  # someone edited the answer cell
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    capsys.readouterr()
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 2
    err = capsys.readouterr().err
    assert "faithfulness must be 0, 1 or 2, got '3'" in err
    assert "the answer text was edited" in err
    assert "nothing was imported" in err
    assert not (tmp_path / "labels.jsonl").exists()


def test_conflicting_label_needs_replace(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    _fill_like_a_spreadsheet(sheet, HUMAN, "ana")
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    _fill_like_a_spreadsheet(sheet, {**HUMAN, "q2": (2, 2)}, "ana")
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 2
    assert (
        "q2: ana already labelled this answer F1 R2, the file says F2 R2; pass --replace"
        in capsys.readouterr().err
    )
    assert main(["--config", toml, "audit", "import", str(sheet), "--replace"]) == 0
    assert "0 added, 1 replaced, 3 already there" in capsys.readouterr().out


def _typed(*replies: str) -> Callable[[str], str]:
    """Keyboard input: the replies in order, then Ctrl-D (EOFError), as a terminal would."""
    queue = list(replies)

    def ask(prompt: str) -> str:
        if not queue:
            raise EOFError
        return queue.pop(0)

    return ask


def test_terminal_labelling_saves_each_item_and_resumes(
    labelled_setup: tuple[Config, str], tmp_path: Path
) -> None:
    config, _ = labelled_setup
    golden = load_golden(config.data)
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    items = list(RunFolder(folder).items().values())
    labels_path = tmp_path / "labels.jsonl"
    shown: list[str] = []
    ask = _typed("2", "2", "", "x", "1", "2", "too long", "q")
    saved = label_in_terminal(items, labels_path, golden.by_id(), "bo", ask, shown.append)
    assert saved == 2
    assert any("type 0, 1 or 2" in line for line in shown)
    assert not any("faithfulness 2" in line for line in shown)  # blind: no judge scores shown
    labels = load_labels(labels_path, golden.by_id()).current
    assert [(lab.question_id, lab.faithfulness, lab.relevance) for lab in labels] == [
        ("q1", 2, 2),
        ("q2", 1, 2),
    ]
    # Resume: the two labelled items are skipped.
    shown.clear()
    ask = _typed("0", "0", "wrong answer")  # then Ctrl-D on the next item
    assert label_in_terminal(items, labels_path, golden.by_id(), "bo", ask, shown.append) == 1
    assert shown[0] == "2 item(s) to label as 'bo' (2 already done)"


def test_formula_like_cells_survive_a_spreadsheet_round_trip(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import copy

    from tests.conftest import RUN

    run = copy.deepcopy(RUN)
    run[2]["answer"] = "- 設定を開く\n- 復元をタップ"  # a list that Excel would read as a formula
    config = tiny(run=run, extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert config.source is not None
    toml = str(config.source)
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    rows = {
        r["question_id"]: r
        for r in csv.DictReader(sheet.read_text(encoding="utf-8-sig").splitlines(keepends=True))
    }
    assert rows["q2"]["answer"].startswith("'- 設定")  # kept as text by the spreadsheet
    _fill_like_a_spreadsheet(sheet, HUMAN, "ana")  # saved back with CRLF line ends
    capsys.readouterr()
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    assert "4 added" in capsys.readouterr().out
