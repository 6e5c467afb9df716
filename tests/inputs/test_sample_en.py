"""The English sample set (golden/sample-en) loads, is shaped as documented, and the harness's
English text handling copes with it.

The set exists so that English text handling is tested as well as Japanese (issue 12, part 6):
sentence splitting around "U.S.", "e.g.", "a.m."/"p.m." and decimals, and the lexical
baseline's English refusal phrases. The expected sentences and counts below were written by
hand from the corpus text, not computed by the splitter under test.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.inputs.golden import GoldenSet, load_golden
from judge.inputs.runs import Run, load_run
from judge.judging.backends.lexical import judge_lexically
from judge.judging.items import context_for
from judge.textnorm import split_sentences

REPO = Path(__file__).resolve().parents[2]
SAMPLE_EN = REPO / "golden" / "sample-en"
CONFIG = SAMPLE_EN / "judge.toml"


@pytest.fixture(scope="module")
def config() -> Config:
    return load_config(CONFIG)


@pytest.fixture(scope="module")
def golden(config: Config) -> GoldenSet:
    return load_golden(config.data)


@pytest.fixture(scope="module")
def run(config: Config, golden: GoldenSet) -> Run:
    assert config.data.run is not None
    return load_run(config.data.run, golden, config.data.max_file_mb)


# --------------------------------------------------------------------------- the set loads


def test_the_config_points_at_this_folder_and_keeps_its_outputs_apart(config: Config) -> None:
    assert config.data.questions == SAMPLE_EN / "questions.jsonl"
    assert config.data.corpus == SAMPLE_EN / "corpus.jsonl"
    assert config.data.run == SAMPLE_EN / "run.jsonl"
    assert config.judge.prompt == REPO / "prompts" / "judge.v1.md"
    assert config.judge.prompt.is_file()
    # Its own reports and cache, so that English runs never mix with the Japanese sample's.
    assert config.reports.dir == REPO / "reports" / "sample-en"
    assert config.judge.cache_path.parent == REPO / ".judge-cache"
    assert config.judge.cache_path != load_config(REPO / "judge.toml").judge.cache_path
    assert config.retrieval.context_k == 5


def test_judge_check_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(CONFIG), "check", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert "questions: 20 (7 factual, 6 procedural, 4 negative, 3 out_of_scope)" in out
    assert "corpus:    40 chunks in 9 documents" in out


def test_types_and_splits_are_as_documented(golden: GoldenSet) -> None:
    questions = golden.questions
    assert [q.id for q in questions] == [f"q{n:02d}" for n in range(1, 21)]
    by_type_split = Counter((q.type, q.split) for q in questions)
    assert by_type_split == {
        ("factual", "tune"): 5,
        ("factual", "holdout"): 2,
        ("procedural", "tune"): 4,
        ("procedural", "holdout"): 2,
        ("negative", "tune"): 3,
        ("negative", "holdout"): 1,
        ("out_of_scope", "tune"): 2,
        ("out_of_scope", "holdout"): 1,
    }
    # q01-q14 tune, q15-q20 holdout, as golden/README.md says.
    assert {q.id for q in questions if q.split == "holdout"} == {f"q{n}" for n in range(15, 21)}
    assert sum(q.reference_answer is not None for q in questions) == 13


def test_every_relevant_chunk_exists_and_only_out_of_scope_has_none(golden: GoldenSet) -> None:
    for question in golden.questions:
        assert question.relevant_chunks is not None, question.id
        if question.type == "out_of_scope":
            assert (question.answerable, question.relevant_chunks) == (False, ()), question.id
            continue
        assert question.answerable, question.id
        assert question.relevant_chunks, question.id
        for chunk_id in question.relevant_chunks:
            assert chunk_id in golden.corpus, f"{question.id}: {chunk_id}"
    two_chunks = {q.id for q in golden.questions if len(q.relevant_chunks or ()) == 2}
    assert two_chunks == {"q06", "q15"}


def test_chunk_ids_are_stable_slugs_with_headings(golden: GoldenSet) -> None:
    slug = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*/[a-z0-9]+(?:-[a-z0-9]+)*")
    docs = Counter(chunk.doc for chunk in golden.corpus.values())
    assert docs == {
        "setup": 5,
        "wifi": 6,
        "firmware": 5,
        "parental": 4,
        "mesh": 4,
        "troubleshooting": 6,
        "security": 4,
        "warranty": 4,
        "contact": 2,
    }
    for chunk_id, chunk in golden.corpus.items():
        assert slug.fullmatch(chunk_id), chunk_id
        assert chunk_id.split("/")[0] == chunk.doc
        assert chunk.heading, chunk_id


def test_the_run_has_five_ranked_chunks_and_the_documented_misses(
    golden: GoldenSet, run: Run
) -> None:
    assert set(run.records) == {q.id for q in golden.questions}
    rank_of_first_relevant: dict[str, int | None] = {}
    for question in golden.questions:
        record = run.records[question.id]
        ids = [item.chunk_id for item in record.retrieved]
        scores = [item.score for item in record.retrieved if item.score is not None]
        assert len(ids) == len(scores) == 5, question.id
        assert scores == sorted(scores, reverse=True), question.id
        relevant = set(question.relevant_chunks or ())
        ranks = [rank for rank, chunk_id in enumerate(ids, start=1) if chunk_id in relevant]
        rank_of_first_relevant[question.id] = ranks[0] if ranks else None
    answerable = {q.id for q in golden.questions if q.answerable}
    misses = {qid for qid in answerable if rank_of_first_relevant[qid] is None}
    assert misses == {"q12", "q17"}
    assert rank_of_first_relevant["q10"] == 4
    assert rank_of_first_relevant["q18"] == 5


# --------------------------------------------------------------------------- sentences

#: Sentences per chunk, counted by hand: a numbered step ("1. Turn off ...") is one sentence,
#: and an abbreviation ("U.S.", "e.g.", "a.m.", "approx.", "sq. ft") or a decimal ("1.5 A",
#: "v2.1.4") ends none unless it ends the sentence ("free within the U.S. Customers ...").
SENTENCE_COUNTS = {
    "setup/whats-in-the-box": 4,
    "setup/first-time-setup": 7,
    "setup/placement": 4,
    "setup/led-lights": 6,
    "setup/app": 4,
    "wifi/bands": 5,
    "wifi/smart-connect": 3,
    "wifi/change-name-password": 5,
    "wifi/guest-network": 5,
    "wifi/channels": 4,
    "wifi/wps": 4,
    "firmware/current-version": 3,
    "firmware/automatic-updates": 5,
    "firmware/manual-update": 7,
    "firmware/downgrade": 3,
    "firmware/beta": 3,
    "parental/profiles": 4,
    "parental/schedules": 6,
    "parental/content-filter": 4,
    "parental/pause": 4,
    "mesh/add-satellite": 5,
    "mesh/compatible-models": 3,
    "mesh/wired-backhaul": 3,
    "mesh/limits": 3,
    "troubleshooting/slow-speeds": 4,
    "troubleshooting/connection-drops": 3,
    "troubleshooting/factory-reset": 6,
    "troubleshooting/forgot-admin-password": 3,
    "troubleshooting/red-light": 3,
    "troubleshooting/isp-modem": 3,
    "security/wpa3": 3,
    "security/vpn": 3,
    "security/remote-management": 3,
    "security/port-forwarding": 4,
    "warranty/coverage": 3,
    "warranty/returns": 4,
    "warranty/claim": 5,
    "warranty/kestrel-care": 3,
    "contact/support-hours": 3,
    "contact/before-you-contact": 3,
}


def test_every_chunk_has_a_hand_count(golden: GoldenSet) -> None:
    assert set(SENTENCE_COUNTS) == set(golden.corpus)


@pytest.mark.parametrize("chunk_id", sorted(SENTENCE_COUNTS))
def test_split_sentences_counts_every_chunk_as_intended(golden: GoldenSet, chunk_id: str) -> None:
    sentences = split_sentences(golden.corpus[chunk_id].text)
    assert len(sentences) == SENTENCE_COUNTS[chunk_id], sentences


#: The exact sentences of the chunks with the most abbreviations and decimals.
EXACT_SENTENCES = {
    "setup/whats-in-the-box": [
        "The box contains the Kestrel AX1800 router, a 12 V / 1.5 A power adapter, a 1.5 m "
        "(approx. 5 ft) Cat 6 Ethernet cable and a quick-start card.",
        "U.S. and Canadian units ship with a Type A plug; U.K. units ship with a Type G plug.",
        "The router has one 2.5 Gbps WAN port and three 1 Gbps LAN ports.",
        "There is no USB port on this model.",
    ],
    "warranty/coverage": [
        "Kestrel routers come with a 2-year limited warranty in the U.S. and Canada, and a "
        "3-year warranty in the U.K. and the EU.",
        "The warranty starts on the date of purchase on your receipt and covers defects in "
        "materials and workmanship.",
        "It does not cover damage from lightning, power surges, water or drops, and it doesn't "
        "cover units bought from unauthorised resellers.",
    ],
    "warranty/returns": [
        "Routers bought from the Kestrel Store can be returned within 30 days for a full refund, "
        "for any reason.",
        "Routers bought from a retailer, e.g. Best Buy or Currys, follow that retailer's return "
        "policy.",
        "Return shipping is free within the U.S.",
        "Customers elsewhere pay for return shipping.",
    ],
    "contact/support-hours": [
        "Phone support for the U.S. and Canada is open Monday to Friday, 8 a.m. to 8 p.m. ET, "
        "and Saturday, 9 a.m. to 5 p.m. ET.",
        "U.K. phone support is open Monday to Friday, 9 a.m. to 6 p.m. GMT.",
        "Chat in the Kestrel Home app is available 24/7 in English.",
    ],
    "parental/schedules": [
        "1. In the Kestrel Home app, tap Family.",
        "2. Choose a profile.",
        "3. Tap Schedules, then Add schedule.",
        "4. Pick the days and the times when the internet should be paused, e.g. 9:30 p.m. to "
        "7 a.m. on school nights.",
        "5. Tap Save.",
        "The schedule uses the router's time zone, which you can check under Settings > System > "
        "Time.",
    ],
    "mesh/limits": [
        "One AX1800 router supports up to 4 satellites.",
        "Kestrel recommends no more than 2 satellites in a chain, i.e. each satellite should "
        "connect to the router or to a satellite that connects to the router directly.",
        "Each satellite covers about 150 m² (1,600 sq. ft) in a typical home.",
    ],
    "firmware/beta": [
        "Kestrel sometimes offers beta firmware, e.g. v2.2.0-beta.3, to users who sign up at "
        "community.kestrelnet.com/beta.",
        "Beta versions are not installed by automatic updates and are not covered by phone "
        "support.",
        "The beta programme is currently open in the U.S., Canada and the U.K. only.",
    ],
}


@pytest.mark.parametrize("chunk_id", sorted(EXACT_SENTENCES))
def test_split_sentences_keeps_abbreviations_and_decimals_inside_sentences(
    golden: GoldenSet, chunk_id: str
) -> None:
    assert split_sentences(golden.corpus[chunk_id].text) == EXACT_SENTENCES[chunk_id]


# --------------------------------------------------------------------------- refusals

#: The run's refusals: the two out-of-scope questions, the miss q17 (its relevant chunk is not
#: in the top 5) and q07, which refuses although its answer is the rank-1 chunk.
REFUSALS = ("q05", "q07", "q14", "q17")


def _lexical(config: Config, golden: GoldenSet, run: Run, qid: str) -> dict[str, object]:
    """What the lexical backend returns for one item: the same question, top-k context and
    answer that the pipeline hands it."""
    question = next(q for q in golden.questions if q.id == qid)
    record = run.records[qid]
    context = context_for(record, golden.corpus, config.retrieval.context_k)
    return judge_lexically(question.question, [chunk.text for chunk in context], record.answer)


def test_the_run_uses_the_documented_english_refusals(run: Run) -> None:
    assert run.records["q05"].answer == "The manual does not cover this."
    assert run.records["q14"].answer == "I couldn't find that in the documentation."


@pytest.mark.parametrize("qid", REFUSALS)
def test_lexical_baseline_recognises_every_english_refusal(
    config: Config, golden: GoldenSet, run: Run, qid: str
) -> None:
    payload = _lexical(config, golden, run, qid)
    assert str(payload["note"]).startswith("refusal"), payload
    assert payload["faithfulness"] == 2, payload  # a refusal claims nothing false


def test_lexical_baseline_gives_a_correct_out_of_scope_refusal_full_marks(
    config: Config, golden: GoldenSet, run: Run
) -> None:
    # The trade-in question's top-5 context is about returns and support: refusing is right,
    # 2/2 by the label rubric and by the baseline's rule, with no quote needed.
    payload = _lexical(config, golden, run, "q14")
    assert (payload["faithfulness"], payload["relevance"], payload["evidence"]) == (2, 2, ""), (
        payload
    )


def test_lexical_baseline_counts_english_function_words_as_shared_topic(
    config: Config, golden: GoldenSet, run: Run
) -> None:
    # A known limit of overlap, pinned so that a change is seen: "Will the Kestrel work with
    # Starlink?" shares "the", "with", "in", "kestrel", "work" with the set-up pages together
    # (0.43 of its tokens), which made the baseline call the correct refusal a wrong one (2/0).
    # Since issue 33 a refusal is wrong only when one chunk holds 0.4 of the question (an answer
    # stands in one chunk): the closest holds 0.36, so the correct refusal is 2/2, while q07's
    # wrong refusal stays 2/0 (next test). Dropping English function words instead fixed this
    # item but turned q07 into 2/2 and q14's right refusal into 2/0 (measured).
    payload = _lexical(config, golden, run, "q05")
    assert (payload["faithfulness"], payload["relevance"]) == (2, 2), payload
    assert "0.36" in str(payload["note"])


def test_lexical_baseline_marks_a_refusal_of_an_answer_in_context_as_not_relevant(
    config: Config, golden: GoldenSet, run: Run
) -> None:
    payload = _lexical(config, golden, run, "q07")  # warranty/coverage is at rank 1
    assert (payload["faithfulness"], payload["relevance"]) == (2, 0), payload
    assert str(payload["evidence"]).startswith("Kestrel routers come with a 2-year limited")


def test_two_labellers_label_every_current_answer(config: Config, golden: GoldenSet) -> None:
    from judge.inputs.labels import load_labels_if_any

    labels = load_labels_if_any(config.data.labels, golden.by_id())
    assert labels.warning() is None
    by_labeller: dict[str, set[str]] = {}
    for label in labels.current:
        by_labeller.setdefault(label.labeller, set()).add(label.question_id)
    every = {q.id for q in golden.questions}
    assert by_labeller == {"labeller-a": every, "labeller-b": every}
