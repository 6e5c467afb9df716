"""The review queue catches a weak judge (``judge.results.review``): a cited sentence unrelated
to the answer, one position cited for most items, an injection on a verdict that failed, and
the judge being the generator's model. Also the majority-class line beside every agreement
figure in report.md."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.judging.backends.base import JudgeRequest
from judge.judging.injection import INJECTION_EN, INJECTION_JA
from judge.judging.types import ContextChunk, EvidenceMatch, Verdict
from judge.judging.verdict import Reply
from judge.pipeline.evaluate import evaluate
from judge.report.summary import console_summary
from judge.results import review
from judge.results.item_record import ItemRecord
from judge.results.review import (
    SAME_POSITION_MIN,
    TRIAGE_FLAGS,
    content_tokens,
    position_bias,
    self_judging,
    triage,
)
from tests.conftest import REPO, RUN
from tests.fakes import ScriptedBackend

CONTEXT = [
    ContextChunk(1, "pricing/plans", "プレミアムプランは月額400円、年額3,800円です。"),
    ContextChunk(2, "pricing/trial", "初回のみ7日間の無料体験があります。"),
]


def _item(answer: str = "年額3,800円です。", **changes: Any) -> ItemRecord:
    fields: dict[str, Any] = {
        "question_id": "q1",
        "type": "factual",
        "split": "",
        "question": "年額プランはいくらですか？",
        "answer": answer,
        "context": CONTEXT,
        "relevant_chunks": ["pricing/plans"],
        "retrieval": {},
        "labels": [],
    }
    return ItemRecord(**(fields | changes))


def _cited(sentence: int, text: str, qid: str = "q1", chunk: str = "pricing/plans") -> Verdict:
    return Verdict(
        question_id=qid,
        item_key="k",
        status="ok",
        faithfulness=2,
        relevance=2,
        mode="cited",
        evidence=text,
        match=EvidenceMatch(
            kind="cited", chunk_id=chunk, start=0, end=len(text), sentence=sentence
        ),
    )


def test_every_new_flag_is_a_documented_filter() -> None:
    for flag in ("injection", "cited_unrelated", "same_position"):
        assert flag in TRIAGE_FLAGS


def test_an_answer_a_panel_disputed_needs_review() -> None:
    assert "panel_disputed" in TRIAGE_FLAGS
    verdict = _cited(1, CONTEXT[0].text)
    assert not triage(_item(), verdict).needs_review
    found = triage(_item(), verdict, None, (), ("faithfulness 2 points apart", "relevance split"))
    assert found.flags == ["panel_disputed"] and found.needs_review
    assert found.reasons == [
        "the panel of judges disputes it: faithfulness 2 points apart; relevance split"
    ]


def test_content_tokens_leave_out_function_words_and_particles() -> None:
    assert content_tokens("The plan is in the app") == {"plan", "app"}
    assert "です" not in content_tokens("年額3,800円です。")
    assert "年額" in content_tokens("年額3,800円です。")


def test_a_cited_sentence_sharing_nothing_with_the_answer_needs_review() -> None:
    related = triage(_item(), _cited(1, CONTEXT[0].text))
    assert related.flags == [] and not related.needs_review
    unrelated = triage(_item(), _cited(2, CONTEXT[1].text, chunk="pricing/trial"))
    assert "cited_unrelated" in unrelated.flags and unrelated.needs_review
    assert "cited sentence 2 in pricing/trial shares no content with the answer" in (
        unrelated.reasons
    )
    # English: sharing only "the" and "is" is sharing nothing.
    english = _item(
        "The yearly plan costs 3,800 yen.",
        context=[ContextChunk(1, "x", "The trial is free for seven days.")],
        relevant_chunks=["x"],
    )
    assert (
        "cited_unrelated"
        in triage(english, _cited(1, "The trial is free for seven days.", chunk="x")).flags
    )
    # A quote-mode verdict is not looked at this way (its quote is checked against the chunks).
    quoted = _cited(2, CONTEXT[1].text).model_copy(update={"mode": "quote"})
    assert "cited_unrelated" not in triage(_item(), quoted).flags


def test_one_position_cited_for_most_items_is_a_run_warning_and_a_reason() -> None:
    n = SAME_POSITION_MIN + 2  # 12
    ones = [_cited(1, CONTEXT[0].text, f"q{i}") for i in range(n)]
    # Three quarters or more citing sentence 1: a warning, and a reason on those items.
    biased = ones[:9] + [_cited(2, CONTEXT[1].text, f"r{i}") for i in range(3)]
    bias = position_bias(biased)
    assert bias is not None and (bias.sentence, bias.k, bias.n) == (1, 9, 12)
    assert "cited sentence 1 in 9 of 12 verdicts" in bias.warning
    flagged = triage(_item(), biased[0], bias)
    assert "same_position" in flagged.flags and flagged.needs_review
    assert any("as 9 of 12 cited verdicts do" in r for r in flagged.reasons)
    other = triage(_item(), biased[-1], bias)
    assert "same_position" not in other.flags
    # Below three quarters: no warning.
    assert position_bias(ones[:8] + [_cited(2, "x", f"r{i}") for i in range(4)]) is None
    # Too few cited verdicts to say: no warning, even all on one position.
    assert position_bias(ones[: SAME_POSITION_MIN - 1]) is None
    assert position_bias(ones[:SAME_POSITION_MIN]) is not None
    # Citing no sentence (0) and quote-mode verdicts do not count.
    quotes = [v.model_copy(update={"mode": "quote"}) for v in ones]
    assert position_bias(quotes) is None


def test_the_injection_flag_applies_whatever_the_verdict_status() -> None:
    for injection in (INJECTION_EN, INJECTION_JA):
        item = _item(f"年額3,800円です。 {injection}")
        failed = Verdict(
            question_id="q1", item_key="k", status="parse_error", error="not JSON", mode="quote"
        )
        found = triage(item, failed)
        assert found.flags == ["not_ok", "injection"]
        assert found.reasons[0] == "parse_error: not JSON"
        assert any("the answer" in r for r in found.reasons[1:])
        # An ok verdict carries the detector's reason itself; the flag is added once.
        ok = _cited(1, CONTEXT[0].text).model_copy(
            update={"review": ("instruction in the answer",)}
        )
        flags = triage(item, ok).flags
        assert flags.count("injection") == 1 and "verdict_flags" in flags
    # In a chunk too.
    chunk = ContextChunk(3, "evil", INJECTION_EN)
    failed = Verdict(question_id="q1", item_key="k", status="truncated", error="cut")
    assert "injection" in triage(_item(context=[*CONTEXT, chunk]), failed).flags
    assert triage(_item(), failed).flags == ["not_ok"]


# --- self-judging ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("judge", "generator", "warned"),
    [
        ("gemma3:12b", "gemma3:12b", True),  # the same Ollama tag
        ("gemma3", "gemma3:latest", True),
        ("gemma3:12b", "google/gemma-3-12b-it", True),  # the same family and size
        ("gemma-3-12b-it", "Gemma 3 12B", True),
        ("gemma-3-270m-it-Q4_K_M.gguf", "gemma3:270m", True),
        ("llama3.1:8b", "Meta-Llama-3.1-8B-Instruct", True),
        ("gemma3:12b", "gemma3:27b", False),  # a larger judge: what the article does
        ("gemma3:12b", "gemma3", False),  # no size named: not known to be the same
        ("qwen2.5:7b", "gemma3:7b", False),
        ("gemma3:12b", None, False),
        ("lexical-v6", "gpt-4o", False),
    ],
)
def test_self_judging_is_the_same_tag_or_the_same_family_and_size(
    judge: str, generator: str | None, warned: bool
) -> None:
    warning = self_judging(judge, generator)
    assert (warning is not None) is warned
    if warning is not None:
        assert "rate its own style as correct" in warning and "larger model" in warning


def _cited_reply(request: JudgeRequest) -> Reply:
    payload = {"evidence_sentence": 1, "faithfulness": 2, "relevance": 2, "note": "ok"}
    return Reply(text=json.dumps(payload), finish_reason="stop")


def test_report_and_console_warn_of_self_judging_and_position_bias(
    tiny: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = copy.deepcopy(RUN)
    run[0]["run_meta"]["generator_model"] = "google/gemma-3-12b-it"
    config: Config = tiny(run=run).with_overrides(
        judge={"prompt": REPO / "prompts" / "judge.cited.v1.md"}
    )
    # The tiny set has 4 questions: let 4 verdicts be enough to call a position bias.
    monkeypatch.setattr(review, "SAME_POSITION_MIN", 4)
    result = evaluate(config, backend=ScriptedBackend(_cited_reply, model="gemma3:12b"))
    record = result.report
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    header = report_md.split("## Per question type", 1)[0]
    assert (
        "- **warning**: self-judging: the judge's model (gemma3:12b) is the generator's" in header
    )
    assert "the judge cited sentence 1 in 4 of 4 verdicts" in header
    console = "\n".join(console_summary(record, result.folder.path))
    assert "warning: self-judging: the judge's model (gemma3:12b) is the generator's" in console
    # Every item cites sentence 1: a reason on each, so each needs review.
    assert [row.question_id for row in record.needs_review] == ["q1", "q2", "q3", "q4"]
    assert all("same_position" in row.triage.flags for row in record.questions)


def test_no_self_judging_warning_for_another_generator(tiny: Any) -> None:
    run = copy.deepcopy(RUN)
    run[0]["run_meta"]["generator_model"] = "gemma3:4b"
    result = evaluate(tiny(run=run), backend=ScriptedBackend(model="gemma3:12b"))
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "self-judging" not in report_md


# --- the majority-class line beside every agreement figure -------------------------------------


def test_report_md_shows_the_majority_class_beside_both_axes(
    sample_config: Config, tmp_path: Path
) -> None:
    config = sample_config.with_overrides(
        judge={"cache_path": tmp_path / "cache.sqlite"}, reports={"dir": tmp_path / "reports"}
    )
    result = evaluate(config, backend="lexical")
    audit = result.report.audit
    assert audit is not None
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    section = report_md.split("## Agreement with human labels", 1)[1].split("\n## ", 1)[0]
    assert "| faithfulness exact | faithfulness majority |" in section
    assert "| relevance exact | relevance majority |" in section
    f = audit.judge.per_axis["faithfulness"]["all"]
    r = audit.judge.per_axis["relevance"]["all"]
    (judge_row,) = [
        line
        for line in section.splitlines()
        if line.startswith("| judge |") and "both exact" not in line
    ]
    assert (
        f"(always {f.majority_class})" in judge_row and f"(always {r.majority_class})" in judge_row
    )
    cells = [c.strip() for c in judge_row.split("|")[1:-1]]
    assert cells[4].endswith(f"(always {f.majority_class})")
    assert cells[8].endswith(f"(always {r.majority_class})")


def test_a_foreign_quote_names_five_golden_chunks_then_counts_the_rest() -> None:
    """TREC-style labels gave one question dozens of golden chunks: the reason named every one
    (1,898 characters on one line)."""
    golden = [f"doc{i:02d}/passage" for i in range(40)]
    found = triage(_item(relevant_chunks=golden), _cited(2, CONTEXT[1].text, chunk="pricing/trial"))
    reason = next(r for r in found.reasons if "not a golden chunk" in r)
    assert reason.endswith(
        "not a golden chunk (doc00/passage, doc01/passage, doc02/passage, doc03/passage, "
        "doc04/passage, … (35 more))"
    )
    few = triage(
        _item(relevant_chunks=["a", "b"]), _cited(2, CONTEXT[1].text, chunk="pricing/trial")
    )
    assert any(r.endswith("not a golden chunk (a, b)") for r in few.reasons)
