"""Sampling items for people to label: every unlabelled item once, never one labelled already."""

import csv
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.audit.conftest import sample_label_and_import


def test_labelled_items_are_not_sampled_again(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    sample_label_and_import(toml, sheet)
    rows = list(csv.DictReader(sheet.read_text(encoding="utf-8-sig").splitlines()))
    assert sorted(r["question_id"] for r in rows) == ["q1", "q2", "q3", "q4"]
    capsys.readouterr()
    # Labelled items are not sampled again.
    assert (
        main(
            ["--config", toml, "audit", "sample", "--n", "4", "--out", str(tmp_path / "again.csv")]
        )
        == 0
    )
    assert "only 0 unlabelled item(s)" in capsys.readouterr().out


def test_a_judge_unsure_of_its_scores_makes_an_item_uncertain() -> None:
    from judge.audit.agreement import lexical_scores
    from judge.audit.sampling import uncertainty
    from judge.judging.types import ContextChunk, EvidenceMatch, Verdict
    from judge.results.item_record import ItemRecord

    chunk = "自動バックアップは毎日午前3時に実行されます。"
    item = ItemRecord(
        question_id="q1",
        type="factual",
        split="",
        question="自動バックアップは何時に実行されますか？",
        answer="毎日午前3時です。",
        context=[ContextChunk(1, "backup/auto", chunk)],
        retrieval={},
        labels=[],
    )
    # Scored as the lexical baseline scores it, with the quote found: nothing else says unsure.
    f, r = lexical_scores(item)
    match = EvidenceMatch(kind="exact", chunk_id="backup/auto", start=0, end=len(chunk), coverage=1)
    sure = Verdict(
        question_id="q1", item_key="k", status="ok", faithfulness=f, relevance=r, match=match
    )
    assert uncertainty(item, sure) == []
    # 45 % on the faithfulness it gave, certain of its relevance: the lower one counts.
    unsure_f = tuple(0.45 if score == f else 0.275 for score in range(3))
    certain_r = tuple(float(score == r) for score in range(3))
    unsure = sure.model_copy(
        update={"score_probabilities": {"faithfulness": unsure_f, "relevance": certain_r}}
    )
    assert uncertainty(item, unsure) == ["judge confidence 45%"]
