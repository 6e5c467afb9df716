"""The shared set-up of the sweep tests: the shipped sample with a ``[sweep]`` table over a test
RAG system (``sweep_config``), and what that system was asked (``calls``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.config import Config, load_config

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "golden" / "sample"

# A test RAG system over the sample: its recorded run, or with `oracle` the relevant chunks
# first (a setting that is clearly better); `holdout_oracle` is better on the holdout only.
# Every call is counted per (params, question) so that tests see what was asked.
ADAPTER = f"""
import json
from collections import Counter
CALLS = Counter()
QUESTIONS = {{}}
with open({str(SAMPLE / "questions.jsonl")!r}, encoding="utf-8") as lines:
    for line in lines:
        q = json.loads(line)
        QUESTIONS[q["question"]] = q
RUN = {{}}
with open({str(SAMPLE / "run.jsonl")!r}, encoding="utf-8") as lines:
    for line in lines:
        r = json.loads(line)
        if "id" in r:
            RUN[r["id"]] = r

def answer(question, params):
    q = QUESTIONS[question]
    CALLS[(json.dumps(params, sort_keys=True), q["id"])] += 1
    if params.get("fail_one") and q["id"] == "q01":
        raise RuntimeError("index shard missing")
    record = RUN[q["id"]]
    ranked = [item["chunk_id"] for item in record["retrieved"]]
    if params.get("order") == "reversed":
        ranked = ranked[::-1]
    better = params.get("order") == "oracle" or params.get("oracle") or (params.get("holdout_oracle") and q.get("split") == "holdout")
    if better:
        relevant = q.get("relevant_chunks") or []
        ranked = relevant + [c for c in ranked if c not in relevant]
    return {{"retrieved": ranked, "answer": record["answer"]}}

def build(params):
    if params.get("oracle") == "broken":
        raise ValueError("no index for that")
    return lambda question: answer(question, params)
"""


@pytest.fixture
def sweep_config(tmp_path: Path) -> Iterator[Callable[..., Config]]:
    """``sweep_config(grid_toml)``: the sample set with a [sweep] over the test adapter."""
    (tmp_path / "sweep_rag.py").write_text(ADAPTER, encoding="utf-8")

    def make(sweep_toml: str, shape: str = 'answer = "sweep_rag:answer"') -> Config:
        path = tmp_path / "judge.toml"
        path.write_text(
            f'[data]\nquestions = "{SAMPLE / "questions.jsonl"}"\n'
            f'corpus = "{SAMPLE / "corpus.jsonl"}"\nrun = "{SAMPLE / "run.jsonl"}"\n'
            f'[judge]\nbackend = "lexical"\ncache_path = "{tmp_path / "cache.sqlite3"}"\n'
            f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
            f'[reports]\ndir = "{tmp_path / "reports"}"\n'
            f"[sweep]\n{shape}\n{sweep_toml}\n",
            encoding="utf-8",
        )
        return load_config(path)

    yield make
    sys.modules.pop("sweep_rag", None)


def calls() -> dict[tuple[str, str], int]:
    return dict(sys.modules["sweep_rag"].CALLS)  # type: ignore[attr-defined]


# The setting in use reverses the ranking (a bad default); "oracle" is clearly better.
ORACLE_GRID = """judge_top = 1
[sweep.grid]
order = ["reversed", "recorded", "oracle"]
noise = [0, 1]
[sweep.default]
order = "reversed"
noise = 0
"""
