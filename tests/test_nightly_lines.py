"""Every first line `judge nightly` can print is listed in the README (and every listed form is
one the code prints): the verdicts of ``judge.results.gate.Gate`` in each of their forms, and
the line of a nightly that could not run, here with another run holding the reports folder."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from judge.cli import main
from judge.config import Config
from judge.errors import EXIT_BUSY
from judge.io.lock import run_lock
from judge.results.compare import Change, Moved, SectionComparison
from judge.results.gate import GateCheck, gate
from judge.results.lasting import Lasting
from tests.conftest import REPO
from tests.results.helpers import fallen_change

Tiny = Callable[..., Config]


def _readme_forms() -> list[str]:
    """The first-line forms of the README's nightly table, as written (`...`, N and M are
    the details)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `(nightly: [^`]+)` \|", text, flags=re.MULTILINE)


def _pattern(form: str) -> re.Pattern[str]:
    parts = re.split(r"(\.\.\.|\bN\b|\bM\b)", form)
    regex = "".join(
        ".+" if part == "..." else r"\d+" if part in ("N", "M") else re.escape(part)
        for part in parts
    )
    return re.compile(regex + "$")


def _both(*changes: Change) -> list[SectionComparison]:
    return [
        SectionComparison("judge", "20261128T000000Z-aaaaaaaa", list(changes), ""),
        SectionComparison("retrieval", "20261128T000000Z-aaaaaaaa", [], ""),
    ]


def _verdicts() -> list[str]:
    """The gate's verdict in every form it has."""
    recall = fallen_change(
        "listed", n=5, moved=5, section="retrieval", type="procedural", metric="recall@5"
    )
    bar = GateCheck("bar: factual faithfulness", False, "bar: factual faithfulness ...", "bar")
    crossed = gate(_both())
    crossed = crossed._replace(checks=[*crossed.checks, bar])
    return [
        gate(_both()).verdict,
        gate(_both(fallen_change("listed"))).verdict,
        gate(_both(recall)).verdict,
        gate([SectionComparison("judge", None, [], "")]).verdict,
        gate(_both(fallen_change("regressed"))).verdict,
        gate(_both(fallen_change("collapsed"))).verdict,
        gate(_both(), failed=["q01", "q02"], total=30).verdict,
        gate(_both(), unjudged=["q03"], judged=30).verdict,
        crossed.verdict,
        gate(_both(), lasting=[_below("q02"), _below("q10")]).verdict,
    ]


def _below(question_id: str) -> Lasting:
    """An answer below the pinned baseline for three runs (``judge.results.lasting``)."""
    return Lasting(question_id, "judge", "faithfulness", "2026-12-01", 2.0, 1.0, 3, "baseline")


def _nightly_line_when_busy(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> str:
    config = tiny()
    assert config.source is not None
    with run_lock(config.reports.dir):
        code = main(
            ["--config", str(config.source), "nightly", "--backend", "lexical", "--wait", "0"]
        )
    assert code == EXIT_BUSY
    return capsys.readouterr().out.splitlines()[0]


def test_every_first_line_of_the_nightly_is_in_the_readme(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = _nightly_line_when_busy(tiny, capsys)
    assert busy.startswith("nightly: FAILED (exit 4): another judge run (pid ")
    lines = [f"nightly: {verdict}" for verdict in _verdicts()] + [busy]
    forms = _readme_forms()
    patterns = [_pattern(form) for form in forms]
    for line in lines:
        matching = [form for form, p in zip(forms, patterns, strict=True) if p.match(line)]
        assert matching, f"README.md's nightly table lists no form of: {line}"
    # and every form the README lists is one the code prints (the most specific form of a line
    # is the one that matches it with the fewest details)
    for form, pattern in zip(forms, patterns, strict=True):
        assert any(pattern.match(line) for line in lines), f"no verdict of the form: {form}"


def test_a_type_whose_every_question_fell_is_not_called_noise() -> None:
    """A broken retriever's night on a small type: every procedural question's recall@5 went
    from 1 to 0, and the exact test cannot call it with 5 questions; the verdict says so, not
    "not shown to be more than noise"."""
    change = fallen_change(
        "listed", n=5, moved=5, section="retrieval", type="procedural", metric="recall@5"
    )._replace(
        old=1.0,
        new=0.0,
        delta=-1.0,
        low=-1.0,
        high=-1.0,
        moved=tuple(Moved(f"p{i}", 1.0, 0.0) for i in range(5)),
        p_fall=1 / 32,
    )
    verdict = gate(_both(change)).verdict
    assert verdict == (
        "ok: no regression; listed, every one of its 5 questions fell: too few to call: "
        "retrieval procedural recall@5 -1.000 [-1.000, -1.000] over 5 questions"
    )
    assert "noise" not in verdict
    assert change.describe().endswith(
        "p 0.0312), every one of its 5 questions fell: too few to call; moved: p0 1→0, p1 1→0, "
        "p2 1→0, p3 1→0, p4 1→0"
    )
    some = change._replace(moved=change.moved[:3], n=5)  # two questions did not move
    assert "not shown to be more than noise" in gate(_both(some)).verdict


def test_the_nightly_waits_an_hour_by_default_and_run_not_at_all() -> None:
    from judge.cli import build_parser
    from judge.errors import NIGHTLY_WAIT_S

    parser = build_parser()
    assert parser.parse_args(["nightly"]).wait == NIGHTLY_WAIT_S == 3600
    assert parser.parse_args(["run"]).wait == 0
    assert parser.parse_args(["nightly", "--wait", "90"]).wait == 90
