"""Shared by the audit tests: a judged tiny run with a labels file, and a spreadsheet's round trip."""

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config

Tiny = Callable[..., Config]
HUMAN = {"q1": (2, 2), "q2": (1, 2), "q3": (0, 0), "q4": (2, 2)}


@pytest.fixture
def labelled_setup(tiny: Tiny, tmp_path: Path) -> tuple[Config, str]:
    config = tiny(extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert config.source is not None
    toml = str(config.source)
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    return config, toml


def fill_like_a_spreadsheet(sheet: Path, scores: dict[str, tuple[int, int]], labeller: str) -> None:
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


def sample_label_and_import(toml: str, sheet: Path) -> None:
    """Sample all four items to ``sheet``, label them as HUMAN (labeller 'ana'), import them."""
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    fill_like_a_spreadsheet(sheet, HUMAN, "ana")
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
