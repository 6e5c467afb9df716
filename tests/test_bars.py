"""Per-type bars: the [bars] table, judge bars suggest (parsed back, written into judge.toml),
judge run --bars, and the per-config baseline (issue 22, items 2 and 5)."""

from __future__ import annotations

import json
import logging
import tomllib
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import load_config
from judge.errors import ConfigError
from judge.results.bars import BarResult, check_bars, suggest_bars
from judge.results.gate import bar_checks
from judge.results.tables import TypeTable
from tests.conftest import REPO, SAMPLE


def sample_toml(
    folder: Path, name: str = "judge.toml", extra: str = "", run: Path | None = None
) -> Path:
    """A configuration of the shipped sample set in ``folder`` (its reports and cache there)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        f'[data]\nquestions = "{SAMPLE / "questions.jsonl"}"\ncorpus = "{SAMPLE / "corpus.jsonl"}"\n'
        f'run = "{run or SAMPLE / "run.jsonl"}"\n'
        f'\n[judge]\nbackend = "lexical"\nprompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
        f'cache_path = "cache.sqlite3"\n\n[reports]\ndir = "reports"\n' + extra,
        encoding="utf-8",
    )
    return path


# --- the [bars] table ------------------------------------------------------------------------


def test_bars_are_read_and_validated(tmp_path: Path) -> None:
    path = sample_toml(
        tmp_path, extra='\n[bars.faithfulness]\nfactual = 1.6\n[bars."recall@5"]\nall = 0.5\n'
    )
    config = load_config(path)
    assert config.bars == {"faithfulness": {"factual": 1.6}, "recall@5": {"all": 0.5}}


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("[bars.faithfullness]\nfactual = 1.0\n", "bars: unknown metric 'faithfullness'"),
        (
            "[bars.faithfulness]\nfactoid = 1.0\n",
            "bars.faithfulness.factoid: unknown question type",
        ),
        (
            "[bars.faithfulness]\nfactual = 2.5\n",
            "bars.faithfulness.factual = 2.5: off the scale of faithfulness (a 0-2 judge score)",
        ),
        (
            "[bars.full_marks]\nfactual = 1.5\n",
            "bars.full_marks.factual = 1.5: off the scale of full_marks (a 0-1 share)",
        ),
        ('[bars."recall@5"]\nfactual = -0.1\n', "off the scale of recall@5"),
        (
            '[bars."recall@5"]\nout_of_scope = 0.5\n',
            "out_of_scope questions have no relevant chunks",
        ),
        ('[bars."recall@3"]\nfactual = 0.5\n', "bars: unknown metric 'recall@3'"),
        ('[bars.faithfulness]\nfactual = "1.5"\n', "bars.faithfulness.factual"),
    ],
)
def test_a_bad_bar_is_one_located_error(tmp_path: Path, table: str, expected: str) -> None:
    path = sample_toml(tmp_path, extra="\n" + table)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)


# --- checking bars ---------------------------------------------------------------------------


def _judge_table(rows: list[dict[str, str | int | float | None]]) -> TypeTable:
    return TypeTable(
        metrics=["faithfulness", "relevance"],
        count_columns=["n", "parse_error", "adapter_failed"],
        primary="faithfulness",
        weakest=None,
        rows=rows,
    )


RETRIEVAL = TypeTable(
    metrics=["recall@5"],
    count_columns=["n", "excluded"],
    primary="recall@5",
    weakest=None,
    rows=[{"type": "factual", "n": 12, "excluded": 0, "recall@5": 0.75}],
)


def test_a_bar_fails_below_its_floor_without_a_value_and_with_failed_questions() -> None:
    judge = _judge_table(
        [
            {
                "type": "factual",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": 1.42,
                "relevance": 1.9,
            },
            {
                "type": "negative",
                "n": 3,
                "parse_error": 1,
                "adapter_failed": 1,
                "faithfulness": 2.0,
                "relevance": 2.0,
            },
            {
                "type": "out_of_scope",
                "n": 0,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": None,
                "relevance": None,
            },
        ]
    )
    bars = {
        "faithfulness": {"factual": 1.6, "negative": 1.0, "out_of_scope": 1.0},
        "relevance": {"factual": 1.9},
        "recall@5": {"factual": 0.7},
    }
    results = check_bars(bars, judge, RETRIEVAL)
    lines = [r.line() for r in results]
    assert lines == [
        "bar: factual faithfulness 1.42 < 1.60 (12 questions)",
        "bar: negative faithfulness 2.00 ≥ 1.00 over 3 of 5 questions: 2 got no answer or no verdict",
        "bar: out_of_scope faithfulness has no value (0 questions), bar 1.00",
        "bar: factual relevance 1.90 ≥ 1.90 (12 questions)",
        "bar: factual recall@5 0.75 ≥ 0.70 (12 questions)",
    ]
    assert [r.passed for r in results] == [False, False, False, True, True]
    checks = bar_checks(results)
    assert [(c.name, c.passed, c.kind) for c in checks][:2] == [
        ("bar: factual faithfulness", False, "bar"),
        ("bar: negative faithfulness", False, "bar"),
    ]
    assert checks[0].message == lines[0]


def test_two_decimals_never_hide_which_side_of_the_floor_a_value_is() -> None:
    assert BarResult("faithfulness", "factual", 1.6, 1.597, 10, 0).line() == (
        "bar: factual faithfulness 1.597 < 1.600 (10 questions)"
    )


def test_suggest_is_todays_value_minus_the_margin_rounded_down() -> None:
    judge = _judge_table(
        [
            {
                "type": "factual",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": 1.333333,
                "relevance": 0.05,
            },
            {
                "type": "all",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "faithfulness": 1.333333,
                "relevance": 0.05,
            },
        ]
    )
    suggested = suggest_bars(
        ["faithfulness", "relevance", "recall@5"], judge, RETRIEVAL, ["factual", "negative"]
    )
    # 1.333333 - 0.10 = 1.233333 -> 1.23; 0.05 - 0.10 < 0 -> 0.0; 0.75 - 0.05 = 0.70 (not 0.69)
    assert [(s.metric, s.type, s.floor) for s in suggested] == [
        ("faithfulness", "factual", 1.23),
        ("relevance", "factual", 0.0),
        ("recall@5", "factual", 0.7),
    ]


# --- judge bars suggest, judge run --bars ----------------------------------------------------


def test_suggest_prints_a_table_that_parses_back_and_run_bars_passes_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    capsys.readouterr()
    assert main(["--config", str(path), "bars", "suggest"]) == 0
    snippet = capsys.readouterr().out
    bars = tomllib.loads(snippet)["bars"]
    assert set(bars) == {"faithfulness", "relevance", "recall@5"}
    # the lexical judge on the sample: factual faithfulness 1.333 (16 points over 12), minus 0.10
    assert bars["faithfulness"]["factual"] == 1.23
    assert "out_of_scope" not in bars["recall@5"]  # no value, no bar
    before = path.read_bytes()
    assert main(["--config", str(path), "bars", "suggest", "--write"]) == 0
    after = path.read_bytes()
    assert after.startswith(before)  # every other byte kept
    assert load_config(path).bars == bars
    capsys.readouterr()
    assert main(["--config", str(path), "run", "--bars"]) == 0
    assert (
        f"bars: {sum(map(len, bars.values()))} of {sum(map(len, bars.values()))} met"
        in capsys.readouterr().out
    )


def test_write_refuses_existing_bars_unless_replace_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    text = path.read_text(encoding="utf-8")
    head, tail = text.split("[reports]")
    path.write_text(
        head + "# mine\n[bars.faithfulness]\nfactual = 1.99\n\n[reports]" + tail, encoding="utf-8"
    )
    assert main(["--config", str(path), "bars", "suggest", "--write"]) == 2
    assert "already has a [bars] table; give --replace" in capsys.readouterr().err
    assert (
        main(["--config", str(path), "bars", "suggest", "--write", "--replace", "--metric", "mrr"])
        == 0
    )
    new = path.read_text(encoding="utf-8")
    assert new.startswith(head + "# mine\n# Per-type bars")
    assert new.endswith("\n[reports]" + tail)
    assert set(load_config(path).bars) == {"mrr"}


def test_write_refuses_bars_it_cannot_replace_by_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path, extra="bars = { faithfulness = { factual = 1.0 } }\n")
    path.write_text(
        path.read_text(encoding="utf-8").replace("[reports]\n", "[reports]\n"), encoding="utf-8"
    )
    # an inline table inside [reports] would be reports.bars: put it at the top instead
    text = path.read_text(encoding="utf-8").replace(
        "bars = { faithfulness = { factual = 1.0 } }\n", ""
    )
    path.write_text("bars = { faithfulness = { factual = 1.0 } }\n" + text, encoding="utf-8")
    assert main(["--config", str(path), "run"]) == 0
    before = path.read_bytes()
    assert main(["--config", str(path), "bars", "suggest", "--write", "--replace"]) == 2
    assert "cannot be replaced line by line; edit them by hand" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_suggest_without_a_run_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "bars", "suggest"]) == 2
    assert "run 'judge run' first" in capsys.readouterr().err


def _lowered_run(tmp_path: Path, qid: str) -> Path:
    """The sample run with one answer replaced by words found in no chunk."""
    lines = (SAMPLE / "run.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        record = json.loads(line)
        if record.get("id") == qid:
            record["answer"] = "Zorblax quintessence flummoxes the periwinkle."
        out.append(json.dumps(record, ensure_ascii=False))
    path = tmp_path / "lowered.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def first_full_marks(config_path: Path, qtype: str) -> str:
    """A question of ``qtype`` the latest run gave faithfulness 2."""
    config = load_config(config_path)
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    record = json.loads((config.reports.dir / folder / "report.json").read_text(encoding="utf-8"))
    return next(
        row["question_id"]
        for row in record["questions"]
        if row["type"] == qtype and row["verdict"] and row["verdict"]["faithfulness"] == 2
    )


def test_run_bars_fails_on_a_crossed_bar_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    assert (
        main(["--config", str(path), "bars", "suggest", "--write", "--metric", "faithfulness"]) == 0
    )
    qid = first_full_marks(path, "factual")
    capsys.readouterr()
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.json"
    lowered = str(_lowered_run(tmp_path, qid))
    code = main(
        [
            "--config",
            str(path),
            "run",
            "--bars",
            "--run",
            lowered,
            "--junit",
            str(junit),
            "--json",
            str(summary),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    # 16 points over 12 factual questions; one answer from 2 to 0: 14 / 12 = 1.167 < 1.23
    assert "bar: factual faithfulness 1.17 < 1.23 (12 questions)" in out.splitlines()
    assert "gate: FAILED: bar: factual faithfulness 1.17 < 1.23 (12 questions)" in out
    assert "bar: procedural faithfulness" not in out  # the bars met are not listed one by one
    checks = {c["name"]: c for c in json.loads(summary.read_text(encoding="utf-8"))["checks"]}
    assert checks["bar: factual faithfulness"]["passed"] is False
    assert checks["bar: procedural faithfulness"]["passed"] is True
    assert 'name="bar: factual faithfulness"' in junit.read_text(encoding="utf-8")


def test_run_bars_without_a_bars_table_is_refused_before_judging(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run", "--bars"]) == 2
    assert "no [bars] table; write one with 'judge bars suggest --write'" in capsys.readouterr().err
    assert not (tmp_path / "reports" / "latest").exists()


def test_the_nightly_checks_the_bars_of_its_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    assert (
        main(["--config", str(path), "bars", "suggest", "--write", "--metric", "faithfulness"]) == 0
    )
    qid = first_full_marks(path, "factual")
    capsys.readouterr()
    code = main(["--config", str(path), "nightly", "--run", str(_lowered_run(tmp_path, qid))])
    first = capsys.readouterr().out.splitlines()[0]
    assert code == 1
    assert first.startswith("nightly: FAILED: bar: factual faithfulness 1.17 < 1.23 (12 questions)")


# --- the per-config baseline -----------------------------------------------------------------


def test_two_configs_in_one_folder_keep_two_baselines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = sample_toml(tmp_path, "judge.toml")
    b = sample_toml(tmp_path, "nightly.toml", extra="").with_name("nightly.toml")
    b.write_text(
        a.read_text(encoding="utf-8").replace('dir = "reports"', 'dir = "reports-b"'),
        encoding="utf-8",
    )
    assert load_config(a).reports.baseline == tmp_path / "judge-baseline.json"
    assert load_config(b).reports.baseline == tmp_path / "nightly-baseline.json"
    assert main(["--config", str(a), "run"]) == 0
    assert main(["--config", str(a), "baseline", "pin"]) == 0
    pinned_a = (tmp_path / "judge-baseline.json").read_bytes()
    assert main(["--config", str(b), "run"]) == 0
    # nightly.toml's pin writes its own file (without --replace: nothing was there) ...
    assert main(["--config", str(b), "baseline", "pin"]) == 0
    assert (tmp_path / "nightly-baseline.json").is_file()
    # ... and leaves judge.toml's as it was
    assert (tmp_path / "judge-baseline.json").read_bytes() == pinned_a


def test_a_given_baseline_path_is_kept(tmp_path: Path) -> None:
    path = sample_toml(tmp_path, "nightly.toml", extra='baseline = "pins/b.json"\n')
    assert load_config(path).reports.baseline == tmp_path / "pins" / "b.json"


def test_the_old_shared_baseline_is_copied_once_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = sample_toml(tmp_path, "nightly.toml")
    shared = tmp_path / "judge-baseline.json"
    shared.write_bytes(b'{"format_version": 2}\n')
    with caplog.at_level(logging.WARNING, logger="judge"):
        config = load_config(path)
    own = tmp_path / "nightly-baseline.json"
    assert config.reports.baseline == own
    assert own.read_bytes() == shared.read_bytes()  # copied; the old file left for the others
    [warning] = [r.getMessage() for r in caplog.records if "baseline" in r.getMessage()]
    assert f"copied the shared judge-baseline.json to {own}" in warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="judge"):
        load_config(path)  # read once: its own file now, no warning again
    assert not [r for r in caplog.records if "baseline" in r.getMessage()]


def test_judge_toml_keeps_its_baseline_and_another_config_does_not_take_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sample_toml(tmp_path, "judge.toml")
    path = sample_toml(tmp_path, "nightly.toml")
    (tmp_path / "judge-baseline.json").write_bytes(b'{"format_version": 2}\n')
    with caplog.at_level(logging.WARNING, logger="judge"):
        config = load_config(path)
    assert config.reports.baseline == tmp_path / "nightly-baseline.json"
    assert not config.reports.baseline.exists()
    [warning] = [r.getMessage() for r in caplog.records if "baseline" in r.getMessage()]
    assert "judge-baseline.json is judge.toml's, so this run is held to no baseline" in warning


def test_correctness_on_leaves_every_bar_met_and_a_correctness_bar_counts_its_own_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``[judge.correctness]`` on, the judge table has the correctness counts beside the
    statuses: a bar on faithfulness is not failed by the questions that were asked about
    correctness (they are no failures), and a correctness bar is over the questions given an
    ok correctness verdict, its failures the correctness verdicts that are not ok."""
    path = sample_toml(
        tmp_path,
        extra=(
            f'\n[judge.correctness]\nenabled = true\nprompt = "{REPO / "prompts" / "correctness.v1.md"}"\n'
        ),
    )
    assert main(["--config", str(path), "run"]) == 0
    metrics = ["faithfulness", "relevance", "correctness", "recall@5"]
    args = [arg for metric in metrics for arg in ("--metric", metric)]
    assert main(["--config", str(path), "bars", "suggest", "--write", *args]) == 0
    bars = load_config(path).bars
    assert bars.get("correctness")
    capsys.readouterr()
    assert main(["--config", str(path), "run", "--bars", "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    total = sum(map(len, bars.values()))
    assert f"bars: {total} of {total} met" in out
    assert "got no answer or no verdict" not in out
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["verdict"].startswith("ok")


def test_a_correctness_bar_is_over_the_ok_correctness_verdicts() -> None:
    judge = TypeTable(
        metrics=["faithfulness", "relevance", "correctness"],
        count_columns=[
            "n",
            "parse_error",
            "adapter_failed",
            "correctness_asked",
            "correctness_not_ok",
        ],
        primary="faithfulness",
        weakest=None,
        rows=[
            {
                "type": "factual",
                "n": 12,
                "parse_error": 0,
                "adapter_failed": 0,
                "correctness_asked": 8,
                "correctness_not_ok": 1,
                "faithfulness": 1.5,
                "relevance": 1.5,
                "correctness": 1.25,
            },
        ],
    )
    bars = {"faithfulness": {"factual": 1.0}, "correctness": {"factual": 1.0}}
    # faithfulness: over the 12 answers, none failed (8 asked about correctness is no failure);
    # correctness: 8 asked, 1 not ok, so over 7 of 8
    assert [r.line() for r in check_bars(bars, judge, RETRIEVAL)] == [
        "bar: factual faithfulness 1.50 ≥ 1.00 (12 questions)",
        "bar: factual correctness 1.25 ≥ 1.00 over 7 of 8 questions: 1 got no answer or no verdict",
    ]
