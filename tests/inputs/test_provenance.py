"""Index provenance: the embedder's dimension and canary vectors, from a run file or an adapter;
a malformed canary is one located error, a changed one a changed setting."""

import json
import math
from pathlib import Path
from typing import Any

import pytest

from judge.errors import InputError
from judge.inputs.golden import load_golden
from judge.inputs.provenance import adapter_meta, produced_meta
from judge.inputs.runs import RunMeta, canary_digest, load_run
from judge.results.history import settings_changes
from tests.report.review_screens import REPO, sample_config

CANARIES = [[0.12, -0.5, 0.33], [0.9, 0.01, -0.2]]


def _answer(question: str) -> dict[str, Any]:
    return {"retrieved": [], "answer": "x"}


def test_an_adapter_states_its_embedder_and_canaries() -> None:
    def answer(question: str) -> dict[str, Any]:
        return _answer(question)

    answer.run_meta = {  # type: ignore[attr-defined]
        "embedding_model": "e5-small",
        "embedding_dimension": 3,
        "embedding_canaries": CANARIES,
    }
    stated = adapter_meta("rag:answer", answer)
    assert stated is not None and stated.embedding_dimension == 3
    meta = produced_meta("rag:answer", stated, {})
    assert meta.system == "rag:answer" and meta.adapter == "rag:answer"
    assert meta.settings().embedding_canary == canary_digest(CANARIES)


def test_an_adapter_may_state_its_meta_through_a_function() -> None:
    def answer(question: str) -> dict[str, Any]:
        return _answer(question)

    answer.run_meta = lambda: {"embedding_model": "e5", "system": "mine"}  # type: ignore[attr-defined]
    stated = adapter_meta("rag:answer", answer)
    assert stated is not None and produced_meta("rag:answer", stated, {}).system == "mine"
    assert adapter_meta("rag:answer", _answer) is None


@pytest.mark.parametrize(
    ("canaries", "dimension", "said"),
    [
        ([[0.1, 0.2], [0.1, 0.2, 0.3]], None, "embedding_canaries[1] has 3 values"),
        (
            [[0.1, 0.2, 0.3]],
            4,
            "embedding_canaries[0] has 3 values and the embedding dimension is 4",
        ),
        ([[0.1, math.nan, 0.3]], 3, "embedding_canaries"),
    ],
)
def test_a_malformed_canary_from_an_adapter_is_a_located_error(
    canaries: list[list[float]], dimension: int | None, said: str
) -> None:
    def answer(question: str) -> dict[str, Any]:
        return _answer(question)

    answer.run_meta = {"embedding_canaries": canaries, "embedding_dimension": dimension}  # type: ignore[attr-defined]
    with pytest.raises(InputError) as caught:
        adapter_meta("rag:answer", answer)
    assert caught.value.problems[0].startswith("rag:answer: run_meta")
    assert said in str(caught.value)


def test_an_adapter_stating_unknown_fields_or_raising_is_told_what_to_do() -> None:
    def answer(question: str) -> dict[str, Any]:
        return _answer(question)

    answer.run_meta = {"failed": {}}  # type: ignore[attr-defined]
    with pytest.raises(InputError, match=r"unknown field.*failed; an adapter may state"):
        adapter_meta("rag:answer", answer)

    def broken() -> dict[str, Any]:
        raise RuntimeError("index offline")

    answer.run_meta = broken  # type: ignore[attr-defined]
    with pytest.raises(InputError, match=r"run_meta\(\) raised RuntimeError: index offline"):
        adapter_meta("rag:answer", answer)


def _run_file(tmp_path: Path, **meta: Any) -> Path:
    lines = (REPO / "golden" / "sample" / "run.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["run_meta"].update(meta)
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    return path


def test_a_run_file_with_a_wrong_dimension_canary_is_located(tmp_path: Path) -> None:
    golden = load_golden(sample_config(tmp_path).data)
    path = _run_file(tmp_path, embedding_dimension=2, embedding_canaries=CANARIES)
    with pytest.raises(InputError) as caught:
        load_run(path, golden)
    assert caught.value.problems[0].startswith(f"{path}:1: ")
    assert "embedding_canaries[0] has 3 values and the embedding dimension is 2" in str(
        caught.value
    )


def test_a_run_file_with_a_nan_canary_is_located(tmp_path: Path) -> None:
    golden = load_golden(sample_config(tmp_path).data)
    path = _run_file(tmp_path, embedding_canaries=[[0.1, 0.2]])
    path.write_text(path.read_text(encoding="utf-8").replace("0.2]]", "NaN]]", 1), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_run(path, golden)
    assert str(path) in caught.value.problems[0] and ":1" in caught.value.problems[0]


def test_a_canary_change_under_the_same_name_is_a_changed_setting() -> None:
    before = RunMeta(embedding_model="e5", embedding_canaries=CANARIES).settings()
    moved = [[v + 0.01 for v in vector] for vector in CANARIES]
    after = RunMeta(embedding_model="e5", embedding_canaries=moved).settings()
    same = RunMeta(
        embedding_model="e5", embedding_canaries=[[v + 1e-7 for v in c] for c in CANARIES]
    )
    changes = settings_changes(before, after, "retrieval")
    assert len(changes) == 1 and changes[0].startswith("the embedding canary (c:")
    assert settings_changes(before, same.settings(), "retrieval") == []
