"""``judge.pipeline.retrieval``: retrieval written as JSON; TREC files out and back in."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.pipeline.inputs import Inputs
from judge.pipeline.retrieval import export_trec, retrieval

Tiny = Callable[..., Config]


def test_retrieval_writes_its_table_to_the_reports_folder_by_default(tiny: Tiny) -> None:
    config = tiny()
    seen: list[Inputs] = []
    result = retrieval(config, on_inputs=seen.append)
    assert result.out == config.reports.dir / "retrieval.json"
    payload = json.loads(result.out.read_text(encoding="utf-8"))
    assert payload["run"] == result.measured.run_source == seen[0].run_source
    assert payload["excluded"] == {"q4": "no relevant chunks (out of scope)"}
    assert payload["table"]["weakest_type"] == "negative"


def test_a_trec_export_scores_like_the_run_it_came_from(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tiny()
    exported = export_trec(config, qrels=tmp_path / "t" / "qrels.txt")
    assert exported.qrels == tmp_path / "t" / "qrels.txt"
    assert exported.run == config.reports.dir / "trec" / "run.txt"
    assert exported.run_lines == len(exported.run.read_text(encoding="utf-8").splitlines())
    assert exported.qrels_lines == len(exported.qrels.read_text(encoding="utf-8").splitlines())
    from_run = retrieval(config, out=tmp_path / "a.json")
    monkeypatch.chdir(exported.run.parent)
    from_trec = retrieval(
        config, trec_run="./run.txt", trec_qrels=exported.qrels, out=tmp_path / "b.json"
    )
    assert from_trec.measured.run_source == "./run.txt"  # named as given
    assert from_trec.measured.retrieval.to_json() == from_run.measured.retrieval.to_json()
