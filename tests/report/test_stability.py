"""The stability check as a view: the Markdown section and the console lines are pure functions
of the ``StabilityReport`` (the check itself: tests/judging/test_stability.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.axes import Axis
from judge.config import Config
from judge.grouped import ALL
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.cache import VerdictCache
from judge.judging.injection import INJECTION_EN
from judge.judging.items import JudgeItem, build_items
from judge.judging.prompts import Prompt, load_prompt
from judge.judging.stability import check_stability
from judge.judging.types import (
    VARIANTS,
    Count,
    Failure,
    StabilityReport,
    Variant,
    VariantFlip,
    VariantRow,
)
from judge.judging.verdict import Reply
from judge.report.stability import CONSOLE_FLIPS, count_text, stability_lines, stability_markdown
from tests.conftest import REPO
from tests.fakes import ScriptedBackend
from tests.judging.test_stability import with_failures


@pytest.fixture
def items(sample_config: Config) -> list[JudgeItem]:
    """The shipped sample's items (read directly: no pipeline)."""
    golden = load_golden(sample_config.data)
    assert sample_config.data.run is not None
    run = load_run(sample_config.data.run, golden)
    return build_items(golden, run, sample_config.retrieval.context_k)


@pytest.fixture
def prompt() -> Prompt:
    return load_prompt(REPO / "prompts" / "judge.v1.md")


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[VerdictCache]:
    opened = VerdictCache(tmp_path / "verdicts.sqlite3")
    yield opened
    opened.close()


def test_count_reads_as_k_of_n_with_a_percentage() -> None:
    assert count_text(Count(3, 10)) == "3/10 (30 %)"
    assert count_text(Count(2, 3)) == "2/3 (67 %)"
    assert count_text(Count(0, 0)) == "0/0 (–)"


