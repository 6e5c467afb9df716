"""``judge.audit.panel_agreement``: each member's and the vote's agreement with the labels of
the exact answers, and the members' κ with each other over the answers both judged."""

from __future__ import annotations

from pathlib import Path

from judge.audit.panel_agreement import (
    PANEL,
    agreement_lines,
    members_agreement,
    members_kappa,
)
from judge.config import load_config
from judge.judging.items import build_items
from judge.judging.panel import panel_votes
from judge.judging.types import Verdict
from judge.pipeline.inputs import load_inputs

REPO = Path(__file__).resolve().parents[2]


def _verdict(qid: str, f: int, r: int, status: str = "ok") -> Verdict:
    if status != "ok":
        return Verdict(question_id=qid, item_key="k", status="parse_error")
    return Verdict(question_id=qid, item_key="k", status="ok", faithfulness=f, relevance=r)


def test_members_and_the_vote_against_the_labels_and_each_other() -> None:
    config = load_config(REPO / "golden" / "sample-en" / "judge.toml")
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    labels = inputs.labels.current
    first = {lab.question_id: lab for lab in sorted(labels, key=lambda x: x.labeller)}
    right = {q: _verdict(q, lab.faithfulness, lab.relevance) for q, lab in first.items()}
    ids = [item.question_id for item in items]
    always_two = {q: _verdict(q, 2, 2) for q in ids}
    broken = {q: _verdict(q, 0, 0, "parse_error" if i % 2 else "ok") for i, q in enumerate(ids)}
    members = {"a": right, "b": always_two, "c": broken}
    votes = panel_votes(members, ids)
    rows = members_agreement(items, labels, members, votes)
    assert [row.member for row in rows] == ["a", "b", "c", PANEL]
    a, b, c, vote = rows
    assert a.per_axis["faithfulness"].n == len(labels)
    # "a" agrees with the first labeller everywhere; the second may differ.
    assert a.per_axis["faithfulness"].exact is not None
    assert a.per_axis["faithfulness"].exact > b.per_axis["faithfulness"].exact  # type: ignore[operator]
    assert c.per_axis["relevance"].n < len(labels)  # only its ok verdicts count
    assert vote.per_axis["relevance"].n == len(labels)
    pairs = members_kappa(votes)
    assert [(p.first, p.second) for p in pairs] == [
        ("a", "b"),
        ("a", "b"),
        ("a", "c"),
        ("a", "c"),
        ("b", "c"),
        ("b", "c"),
    ]
    ab = pairs[0]
    assert ab.n == len(ids) and ab.axis == "faithfulness"
    assert pairs[2].n == (len(ids) + 1) // 2  # "c" judged every other answer
    lines = agreement_lines(rows, pairs)
    assert lines[0].startswith("agreement with the human labels")
    assert any(line.startswith("  a · b, faithfulness: κ") for line in lines)
    assert all("n = " in line for line in lines[1:] if line.startswith("  "))


def test_no_votes_no_pairs() -> None:
    assert members_kappa([]) == []
