"""``judge align`` with the real embedded Gemma 3 270M on the English sample's labels (slow):
the mechanics run end to end (variants judged on held-out labels, the guard decides, the cost
is reported). The 270M is a base model: what the guard decides is not asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.cli import main
from tests.conftest import REPO

pytestmark = pytest.mark.slow

SAMPLE_EN = REPO / "golden" / "sample-en"
ANSWERS = 4


def _cut(tmp_path: Path) -> Path:
    """The English sample cut to its first ``ANSWERS`` labelled answers, in ``tmp_path``."""
    labels = SAMPLE_EN / "labels.jsonl"
    labelled = {json.loads(line)["question_id"] for line in labels.read_text("utf-8").splitlines()}
    run = [json.loads(line) for line in (SAMPLE_EN / "run.jsonl").read_text("utf-8").splitlines()]
    kept = [r for r in run if r.get("id") in labelled][:ANSWERS]
    ids = {r["id"] for r in kept}
    (tmp_path / "run.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in run if "id" not in r)
        + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept),
        encoding="utf-8",
    )
    questions = (SAMPLE_EN / "questions.jsonl").read_text("utf-8").splitlines()
    (tmp_path / "questions.jsonl").write_text(
        "".join(q + "\n" for q in questions if json.loads(q)["id"] in ids), encoding="utf-8"
    )
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge.v1.md").write_bytes(
        (REPO / "prompts" / "judge.v1.md").read_bytes()
    )
    toml = tmp_path / "judge.toml"
    toml.write_text(
        f'[data]\nquestions = "questions.jsonl"\ncorpus = "{SAMPLE_EN / "corpus.jsonl"}"\n'
        f'run = "run.jsonl"\nlabels = "{labels}"\n\n[retrieval]\ncontext_k = 5\n\n'
        '[judge]\nbackend = "embedded"\nprompt = "prompts/judge.v1.md"\n'
        'cache_path = "cache.sqlite3"\n\n[reports]\ndir = "reports"\n',
        encoding="utf-8",
    )
    return toml


def test_align_runs_with_the_embedded_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _cut(tmp_path)
    args = ["--config", str(toml), "align", "--k", "1", "--folds", "2", "--budget", "1700"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "k=1: exact agreement (both axes)" in out
    assert f"on {ANSWERS} held-out items" in out
    guard = [line for line in out.splitlines() if line.startswith(("adopt k=1", "keep the"))]
    assert len(guard) == 1
    cost = [line for line in out.splitlines() if line.startswith("cost of k=1")]
    assert cost and "n/a prompt tokens" not in cost[0]  # llama.cpp counts the prompt
    if guard[0].startswith("adopt"):
        assert (tmp_path / "prompts" / "judge.v2.md").exists()
