"""The full list of the judge's disagreements with the humans, as a spreadsheet file.

`judge audit` prints the first few (largest score gap first); the whole list goes here, in the
report folder being audited, so that nothing is lost to a terminal's scrollback.
"""

from __future__ import annotations

from pathlib import Path

from judge.audit.types import Disagreement
from judge.formatting import bom_csv
from judge.io.write import write_atomic

DISAGREEMENTS_FILE = "disagreements.csv"
HEADER = (
    "question_id",
    "type",
    "labeller",
    "human_faithfulness",
    "human_relevance",
    "judge_faithfulness",
    "judge_relevance",
    "gap",
    "question",
    "answer",
    "judge_note",
    "evidence",
    "match",
    "human_note",
)


def disagreements_csv(disagreements: list[Disagreement]) -> str:
    """CSV text (BOM, formula-safe through ``bom_csv``), one row per disagreement, in order."""
    rows = [
        (
            d.item.question_id,
            d.item.type,
            d.label.labeller,
            d.label.faithfulness,
            d.label.relevance,
            d.verdict.faithfulness,
            d.verdict.relevance,
            d.gap,
            d.item.question,
            d.item.answer,
            d.verdict.note,
            d.verdict.evidence,
            d.verdict.match.kind if d.verdict.match else "",
            d.label.note or "",
        )
        for d in disagreements
    ]
    return bom_csv(HEADER, rows)


def write_disagreements(disagreements: list[Disagreement], directory: Path) -> Path:
    """Write every disagreement to ``directory/disagreements.csv`` (whole or not at all)."""
    path = directory / DISAGREEMENTS_FILE
    write_atomic(path, disagreements_csv(disagreements))
    return path
