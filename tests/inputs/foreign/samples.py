"""The sample files of other tools (``tests/data/foreign/``) and helpers the import tests share.

The samples are written the way each tool's own writer writes them (docs/imports.md cites the
writers): Ragas' ``to_jsonl`` and ``to_csv`` (``csv.DictWriter``, a list cell as ``str(list)``),
DeepEval's ``save_as`` as JSON, CSV and JSONL (lists joined with ``|``), and OTLP JSON lines as
the collector's file exporter writes them, with OpenInference attributes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judge.config import Config, load_config
from judge.pipeline.imports import ImportedFiles

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "foreign"

#: (tool, file, questions per type, out-of-scope question, chunks): counted by hand from the files.
SAMPLES = [
    ("ragas", "ragas.jsonl", {"factual": 3, "out_of_scope": 1}, "Does it work with Starlink?", 5),
    ("ragas", "ragas.csv", {"factual": 3, "out_of_scope": 1}, "Windows版はありますか", 4),
    (
        "deepeval",
        "deepeval.json",
        {"factual": 3, "out_of_scope": 1},
        "Can I get a trade-in discount?",
        5,
    ),
    (
        "deepeval",
        "deepeval.csv",
        {"factual": 3, "out_of_scope": 1},
        "Can I get a trade-in discount?",
        5,
    ),
    (
        "deepeval",
        "deepeval.jsonl",
        {"factual": 3, "out_of_scope": 1},
        "Can I get a trade-in discount?",
        5,
    ),
    ("otel", "otel.jsonl", {"factual": 3, "out_of_scope": 0}, None, 5),
]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def config_for(imported: ImportedFiles, folder: Path) -> Config:
    """A judge.toml beside the imported folder, its [data] table the one the import printed."""
    toml = folder / "judge.toml"
    toml.write_text(
        "\n".join(imported.data_lines)
        + f'\n\n[judge]\ncache_path = "{folder / "cache.sqlite3"}"\n'
        + f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
        + f'\n[reports]\ndir = "{folder / "reports"}"\n',
        encoding="utf-8",
    )
    return load_config(toml)
