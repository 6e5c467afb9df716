"""``judge.pipeline.panel``: every member judges through the cache under its own fingerprint,
the vote is marked where a member failed, the members are measured against the labels and each
other, and the disputed answers go first into the next ``judge audit sample``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.audit.sampling import sample_items
from judge.config import Config, JudgeConfig, load_config
from judge.errors import BackendUnavailable, ConfigError
from judge.hashing import text_sha256
from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.registry import OpenedBackend
from judge.judging.verdict import Reply
from judge.pipeline.panel import disputed_answers, panel, panel_lines, panel_summary
from judge.results.item_record import ItemRecord
from tests.fakes import ScriptedBackend
from tests.pipeline.test_align import HUMAN

REPO = Path(__file__).resolve().parents[2]


def _reply(faithfulness: int, relevance: int, request: JudgeRequest) -> Reply:
    quote = request.context[0].text.split("。")[0] + "。" if request.context else ""
    payload = {"evidence": quote, "faithfulness": faithfulness, "relevance": relevance, "note": ""}
    return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")


def human(request: JudgeRequest) -> Reply:
    """Right on every labelled answer."""
    return _reply(*HUMAN.get(text_sha256(request.answer), (2, 2)), request)


def contrary(request: JudgeRequest) -> Reply:
    """Two points off faithfulness on questions mentioning a price (円 or $), else right; no
    reply it can parse on answers that mention PRO."""
    if "PRO" in request.answer:
        return Reply(text="I cannot grade this.", finish_reason="stop")
    f, r = HUMAN.get(text_sha256(request.answer), (2, 2))
    return _reply(2 - f if "円" in request.answer else f, r, request)


Members = dict[str, ScriptedBackend]


@pytest.fixture
def members(monkeypatch: pytest.MonkeyPatch) -> Members:
    backends = {
        "ollama": ScriptedBackend(human, model="family-a"),
        "openai": ScriptedBackend(contrary, model="family-b"),
    }

    def opened(judge: JudgeConfig) -> OpenedBackend:
        if judge.backend not in backends:
            raise BackendUnavailable(f"no {judge.backend} server")
        return OpenedBackend(backends[judge.backend], f"backend = {judge.backend}")

    monkeypatch.setattr("judge.pipeline.session.open_backend", opened)
    return backends


def _config(tmp_path: Path, members: list[str]) -> Config:
    return load_config(REPO / "judge.toml").with_overrides(
        judge={"cache_path": tmp_path / "cache.sqlite3", "panel": {"members": members}},
        reports={"dir": tmp_path / "reports"},
    )


def test_the_panel_votes_measures_and_marks_failed_members(
    members: Members, tmp_path: Path
) -> None:
    paneled = panel(_config(tmp_path, ["ollama", "openai"]))
    assert paneled.members == ("ollama", "openai")
    assert all("scripted" in paneled.judges[m] for m in paneled.members)
    votes = {v.question_id: v for v in paneled.votes}
    failed = [v for v in votes.values() if v.voters == 1]
    assert failed and all("1 of 2 voted" in v.flags for v in failed)
    assert all(v.by_member["openai"] is None for v in failed)
    apart = [v for v in votes.values() if any("2 points apart" in f for f in v.flags)]
    assert apart
    for vote in apart:  # a tie of two goes to the lower score
        scores = [s for s in vote.by_member.values() if s is not None]
        assert vote.scores is not None
        assert vote.scores[0] == min(s[0] for s in scores)
    rows = {row.member: row for row in paneled.agreement}
    assert rows["ollama"].per_axis["faithfulness"].n == 42
    assert rows["ollama"].per_axis["faithfulness"].exact is not None
    assert rows["openai"].per_axis["faithfulness"].n < 42
    assert rows["panel vote"].per_axis["relevance"].n == 42
    pairs = {(p.first, p.second, p.axis): p for p in paneled.kappas}
    assert pairs[("ollama", "openai", "faithfulness")].kappa is not None
    lines = panel_lines(paneled)
    assert any(line.startswith("  ollama · openai, faithfulness: κ ") for line in lines)
    assert any(line.startswith("disputed (2 points apart or split): ") for line in lines)
    assert paneled.report is not None and paneled.report.exists()


def test_each_member_is_cached_under_its_own_fingerprint(members: Members, tmp_path: Path) -> None:
    config = _config(tmp_path, ["ollama", "openai"])
    panel(config)
    asked = {name: len(b.calls) for name, b in members.items()}
    assert asked["ollama"] == asked["openai"] == 30
    panel(config)
    assert {name: len(b.calls) for name, b in members.items()} == asked


def test_a_member_that_cannot_be_opened_leaves_a_marked_vote(
    members: Members, tmp_path: Path
) -> None:
    paneled = panel(_config(tmp_path, ["ollama", "embedded"]))
    assert paneled.judges["embedded"].startswith("not available: no embedded server")
    assert all(v.voters == 1 and v.members == 2 for v in paneled.votes)
    assert all(v.flags == ("1 of 2 voted",) for v in paneled.votes)


def test_no_panel_is_one_line(tmp_path: Path) -> None:
    config = load_config(REPO / "judge.toml")
    with pytest.raises(ConfigError, match=r"no panel: add \[judge.panel\]"):
        panel(config)


def test_disputed_answers_go_first_into_the_next_audit_sample(
    members: Members, tmp_path: Path
) -> None:
    config = _config(tmp_path, ["ollama", "openai"])
    paneled = panel(config)
    disputed = disputed_answers(config.reports.dir)
    assert disputed == {
        (v.question_id, text_sha256(_answer(v.question_id))) for v in paneled.votes if v.disputed
    }
    assert disputed
    items = _records()
    chosen = {item.question_id for item in sample_items(items, {}, [], 8, 0.0, 0, disputed)}
    types = {items[qid].type for qid, _ in disputed}
    for name in types:  # every type's quota starts with an answer the panel disputed
        assert {qid for qid, _ in disputed if items[qid].type == name} & chosen
    # Only the exact answer counts: a disputed question answered anew is not taken first.
    stale = {(qid, text_sha256("another answer")) for qid, _ in disputed}
    plain = {item.question_id for item in sample_items(items, {}, [], 8, 0.0, 0)}
    assert {i.question_id for i in sample_items(items, {}, [], 8, 0.0, 0, stale)} == plain


def test_no_panel_file_is_no_disputed_answers(tmp_path: Path) -> None:
    assert disputed_answers(tmp_path) == set()
    (tmp_path / "panel").mkdir()
    (tmp_path / "panel" / "x.json").write_text("not json", encoding="utf-8")
    assert disputed_answers(tmp_path) == set()


def _run() -> dict[str, dict[str, object]]:
    lines = (REPO / "golden" / "sample" / "run.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines) if "id" in r}


def _answer(qid: str) -> str:
    return str(_run()[qid]["answer"])


def _records() -> dict[str, ItemRecord]:
    lines = (REPO / "golden" / "sample" / "questions.jsonl").read_text(encoding="utf-8")
    types = {q["id"]: q["type"] for q in map(json.loads, lines.splitlines())}
    return {
        qid: ItemRecord(
            question_id=qid,
            type=types[qid],
            split="",
            question="",
            answer=str(record["answer"]),
            context=[],
            retrieval={},
            labels=[],
        )
        for qid, record in _run().items()
    }


def test_the_panel_is_summarised_for_the_views_of_a_run_of_its_answers(
    members: Members, tmp_path: Path
) -> None:
    config = _config(tmp_path, ["ollama", "openai"])
    paneled = panel(config)
    answers = {qid: text_sha256(_answer(qid)) for qid in _run()}
    summary = panel_summary(config.reports.dir, answers)
    assert summary is not None
    assert summary.members == ("ollama", "openai")
    assert summary.answers == len(paneled.votes)
    assert paneled.report is not None and summary.report == paneled.report.name
    assert {v.question_id: v.flags for v in paneled.votes if v.disputed} == summary.disputed
    humans = {(p.first, p.axis): p for p in summary.with_humans}
    rows = {row.member: row for row in paneled.agreement}
    for name in ("ollama", "openai", "panel vote"):
        stats = rows[name].per_axis["faithfulness"]
        kept = humans[(name, "faithfulness")]
        assert (kept.second, kept.n, kept.kappa, kept.interval) == (
            "humans",
            stats.n,
            stats.kappa,
            stats.kappa_ci,
        )
    assert summary.between == paneled.kappas
    # Another run's answers: the panel says nothing of them.
    assert panel_summary(config.reports.dir, {qid: "other" for qid in answers}) is None
    # Only the exact answers judged are counted, and only theirs are disputed.
    first = next(iter(summary.disputed))
    some = panel_summary(config.reports.dir, {first: answers[first], "q-new": "x"})
    assert some is not None and some.answers == 1 and set(some.disputed) == {first}


def test_no_panel_file_is_no_summary(tmp_path: Path) -> None:
    assert panel_summary(tmp_path, {"q1": "x"}) is None
    (tmp_path / "panel").mkdir()
    (tmp_path / "panel" / "x.json").write_text('{"disputed": []}', encoding="utf-8")
    assert panel_summary(tmp_path, {"q1": "x"}) is None  # written before the summary was kept
