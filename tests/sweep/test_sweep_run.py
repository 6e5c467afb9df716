"""``judge sweep`` end to end on the shipped sample: answers per setting, saved and reused, the
guarded choice, the judge beside retrieval, the holdout kept for the final comparison, and the
report folder; bad grids refused in one line."""

from __future__ import annotations

import json
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.errors import AdapterError, ConfigError
from judge.pipeline.sweep import sweep
from tests.sweep.conftest import ORACLE_GRID, REPO, SAMPLE, calls


def test_the_demo_sweep_on_the_sample_keeps_the_defaults_and_names_the_guard(
    sample_config: Config, tmp_path: Path
) -> None:
    config = sample_config.with_overrides(
        reports={"dir": tmp_path / "reports"}, judge={"cache_path": tmp_path / "cache.sqlite3"}
    )
    outcome = sweep(config, backend="lexical")
    assert not outcome.selection.adopt
    assert outcome.selection.decided_by == "differs"  # re-ranking by overlap does not help here
    text = (outcome.folder / "sweep.md").read_text(encoding="utf-8")
    assert "keep the defaults (lexical_weight=0.0, with_heading=false): guard 'differs'" in text
    assert "## Holdout (the final comparison; never used to choose)" in text
    data = json.loads((outcome.folder / "sweep.json").read_text(encoding="utf-8"))
    assert data["outcome"] == {
        "adopt": False,
        "setting": {"lexical_weight": 0.0, "with_heading": False},
        "decided_by": "differs",
        "snippet": None,
    }
    assert len(data["settings"]) == 6
    svg = ET.fromstring((outcome.folder / "primary.svg").read_text(encoding="utf-8"))
    circles = svg.findall("{http://www.w3.org/2000/svg}circle")
    assert len(circles) == 6
    assert "(default)" in (outcome.folder / "primary.svg").read_text(encoding="utf-8")


def test_a_clearly_better_setting_is_adopted_with_a_snippet_to_paste(
    sweep_config: Callable[..., Config],
) -> None:
    outcome = sweep(sweep_config(ORACLE_GRID))
    sel = outcome.selection
    assert sel.adopt and sel.decided_by is None
    assert outcome.winner.params == {"order": "oracle", "noise": 0}  # ties: the earlier one
    assert sel.n == 17  # tuning questions with relevant chunks (out-of-scope ones have none)
    assert sel.held_out_gain > 0.1 and sel.worse == 0
    text = (outcome.folder / "sweep.md").read_text(encoding="utf-8")
    snippet = text.split("```toml\n")[1].split("```")[0]
    assert tomllib.loads(snippet) == {"sweep": {"default": {"order": "oracle", "noise": 0}}}
    # The default and the best other setting are judged, on the tuning split and the holdout.
    assert {split for _, split in outcome.judged} == {"tune", "holdout"}
    assert len([k for k in outcome.judged if k[1] == "tune"]) == 2
    assert "## Judge beside retrieval (tuning split, per type)" in text
    assert '| order="oracle", noise=0 | factual |' in text
    # The holdout compares the winner with the default question by question.
    assert "| ndcg@5 | 8 |" in text


def test_answers_are_saved_per_setting_and_never_asked_twice(
    sweep_config: Callable[..., Config],
) -> None:
    config = sweep_config(ORACLE_GRID)
    sweep(config, judge=False)
    first = calls()
    assert all(n == 1 for n in first.values())
    assert len(first) == 6 * 20 + 2 * 10  # 6 settings x 20 tuning questions; 2 on the holdout
    sweep(config, judge=False)
    assert calls() == first


def test_the_holdout_is_asked_only_for_the_final_comparison_and_never_chooses(
    sweep_config: Callable[..., Config],
) -> None:
    outcome = sweep(
        sweep_config(
            "[sweep.grid]\nholdout_oracle = [false, true]\nnoise = [0, 1]\n"
            "[sweep.default]\nholdout_oracle = false\nnoise = 0\n"
        ),
        judge=False,
    )
    # Better only on the holdout: the tuning questions see no difference, so nothing changes.
    assert not outcome.selection.adopt and outcome.selection.decided_by == "differs"
    holdout_asked = {params for params, qid in calls() if qid in {"q21", "q22", "q23"}}
    assert holdout_asked == {json.dumps({"holdout_oracle": False, "noise": 0}, sort_keys=True)}


def test_a_question_the_adapter_fails_scores_zero_and_is_listed(
    sweep_config: Callable[..., Config],
) -> None:
    outcome = sweep(
        sweep_config("[sweep.grid]\nfail_one = [false, true]\n[sweep.default]\nfail_one = false\n"),
        judge=False,
    )
    failing = next(s for s in outcome.settings if s.params["fail_one"])
    scores = outcome.tuned[failing.key]
    assert scores.failed == {"q01": "RuntimeError: index shard missing"}
    assert scores.values["ndcg@5"][scores.question_ids.index("q01")] == 0.0
    assert len(scores.question_ids) == 17  # n is not shrunk by the failure
    text = (outcome.folder / "sweep.md").read_text(encoding="utf-8")
    assert "| fail_one=true | q01 | RuntimeError: index shard missing |" in text


