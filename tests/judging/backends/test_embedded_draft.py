"""Drafting golden questions with the embedded Gemma 3 270M, for real (slow): the drafting task
runs through the real model, and verification rejects its drafts with their reasons. A 270M base
model has no drafting skill; the point is that nothing it writes reaches a person unchecked."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.config import load_config
from judge.inputs.candidates import check_name, load_candidates
from judge.judging.backends.base import JudgeBackend
from judge.pipeline.propose import propose_from_corpus
from tests.conftest import REPO

pytestmark = pytest.mark.slow

pytest.importorskip("judge.judging.backends.embedded")

CHECKS = {
    "no_question",
    "type",
    "chunk_missing",
    "span_absent",
    "limit_not_relevant",
    "answered_by_corpus",
    "leak",
    "covered",
    "duplicate",
    "unread",
}


def test_the_270m_drafts_ten_questions_and_verification_rejects_them_with_reasons(
    embedded_backend: JudgeBackend, tmp_path: Path
) -> None:
    config = load_config(REPO / "judge.toml").with_overrides(
        judge={"cache_path": tmp_path / "c.sqlite3"}
    )
    out = tmp_path / "drafts.jsonl"
    proposed = propose_from_corpus(config, out, count=10, backend=embedded_backend)
    drafts = load_candidates(out)
    assert len(drafts) == 10 and drafts == list(proposed.candidates)
    assert proposed.drafted_by.startswith("embedded")
    for draft in drafts:
        assert {check_name(reason) for reason in draft.rejected} <= CHECKS, draft.rejected
    rejected = [d for d in drafts if d.rejected]
    print(
        f"\n270M drafts: {proposed.passed} of 10 passed; rejected by check {proposed.rejected_by()}"
    )
    for d in drafts:
        print(f"  {d.type:13} {d.question[:60]!r} {list(d.rejected)}")
    assert rejected, "a 270M base model's drafts all passed: check the checks"
