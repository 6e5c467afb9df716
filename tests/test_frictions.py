"""Issue 22's small frictions, each at its root: one type order everywhere, no ``◀ weakest``
when every type ties, ``judge run`` saying what the cache holds before it judges, and a
``license`` that setuptools does not warn about. Fast, no model: the lexical backend. Items 4
(no absolute prompt path in the reports), 5 (``judge diff`` naming the answers that changed)
and 7 (``judge audit`` with the lexical judge printing its section once) are tested with their
modules: tests/report/test_markdown.py, tests/pipeline/test_diff.py, tests/cli/test_folders.py
and tests/cli/test_audit.py."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.audit.agreement import judge_scores
from judge.audit.ppi import corrected_estimates
from judge.cli import main
from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels_if_any
from judge.inputs.runs import load_run
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.cache import VerdictCache
from judge.judging.items import build_items
from judge.judging.prompts import load_prompt
from judge.judging.stability import check_stability
from judge.record.store import ReportsDir
from judge.report.summary import cached_line
from judge.results.tables import per_type_table
from tests.audit.conftest import sample_label_and_import
from tests.conftest import QUESTIONS, REPO, RUN, run_lexical, worse_run

Tiny = Callable[..., Config]

#: The tiny golden set with its negative question first: the golden order (negative, factual,
#: procedural, out_of_scope) is then neither the configured order (factual, procedural,
#: negative, out_of_scope) nor the alphabetical one (factual, negative, out_of_scope,
#: procedural), so a view that follows either of the other two is caught.
NEGATIVE_FIRST = [QUESTIONS[2], QUESTIONS[0], QUESTIONS[1], QUESTIONS[3]]
CONFIGURED = ["factual", "procedural", "negative", "out_of_scope"]


def _folder(config: Config) -> str:
    return (config.reports.dir / "latest").read_text(encoding="utf-8").strip()


# --- 1. one type order: the configured data.question_types -----------------------------------


def test_corrected_estimates_follow_the_configured_type_order(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(questions=NEGATIVE_FIRST, extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert run_lexical(config) == 0
    assert config.source is not None
    sample_label_and_import(str(config.source), tmp_path / "sheet.csv")
    assert config.data.labels is not None
    labels = load_labels_if_any(config.data.labels, load_golden(config.data).by_id()).current
    folder = ReportsDir(config.reports.dir).folder(None)
    items, score = folder.items(), judge_scores(folder.verdicts())
    # The per-type tables' order: the configured types, then "all"; never alphabetical.
    assert config.data.question_types == tuple(CONFIGURED)
    configured = corrected_estimates(items, labels, score, config.data.question_types)
    assert list(configured["faithfulness"]) == [*CONFIGURED, "all"]
    assert list(configured["relevance"]) == [*CONFIGURED, "all"]
    # Without the configuration: the items' (golden) order, as judge.grouped.type_order gives.
    unconfigured = corrected_estimates(items, labels, score)
    assert list(unconfigured["faithfulness"]) == [
        "negative",
        "factual",
        "procedural",
        "out_of_scope",
        "all",
    ]
    # A configured type without items gets no row (as before): only types with items.
    fewer = {qid: item for qid, item in items.items() if item.type != "procedural"}
    rows = corrected_estimates(fewer, labels, score, config.data.question_types)
    assert list(rows["faithfulness"]) == ["factual", "negative", "out_of_scope", "all"]


def test_the_audits_agreement_rows_follow_the_corrected_estimates_order(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(questions=NEGATIVE_FIRST, extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert run_lexical(config) == 0
    assert config.source is not None
    toml = str(config.source)
    sample_label_and_import(toml, tmp_path / "sheet.csv")
    capsys.readouterr()
    assert main(["--config", toml, "audit"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("  faithfulness")
    rows = [line.split()[0] for line in lines[at + 2 : at + 7]]
    corrected_at = next(i for i, line in enumerate(lines) if line.startswith("corrected estimates"))
    at = lines.index("  faithfulness", corrected_at)
    corrected_rows = [line.split()[0] for line in lines[at + 2 : at + 7]]
    # One order in both tables of the audit, "all" last (the agreement table was sorted).
    assert rows == corrected_rows
    assert rows[-1] == "all"
    assert rows != [*sorted(rows[:-1]), "all"]


def test_stability_rows_follow_the_configured_type_order(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny(questions=NEGATIVE_FIRST)
    golden = load_golden(config.data)
    assert config.data.run is not None
    items = build_items(golden, load_run(config.data.run, golden), config.retrieval.context_k)
    prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
    cache = VerdictCache(tmp_path / "stability.sqlite3")
    try:
        configured = check_stability(
            items,
            LexicalBackend(),
            prompt,
            cache,
            sample=4,
            type_order=config.data.question_types,
        )
        unconfigured = check_stability(items, LexicalBackend(), prompt, cache, sample=4)
    finally:
        cache.close()
    assert list(configured.types) == CONFIGURED
    variant = configured.rows[0].variant
    assert [r.question_type for r in configured.rows if r.variant == variant] == [
        *CONFIGURED,
        "all",
    ]
    # Without it: the sample's golden order, as before.
    assert list(unconfigured.types) == ["negative", "factual", "procedural", "out_of_scope"]


# --- 2. no ◀ weakest when every type ties -----------------------------------------------------


def test_no_weakest_type_when_every_type_ties() -> None:
    types = {"q1": "factual", "q2": "procedural", "q3": "negative"}
    tied = per_type_table(
        {"recall@5": {"q1": 1.0, "q2": 1.0, "q3": 1.0}}, types, CONFIGURED[:3], ["recall@5"]
    )
    assert tied.weakest is None
    assert tied.to_json()["weakest_type"] is None
    # A tie for the lowest among types that do differ still names the first of them.
    lowest_tie = per_type_table(
        {"recall@5": {"q1": 1.0, "q2": 0.5, "q3": 0.5}}, types, CONFIGURED[:3], ["recall@5"]
    )
    assert lowest_tie.weakest == "procedural"
    # Ties among the valued types only: a type without a value does not break the tie.
    empty_one = per_type_table(
        {"recall@5": {"q1": 0.5, "q2": 0.5}}, types, CONFIGURED[:3], ["recall@5"]
    )
    assert empty_one.weakest is None


def test_a_run_where_every_type_ties_marks_no_weakest_type(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy.deepcopy(RUN)
    # Every answerable question's relevant chunks at the top: recall@5 1 for every type.
    run[2]["retrieved"] = [{"chunk_id": "backup/restore"}, {"chunk_id": "backup/auto"}]
    run[3]["retrieved"] = [{"chunk_id": "widgets/sizes"}]
    config = tiny(run=run)
    capsys.readouterr()
    assert run_lexical(config) == 0
    out = capsys.readouterr().out
    retrieval = out[out.index("retrieval per type") : out.index("judge per type")]
    assert "◀ weakest" not in retrieval


# --- 3. comparisons count (type, metric) cells, never "questions" -----------------------------


def test_every_comparison_count_says_cells(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    capsys.readouterr()
    assert run_lexical(tiny(run=worse_run())) == 0
    out = capsys.readouterr().out
    counts = [line for line in out.splitlines() if "within noise" in line]
    assert counts
    assert all("(type, metric) cells" in line for line in counts)
    report = (config.reports.dir / _folder(config) / "report.md").read_text(encoding="utf-8")
    counted = [line for line in report.splitlines() if "within noise" in line]
    assert counted
    assert all("(type, metric) cells" in line for line in counted)


# --- 6. judge run says what the cache holds before it judges ----------------------------------


def test_cached_line_wording() -> None:
    assert cached_line(2, 10) == "2 of 10 already in the cache; judging the other 8"
    assert cached_line(0, 4) == "0 of 4 already in the cache; judging the other 4"
    assert cached_line(4, 4) == "4 of 4 already in the cache; nothing to judge"


def test_run_says_how_many_answers_are_cached_before_judging(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    capsys.readouterr()
    assert run_lexical(config) == 0
    out = capsys.readouterr().out.splitlines()
    # Before the judging's summary, after the judge is named.
    said = out.index("0 of 4 already in the cache; judging the other 4")
    assert out[0].startswith("judge: ")
    assert said < next(i for i, line in enumerate(out) if line.startswith("judged 4 answers"))
    assert run_lexical(config) == 0
    assert "4 of 4 already in the cache; nothing to judge" in capsys.readouterr().out
    run = copy.deepcopy(RUN)
    run[3]["answer"] = "いいえ、iPadでは使えません。"  # one answer new: one item to judge
    assert run_lexical(tiny(run=run)) == 0
    assert "3 of 4 already in the cache; judging the other 1" in capsys.readouterr().out


# --- 8. pyproject.toml: the SPDX license string ----------------------------------------------


def test_the_license_is_an_spdx_string_that_setuptools_reads() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    # A table ({ text = ... }) makes setuptools >= 77 print a deprecation warning per build
    # step; the string form needs setuptools >= 77 to be read as an SPDX expression.
    assert project["project"]["license"] == "Apache-2.0"
    requires = project["build-system"]["requires"]
    assert "setuptools>=77" in requires