def test_a_setting_the_factory_rejects_stops_the_sweep_and_the_rest_resume(
    sweep_config: Callable[..., Config],
) -> None:
    grid = '[sweep.grid]\noracle = [false, "broken", true]\n[sweep.default]\noracle = false\n'
    config = sweep_config(grid, 'factory = "sweep_rag:build"')
    with pytest.raises(AdapterError, match=r"rejects the setting oracle=\"broken\": ValueError"):
        sweep(config, judge=False)
    asked = calls()
    assert {p for p, _ in asked} == {json.dumps({"oracle": False})}  # stopped at "broken"
    config = sweep_config(grid.replace(', "broken"', ""), 'factory = "sweep_rag:build"')
    sweep(config, judge=False)
    again = calls()
    default_calls = {k: v for k, v in again.items() if k[0] == json.dumps({"oracle": False})}
    assert all(v == 1 for v in default_calls.values())  # the default was not asked again


@pytest.mark.parametrize(
    ("sweep_toml", "message"),
    [
        (
            "[sweep.grid]\na = [1]\nb = [1, 2]\n[sweep.default]\na = 1\nb = 1",
            "sweep.grid.a has 1 value(s): a sweep compares settings",
        ),
        (
            "[sweep.grid]\na = [1, 2]\n[sweep.default]\na = 1\nz = 3",
            "sweep.default names unknown parameter(s) z; the grid has a",
        ),
        (
            "[sweep.grid]\na = [1, 2]\nb = [1, 2]\n[sweep.default]\na = 1",
            "sweep.default has no value for b",
        ),
        (
            "[sweep.grid]\na = [1, 2]\n[sweep.default]\na = 3",
            "sweep.default.a = 3 is not in sweep.grid.a [1, 2]",
        ),
        (
            '[sweep.grid]\na = [1, 2]\n[sweep.default]\na = "1"',
            "sweep.default.a = '1' is not in sweep.grid.a",
        ),
        (
            "[sweep.grid]\na = [true, false]\n[sweep.default]\na = 1",
            "sweep.default.a = 1 is not in sweep.grid.a",
        ),
        (
            "[sweep.grid]\na = [1, 2, 1]\n[sweep.default]\na = 1",
            "sweep.grid.a lists 1 twice",
        ),
        (
            'primary = "ndcg@3"\n[sweep.grid]\na = [1, 2]\n[sweep.default]\na = 1',
            "sweep: unknown metric 'ndcg@3'; the retrieval metrics at k = 5, 1, 10 are",
        ),
        (
            'secondary = ["ndcg@5"]\n[sweep.grid]\na = [1, 2]\n[sweep.default]\na = 1',
            "sweep.secondary lists the primary metric 'ndcg@5'",
        ),
        (
            'factory = "sweep_rag:build"\n[sweep.grid]\na = [1, 2]\n[sweep.default]\na = 1',
            "give either sweep.answer",
        ),
    ],
)
def test_a_bad_grid_is_one_clear_line(
    sweep_config: Callable[..., Config],
    sweep_toml: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(ConfigError) as caught:
        sweep_config(sweep_toml)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    path = caught.value.args[0].split(":")[0]
    assert main(["--config", path, "sweep"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_fewer_than_eight_tuning_questions_is_refused_with_the_reason(
    sweep_config: Callable[..., Config], tmp_path: Path
) -> None:
    lines = (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [
        line
        for line in lines
        if json.loads(line)["split"] == "holdout" or json.loads(line)["id"] in {"q01", "q02"}
    ]
    (tmp_path / "few.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    config = sweep_config(ORACLE_GRID).with_overrides(
        data={"questions": tmp_path / "few.jsonl", "labels": None}
    )
    with pytest.raises(ConfigError) as caught:
        sweep(config, judge=False)
    assert "the tuning split has 2 question(s) with relevant chunks" in str(caught.value)
    assert "at least 8" in str(caught.value)
    assert "sweep_rag" not in sys.modules  # refused before the adapter was even imported


def test_no_sweep_table_is_one_line(sample_config: Config, tmp_path: Path) -> None:
    text = (REPO / "judge.toml").read_text(encoding="utf-8").split("[sweep]")[0]
    path = tmp_path / "judge.toml"
    path.write_text(text.replace('"golden/', f'"{REPO}/golden/'), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"has no \[sweep\] table; docs/sweep.md shows one"):
        sweep(load_config(path))


def test_the_cli_prints_the_decision_and_the_report(
    sweep_config: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    config = sweep_config(ORACLE_GRID)
    assert main(["--config", str(config.source), "sweep", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('adopt order="oracle", noise=0: every guard passed')
    assert '[sweep.default]\norder = "oracle"\nnoise = 0\n' in out
    assert "report: " in out
