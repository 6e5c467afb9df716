"""The record's assembly (``judge.record.build``, ``judge.record.rows``), through the runs that
build it: what a prompt edit shows (flipped verdicts and agreement before and after), and the
evidence a row's verdict carries into the views."""

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.hashing import text_sha256
from judge.judging.backends.base import JudgeRequest
from judge.judging.evidence import answer_sentences, context_sentences
from judge.judging.verdict import Reply, make_verdict
from judge.pipeline.evaluate import Evaluation, evaluate
from judge.report.answers_text import needs_review_lines
from judge.report.files import render_files
from judge.report.markdown import render_report_md
from judge.report.review_page import page_data
from judge.report.summary import console_summary
from judge.results.review import triage
from tests.conftest import REPO, RUN
from tests.fakes import ScriptedBackend, good_reply

Tiny = Callable[..., Config]


def test_a_prompt_edit_does_not_change_the_lexical_baseline(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "judge.v2.md"
    prompt.write_text(
        (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    config = tiny()
    assert config.source is not None
    args = ["--config", str(config.source), "run", "--backend", "lexical", "--prompt", str(prompt)]
    assert main(args) == 0
    prompt.write_text(
        prompt.read_text(encoding="utf-8") + "\nOne more rubric line.\n", encoding="utf-8"
    )
    assert main(args) == 0
    out = capsys.readouterr().out
    # The baseline ignores the prompt: same fingerprint, everything from the cache, and its
    # metrics are compared like any run's.
    assert "(4 from the cache)" in out
    assert "judge vs " in out and "prompt edit since" not in out


def test_prompt_edit_lists_flipped_verdicts_and_agreement(tiny: Tiny, tmp_path: Path) -> None:
    """A judge whose verdict on q2 depends on a rubric line: editing the prompt flips q2."""

    def script(request: JudgeRequest) -> Reply:
        if "lose a faithfulness point" in request.prompt and request.question.startswith(
            "バックアップから"
        ):
            quote = request.context[0].text.split("。")[0] + "。"
            payload = {"evidence": quote, "faithfulness": 1, "relevance": 2, "note": "order"}
            return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")
        return good_reply(request)

    labels = tmp_path / "labels.jsonl"
    answer = RUN[2]["answer"]
    labels.write_text(
        json.dumps(
            {
                "question_id": "q2",
                "answer_sha256": text_sha256(answer),
                "faithfulness": 1,
                "relevance": 2,
                "labeller": "ana",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    prompt = tmp_path / "judge.v2.md"
    config = tiny(extra_toml=f'labels = "{labels}"\n').with_overrides(judge={"prompt": prompt})
    original = (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8")
    prompt.write_text(original, encoding="utf-8")
    first = evaluate(config, backend=ScriptedBackend(script))
    assert first.report.prompt_edit is None  # nothing before it
    prompt.write_text(
        original + "\nSteps in the wrong order lose a faithfulness point.\n", encoding="utf-8"
    )
    result = evaluate(config, backend=ScriptedBackend(script))
    edit = result.report.prompt_edit
    assert edit is not None
    assert edit.previous_folder == first.folder.name
    assert [flip.describe() for flip in edit.flips] == ["q2: F2 R2 (ok) → F1 R2 (ok)"]
    assert (edit.labelled, edit.agreement_before, edit.agreement_after) == (1, 0.0, 1.0)
    out = "\n".join(console_summary(result.report, result.folder.path))
    assert "verdicts changed" in out and "  q2: F2 R2 (ok) → F1 R2 (ok)" in out
    assert "agreement with 1 human labels (both scores): 0.0% → 100.0%" in out
    assert (config.reports.dir / "latest").read_text(encoding="utf-8").strip() == (
        result.folder.name
    )
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "## Since the prompt edit" in report_md
    assert "| q2 | F2 R2 | F1 R2 |" in report_md
    assert "0.0% → 100.0%" in report_md


# --- sentence mode and cited sentences: what report.md says ----------------------------------

#: q1's answer in three sentences: 1 is supported (it cites the chunk's first sentence), 2 is
#: not (the chunk says 2 months, not 3, and it carries hostile text), 3 makes no claim.
SENTENCES = (
    "年額3,800円です。",
    '年額プランは3か月分<img src=x onerror="window.__pwned=4">お得です\x1b[2J。',
    "ご検討ください。",
)
SENTENCE_ANSWER = " ".join(SENTENCES)
CITED_BY_1 = "プレミアムプランは月額400円、年額3,800円です。"
#: q2's verdict cites a sentence by number (cited mode).
CITED_FOR_Q2 = "3. 復元をタップします。"


def _reply(payload: dict[str, Any]) -> Reply:
    return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")


def sentence_mode_report(tiny: Tiny) -> Evaluation:
    """A real judged run of the tiny set where q1's reply is a sentence-mode one (sentence 2 of
    3 unsupported) and q2's a cited-mode one, each parsed by ``make_verdict`` as a run in that
    mode parses it, and every file rendered again from that report; q3 and q4 keep their
    quote-mode verdicts."""
    run = copy.deepcopy(RUN)
    run[1]["answer"] = SENTENCE_ANSWER
    result = evaluate(tiny(run=run), backend=ScriptedBackend())
    report = result.report
    items = {item.question_id: item for item in report.items}
    by_id = {v.question_id: v for v in report.verdicts}
    numbers = {
        q: {s.text: s.n for s in context_sentences(item.context)} for q, item in items.items()
    }
    sentences = [
        {"n": 1, "verdict": "supported", "evidence_sentence": numbers["q1"][CITED_BY_1]},
        {"n": 2, "verdict": "unsupported", "evidence_sentence": 0},
        {"n": 3, "verdict": "no_claim", "evidence_sentence": 0},
    ]
    q1 = make_verdict(
        "q1",
        by_id["q1"].item_key,
        _reply({"sentences": sentences, "relevance": 2, "note": "the saving is 2 months"}),
        items["q1"].context,
        answerable=True,
        answer=SENTENCE_ANSWER,
        mode="sentences",
    )
    q2 = make_verdict(
        "q2",
        by_id["q2"].item_key,
        _reply(
            {
                "evidence_sentence": numbers["q2"][CITED_FOR_Q2],
                "faithfulness": 2,
                "relevance": 2,
                "note": "ok",
            }
        ),
        items["q2"].context,
        answerable=True,
        answer=items["q2"].answer,
        mode="cited",
    )
    assert q1.status == q2.status == "ok", (q1.error, q2.error)
    assert [check.text for check in q1.sentences or ()] == list(SENTENCES)
    by_id |= {"q1": q1, "q2": q2}
    # The record's rows with the new verdicts, triaged again as the record builder does.
    rows = [
        row.model_copy(
            update={
                "verdict": by_id[row.question_id],
                "triage": triage(row.item, by_id[row.question_id]),
            }
        )
        if row.item is not None and row.question_id in by_id
        else row
        for row in report.questions
    ]
    report = report.model_copy(update={"questions": rows})
    result.folder.write_files(render_files(report))
    return result._replace(report=report)


def test_report_md_lists_unsupported_sentences_and_says_what_the_evidence_is(tiny: Tiny) -> None:
    result = sentence_mode_report(tiny)
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert report_md == render_report_md(result.report)
    evidence = next(line for line in report_md.splitlines() if line.startswith("- evidence: "))
    # Each mode in its own words: quotes are verified, cited sentences are real by construction.
    assert "quotes written by the judge and searched for in the chunks: 2 of 2 verified" in evidence
    assert (
        "sentences cited by number: 1 of 1 verdicts cite a context sentence (real by "
        "construction; whether it supports the verdict is the reviewer's call)"
    ) in evidence
    assert "sentence by sentence: 1 of 3 answer sentences unsupported in 1 verdict;" in evidence

    review = report_md.split("## Needs review", 1)[1].split("## Unsupported answer sentences")[0]
    assert "**q1**" not in review  # a finding of the judge, not a doubt about its verdict
    found = report_md.split("## Unsupported answer sentences", 1)[1]
    lines = found.strip().splitlines()
    # The unsupported sentence by number, as inert text (no HTML, no raw escape).
    at = lines.index("- **q1**: 1 of 3 answer sentences unsupported")
    assert lines[at + 1] == (
        '  - ✗ sentence 2: 年額プランは3か月分&lt;img src=x onerror="window.\\_\\_pwned=4"&gt;'
        r"お得です\\x1b\[2J。"
    )
    assert "sentence 1" not in found and "sentence 3" not in found
    assert "<img" not in report_md and "\x1b" not in report_md
    # A cited-mode verdict in the list says what its evidence is (q2 is listed only if flagged).
    assert "**q2**" not in review  # nothing flagged it: a cited sentence is not "unverified"


def test_a_quote_mode_report_md_has_no_sentence_lines(tiny: Tiny) -> None:
    result = evaluate(tiny(), backend=ScriptedBackend())
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "- evidence: quotes written by the judge and searched for in the chunks: 4 of 4 " in (
        report_md
    )
    assert "sentence by sentence" not in report_md and "cited by number" not in report_md
    assert "answer sentences unsupported" not in report_md and "✗" not in report_md


def test_needs_review_names_the_cited_evidence(tiny: Tiny) -> None:
    result = sentence_mode_report(tiny)
    flagged = result.report.verdicts[1].model_copy(
        update={"review": ("faithful, but the cited sentence is from another chunk",)}
    )
    row = result.report.questions[1]
    assert row.item is not None
    row = row.model_copy(update={"verdict": flagged, "triage": triage(row.item, flagged)})
    # A cited match without its number (none the harness makes: it keeps the number the prompt
    # showed) is named by its characters.
    assert flagged.match is not None and flagged.match.sentence == 7
    unnumbered = flagged.model_copy(
        update={"match": flagged.match.model_copy(update={"sentence": None})}
    )
    lines = needs_review_lines([row.model_copy(update={"verdict": unnumbered})])
    assert lines == [
        "- **q2**: faithful, but the cited sentence is from another chunk; evidence: cited "
        "sentence in backup/restore, characters 26–39 (real by construction; whether it "
        "supports the verdict is the reviewer's call)"
    ]
    # The sentence by its number as the prompt showed it.
    assert needs_review_lines([row])[0].endswith(
        "; evidence: cited sentence 7 in backup/restore (real by construction; whether it "
        "supports the verdict is the reviewer's call)"
    )
    assert needs_review_lines([]) == ["Nothing flagged."]


def test_a_sentence_mode_run_reports_its_unsupported_sentences(tiny: Tiny) -> None:
    """The whole way: a run with the shipped sentence-mode prompt, every file from its report."""

    def script(request: JudgeRequest) -> Reply:
        assert request.mode == "sentences"
        count = len(answer_sentences(request.answer))
        verdicts = ["supported", *["unsupported"] * (count - 1)]
        sentences = [
            {"n": n, "verdict": verdict, "evidence_sentence": 1 if verdict == "supported" else 0}
            for n, verdict in enumerate(verdicts, start=1)
        ]
        return _reply({"sentences": sentences, "relevance": 2, "note": "ok"})

    run = copy.deepcopy(RUN)
    run[1]["answer"] = SENTENCE_ANSWER
    prompt = REPO / "prompts" / "judge.sentences.v1.md"
    config = tiny(run=run).with_overrides(judge={"prompt": prompt})
    result = evaluate(config, backend=ScriptedBackend(script))
    q1 = next(v for v in result.report.verdicts if v.question_id == "q1")
    assert (q1.mode, q1.faithfulness) == ("sentences", 1)
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    lines = report_md.split("## Unsupported answer sentences", 1)[1].splitlines()
    at = lines.index("- **q1**: 2 of 3 answer sentences unsupported")
    assert lines[at + 1].startswith("  - ✗ sentence 2: 年額プランは3か月分")
    assert lines[at + 2] == "  - ✗ sentence 3: ご検討ください。"
    assert "sentence by sentence: 2 of 6 answer sentences unsupported in 4 verdicts" in report_md
    # review.html carries the answer cut at its sentences, and q1 flagged for them.
    page = (result.folder.path / "review.html").read_text(encoding="utf-8")
    assert '"unsupported_sentences"' in page
    data = page_data(result.report)
    first = data["items"][0]
    assert [piece["n"] for piece in first["answer_pieces"]] == [1, None, 2, None, 3]
    assert "".join(piece["text"] for piece in first["answer_pieces"]) == SENTENCE_ANSWER
    assert first["flags"] == ["unsupported_sentences"]
    assert first["reasons"] == ["unsupported sentences 2, 3 (of 3)"]
    assert [item["flags"] for item in data["items"][1:]] == [[], ["foreign_quote"], []]
    # q3's one sentence cites the first context sentence, from a chunk that is not golden.
    assert data["items"][2]["reasons"] == [
        "faithful, but the cited sentence comes from pricing/trial, not a golden chunk "
        "(widgets/sizes)"
    ]


def test_the_build_reads_nothing_its_provenance_comes_in(tiny: Tiny) -> None:
    """``build_record`` takes the clock, the git commit and the package versions from its
    caller: the manifest holds exactly those, and the same inputs build the same record."""
    from datetime import UTC, datetime

    from judge.inputs.golden import load_golden
    from judge.inputs.runs import load_run
    from judge.judging.grading import Fingerprint
    from judge.judging.types import Verdict
    from judge.pipeline.inputs import measure_retrieval
    from judge.record.build import build_record
    from judge.record.manifest_build import Provenance
    from judge.record.stages import Earlier, Judged
    from judge.results.manifest import GitInfo
    from tests.record.test_stages import JUDGE

    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    measured = measure_retrieval(config, golden, load_run(config.data.run, golden), "run")
    verdicts = {
        q.id: Verdict(question_id=q.id, item_key=q.id, status="ok", faithfulness=2, relevance=2)
        for q in golden.questions
    }
    judged = Judged(verdicts, JUDGE, Fingerprint("fp", {}), 1.0)
    earlier = Earlier([], None, lambda _: None, lambda _: None)
    started = datetime(2026, 12, 1, tzinfo=UTC)
    provenance = Provenance(
        finished_at=datetime(2026, 12, 1, 0, 5, tzinfo=UTC),
        git=GitInfo(commit="c0ffee", dirty=True),
        versions={"python": "3.0", "judge": None},
    )

    def build() -> Any:
        return build_record(config, measured, judged, [], started, "f-1", earlier, provenance)

    record = build()
    manifest = record.manifest
    assert manifest.finished_at == "2026-12-01T00:05:00+00:00"
    assert (manifest.git.commit, manifest.git.dirty) == ("c0ffee", True)
    assert manifest.versions == {"python": "3.0", "judge": None}
    assert build() == record


def test_the_values_the_build_compared_with_are_the_records_own(tiny: Tiny) -> None:
    """values.json is written from the values the build derived for its comparisons
    (``Record.remember_values``, issue 35): the same as the record's rows give afresh."""
    from judge.record import model
    from judge.results.values import question_values

    record = evaluate(tiny(), backend="lexical").report
    remembered = record.values()
    model._LAST_VALUES = None  # forget: derive from the rows
    assert remembered == record.values()
    assert remembered == question_values(
        record.items, {v.question_id: v for v in record.verdicts}, {}
    )