def test_verdicts_that_are_not_ok_are_listed_with_their_errors(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    report = with_failures(items, prompt, cache)
    qid = items[1].question.id
    assert count_text(report.row("injection_ja").changed["faithfulness"]) == "0/0 (–)"
    text = "\n".join(stability_markdown(report))
    assert f"- {qid} (original): backend_error: HTTP 400: bad request" in text
    assert "(injection_ja): parse_error: not JSON" in text


def test_markdown_and_console_show_every_row_and_change(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    report = check_stability(items, LexicalBackend(), prompt, cache, sample=8, seed=1)
    markdown = stability_markdown(report)
    assert markdown[0] == "## Judge stability"
    assert f"Sampled: {', '.join(report.sampled)}." in markdown
    table = [line for line in markdown if line.startswith("| ")]
    header = "| variant | type | n | F changed | R changed | F up | R up | to 2/2 | not ok | n/a |"
    assert table[0] == header
    rows = table[1 : 1 + len(report.rows)]
    assert len(rows) == len(report.rows) == len(VARIANTS) * (len(report.types) + 1)
    en_all = report.row("injection_en")
    assert (
        f"| **injection_en** | **all** | **{en_all.pairs}** | "
        f"**{count_text(en_all.changed['faithfulness'])}** |" in "\n".join(rows)
    )
    for change in report.flips:
        line = (
            f"| {change.question_id} | {change.question_type} | {change.variant} | "
            f"F{change.before[0]} R{change.before[1]} | F{change.after[0]} R{change.after[1]} |"
        )
        assert line in markdown
    console = stability_lines(report)
    assert console[0].startswith("judge stability (lexical lexical-v6 · judge.v1.md): 8 of 30")
    assert console[1].split() == [
        "variant", "type", "n", "F", "changed", "R", "changed", "F", "up", "R", "up", "to", "2/2",
        "not", "ok", "n/a",
    ]  # fmt: skip
    en_line = next(line for line in console if line.startswith("injection_en") and " all " in line)
    f_changed = en_all.changed["faithfulness"]
    assert f"{f_changed.k}/{f_changed.n} {f_changed.k / f_changed.n:.0%}" in en_line
    assert f"{len(report.flips)} changed verdicts:" in console


def test_hostile_ids_are_escaped_where_they_are_shown(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    item = items[0]
    hostile = item._replace(
        question=item.question.model_copy(update={"id": "q|<b>\x1b[2J", "type": "fact|ual"})
    )

    def script(request: JudgeRequest) -> Reply:
        score = 0 if request.answer.endswith(INJECTION_EN) else 2
        payload = {"evidence": "", "faithfulness": score, "relevance": 2, "note": ""}
        return Reply(text=json.dumps(payload), finish_reason="stop")

    report = check_stability([hostile], ScriptedBackend(script), prompt, cache, sample=1)
    assert len(report.flips) == 1
    markdown = "\n".join(stability_markdown(report))
    assert r"| q\|&lt;b&gt;\\x1b\[2J |" in markdown and "<b>" not in markdown
    assert "fact\\|ual" in markdown
    console = "\n".join(stability_lines(report))
    assert "\x1b" not in console and "q|<b>\\x1b[2J injection_en: F2 R2 → F0 R2" in console


# --- the view of a report built by hand (plain data: no judge needed) --------------------------


def _row(variant: Variant, question_type: str, pairs: int, changed: int) -> VariantRow:
    counts: dict[Axis, Count] = {
        "faithfulness": Count(changed, pairs),
        "relevance": Count(0, pairs),
    }
    return VariantRow(
        variant=variant,
        question_type=question_type,
        sampled=pairs,
        not_applicable=0,
        not_ok=0,
        pairs=pairs,
        changed=counts,
        moved_up={"faithfulness": Count(0, pairs), "relevance": Count(0, pairs)},
        became_full=Count(0, 0),
    )


def _report(flips: int, failures: tuple[Failure, ...] = ()) -> StabilityReport:
    ids = tuple(f"q{i:02d}" for i in range(1, 13))
    return StabilityReport(
        judge="scripted m · p.md",
        fingerprint="f",
        seed=7,
        population=40,
        sampled=ids,
        types=("factual",),
        rows=tuple(
            _row(v, t, 12, flips if v == "injection_en" else 0)
            for v in VARIANTS
            for t in ("factual", ALL)
        ),
        flips=tuple(
            VariantFlip(qid, "factual", "injection_en", (2, 2), (1, 2)) for qid in ids[:flips]
        ),
        failures=failures,
        verdicts=60,
        from_cache=15,
        elapsed_s=2.34,
    )


def test_the_console_lists_the_first_flips_and_counts_the_rest() -> None:
    lines = stability_lines(_report(12))
    # 12 of 40 sampled; 60 verdicts, 15 cached; 2.34 s shown to one decimal.
    assert lines[0] == (
        "judge stability (scripted m · p.md): 12 of 40 answers sampled (seed 7); "
        "60 verdicts, 15 from the cache, 2.3 s"
    )
    listed = [line for line in lines if line.startswith("  q")]
    assert len(listed) == CONSOLE_FLIPS == 10
    assert listed[0] == "  q01 injection_en: F2 R2 → F1 R2"
    assert lines[-1] == "  … 2 more"
    # One separator line before each variant's rows: 4 variants.
    assert sum(set(line) == {"-"} for line in lines) == 4
    en_all = next(line for line in lines if line.startswith("injection_en") and " all" in line)
    assert "12/12 100%" in en_all


def test_a_report_without_flips_says_so_and_lists_its_failures() -> None:
    failure = Failure("q03", None, "backend_error", "HTTP 500: down")
    markdown = stability_markdown(_report(0, (failure,)))
    assert "No verdict changed." in markdown
    assert "Verdicts not ok (1), their pairs not compared:" in markdown
    assert "- q03 (original): backend_error: HTTP 500: down" in markdown
    assert markdown[-1] == ""
    lines = stability_lines(_report(0, (failure,)))
    assert "no verdict changed" in lines
    assert lines[-1] == "not ok: q03 (original): backend_error: HTTP 500: down"
    # The injection_en row of the table: 0 of 12 changed.
    assert "| injection_en | factual | 12 | 0/12 (0 %) | 0/12 (0 %) |" in "\n".join(markdown)


def test_the_judging_layer_imports_no_view() -> None:
    code = (
        "import sys, judge.judging.stability\n"
        "views = sorted(m for m in sys.modules if m.startswith('judge.report'))\n"
        "assert not views, views\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_flags_are_counted_per_variant_and_named_in_the_markdown(
    items: list[JudgeItem], prompt: Prompt, cache: VerdictCache
) -> None:
    report = with_failures(items, prompt, cache)
    markdown = "\n".join(stability_markdown(report))
    assert "Verdicts with review flags" in markdown
    assert "injection_en 4/4 (100 %)" in markdown and "original 0/4 (0 %)" in markdown
    qid = items[0].question.id
    assert f"- {qid} (injection_ja, parse_error): the answer contains" in markdown
    console = stability_lines(report)
    (line,) = [line for line in console if line.startswith("verdicts with review flags")]
    assert "injection_ja 4/4 (100 %)" in line and line.endswith("(the report names them)")
    # A report without the flags (built by hand) says nothing about them.
    assert "review flags" not in "\n".join(stability_markdown(_report(0)))
