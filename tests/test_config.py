import ast
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import SHIPPED_PROMPTS, load_config, shipped_prompt
from judge.errors import ConfigError
from judge.metrics import metric_names


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "conf" / "judge.toml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


def test_relative_paths_given_or_default_are_relative_to_the_file(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, '[data]\nquestions = "q.jsonl"\ncorpus = "../c.jsonl"\n'))
    assert config.data.questions == tmp_path / "conf" / "q.jsonl"
    assert config.data.corpus == tmp_path / "c.jsonl"
    assert config.judge.cache_path == tmp_path / "conf" / ".judge-cache" / "verdicts.sqlite3"
    assert config.reports.baseline == tmp_path / "conf" / "judge-baseline.json"
    assert config.retrieval.ks == (5, 1, 10)


def test_unknown_keys_and_bad_values_are_errors_naming_them(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[data]\nquestions = "q"\ncorpus = "c"\nquestoins = "x"\n[judge]\nbackend = "gpt"\nconcurrency = 0\n',
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    lines = str(caught.value).splitlines()
    assert f"{path}: unknown field 'data.questoins'" in lines
    assert any(line.startswith(f"{path}: judge.backend: Input should be 'auto'") for line in lines)
    assert any(line.startswith(f"{path}: judge.concurrency:") for line in lines)


def test_run_and_adapter_are_exclusive_and_all_is_reserved(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"either data\.run or data\.adapter"):
        load_config(
            _write(tmp_path, '[data]\nquestions = "q"\ncorpus = "c"\nrun = "r"\nadapter = "m:f"\n')
        )
    (tmp_path / "conf" / "judge.toml").unlink()
    (tmp_path / "conf").rmdir()
    with pytest.raises(ConfigError, match="'all' is reserved"):
        load_config(
            _write(
                tmp_path,
                '[data]\nquestions = "q"\ncorpus = "c"\nquestion_types = ["all"]\nout_of_scope_types = []\n',
            )
        )


def test_not_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(_write(tmp_path, "[data\n"))


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        (
            '[retrieval]\ncontext_k = "5"\n',
            'retrieval.context_k: must be an integer such as 2, not "5"',
        ),
        (
            "[retrieval]\ncontext_k = true\n",
            "retrieval.context_k: must be an integer such as 2, not true",
        ),
        (
            "[retrieval]\ncontext_k = 5.0\n",
            "retrieval.context_k: must be an integer such as 2, not 5.0",
        ),
        ("[retrieval]\nk_values = [1, true]\n", "retrieval.k_values.1: must be an integer"),
        (
            '[judge]\nmax_attempts = "3"\n',
            'judge.max_attempts: must be an integer such as 2, not "3"',
        ),
        ("[judge.ollama]\nnum_ctx = 8192.0\n", "judge.ollama.num_ctx: must be an integer"),
        (
            "[judge.ollama]\nseed = false\n",
            "judge.ollama.seed: must be an integer such as 2, not false",
        ),
        ('[judge.embedded]\nn_threads = "4"\n', "judge.embedded.n_threads: must be an integer"),
        (
            '[judge.openai]\ntimeout_s = "60"\n',
            'judge.openai.timeout_s: must be a number such as 0.5, not "60"',
        ),
        (
            "[judge.openai]\ntimeout_s = nan\n",
            "judge.openai.timeout_s: Input should be a finite number",
        ),
        (
            "[reports]\nregression_threshold = true\n",
            "reports.regression_threshold: must be a number",
        ),
    ],
)
def test_numbers_and_bools_must_be_written_as_such(tmp_path: Path, toml: str, said: str) -> None:
    path = _write(tmp_path, '[data]\nquestions = "q"\ncorpus = "c"\n' + toml)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: {said}")


def test_integers_are_numbers_and_lists_still_fill_tuples(tmp_path: Path) -> None:
    config = load_config(
        _write(
            tmp_path,
            '[data]\nquestions = "q"\ncorpus = "c"\nmax_file_mb = 64\n'
            "[retrieval]\nk_values = [1, 3]\n[judge.ollama]\ntimeout_s = 60\n",
        )
    )
    assert config.data.max_file_mb == 64.0
    assert config.judge.ollama.timeout_s == 60.0
    assert config.retrieval.k_values == (1, 3)


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ("x = " + "9" * 5000 + "\n", "an integer has more than 4300 digits"),
        (
            "x = " + "[" * 5000 + "]" * 5000 + "\n",
            "not valid TOML: arrays or tables nested too deeply",
        ),
    ],
)
def test_toml_that_python_cannot_read_is_a_config_error(
    tmp_path: Path, toml: str, said: str
) -> None:
    path = _write(tmp_path, toml)
    with pytest.raises(ConfigError, match=said):
        load_config(path)


def test_the_gate_settings_and_their_scales(tmp_path: Path) -> None:
    base = '[data]\nquestions = "q"\ncorpus = "c"\n'
    config = load_config(_write(tmp_path, base))
    assert (config.reports.margin_share, config.reports.margin_score) == (0.05, 0.10)
    assert config.reports.min_questions is None
    path = tmp_path / "conf" / "judge.toml"
    path.write_text(
        base + "[reports]\nmargin_share = 1.5\nmargin_score = 3\nmin_questions = 0\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    # A share is at most 1, a 0-2 score's margin at most 2, and the old minimum is still checked.
    assert [line.split(": ")[1] for line in str(caught.value).splitlines()] == [
        "reports.margin_share",
        "reports.margin_score",
        "reports.min_questions",
    ]


def test_the_old_minimum_of_questions_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path, '[data]\nquestions = "q"\ncorpus = "c"\n[reports]\nmin_questions = 8\n')
    with caplog.at_level(logging.WARNING, logger="judge"):
        load_config(path)
    assert caplog.messages == [
        f"{path}: reports.min_questions is ignored: a type of any size is decided by exact "
        "tests, collapses and the season now (docs/gate.md); remove it"
    ]


def test_the_old_threshold_is_the_share_margin_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    base = '[data]\nquestions = "q"\ncorpus = "c"\n[reports]\n'
    path = _write(tmp_path, base + "regression_threshold = 0.08\n")
    with caplog.at_level(logging.WARNING, logger="judge"):
        config = load_config(path)
    assert (config.reports.margin_share, config.reports.margin_score) == (0.08, 0.10)
    assert caplog.messages == [
        f"{path}: reports.regression_threshold is deprecated: it now sets reports.margin_share "
        "(the margin of 0-1 metrics; 0-2 scores have reports.margin_score); rename it "
        "(docs/gate.md)"
    ]
    # It survives the round trips of a recorded configuration (re-rendering an old folder).
    assert config.with_overrides(judge={"concurrency": 2}).reports.margin_share == 0.08
    path.write_text(base + "regression_threshold = 0.08\nmargin_share = 0.05\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="regression_threshold is the old name of margin_share"):
        load_config(path)


def test_loading_a_config_imports_no_stage_of_the_pipeline(tmp_path: Path) -> None:
    """config is near the bottom of the layers: it checks ``sweep.primary`` against the names of
    the leaf ``judge.metrics``, not the scorer's (``config → retrieval → inputs → config`` was a
    circle, hidden by a lazy import that ran exactly when a sweep section was read)."""
    path = _write(
        tmp_path,
        '[data]\nquestions = "q"\ncorpus = "c"\n[sweep]\nanswer = "m:f"\n'
        "[sweep.grid]\na = [1, 2]\n[sweep.default]\na = 1\n",
    )
    code = (
        "import sys\n"
        "from judge.config import load_config\n"
        f"assert load_config({str(path)!r}).sweep is not None\n"
        "print(sorted(m for m in sys.modules if m.startswith('judge.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = ast.literal_eval(done.stdout)
    assert "judge.metrics" in loaded
    assert [m for m in loaded if m.startswith(("judge.retrieval", "judge.inputs"))] == []


def test_sweep_metrics_are_checked_against_the_metric_names(tmp_path: Path) -> None:
    base = '[data]\nquestions = "q"\ncorpus = "c"\n[retrieval]\ncontext_k = 3\nk_values = [7]\n'
    sweep = '[sweep]\nanswer = "m:f"\nprimary = "{}"\nsecondary = []\n'
    sweep += "[sweep.grid]\na = [1, 2]\n[sweep.default]\na = 1\n"
    path = _write(tmp_path, "")
    # ks = (3, 7): every name judge.metrics gives for them is a metric the sweep can optimise.
    for name in metric_names([3, 7]):
        path.write_text(base + sweep.format(name), encoding="utf-8")
        config = load_config(path)
        assert config.sweep is not None and config.sweep.primary == name
    path.write_text(base + sweep.format("ndcg@5"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown metric 'ndcg@5'.* at k = 3, 7 are recall@3"):
        load_config(path)


@pytest.mark.parametrize("shipped", ["judge.toml", "golden/sample-en/judge.toml"])
def test_every_shipped_configuration_loads_without_a_warning(
    shipped: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A new user's first command must not print a deprecation warning about our own file.
    repo = Path(__file__).resolve().parents[1]
    with caplog.at_level(logging.WARNING):
        config = load_config(repo / shipped)
    assert config.data.questions.is_file()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_prompts_default_to_the_shipped_ones_and_a_named_one_is_beside_the_config(
    tmp_path: Path,
) -> None:
    config = load_config(_write(tmp_path, '[data]\nquestions = "q"\ncorpus = "c"\n'))
    for path, name in [
        (config.judge.prompt, "judge.v1.md"),
        (config.judge.chunks.prompt, "chunk.v1.md"),
        (config.judge.correctness.prompt, "correctness.v1.md"),
    ]:
        assert path == shipped_prompt(name) and path.is_file()
        assert path.parent == SHIPPED_PROMPTS  # inside the package, not beside the config
    # every shipped prompt file is in the package (judge/prompts is the repo's prompts/)
    repo_prompts = Path(__file__).resolve().parents[1] / "prompts"
    assert sorted(p.name for p in SHIPPED_PROMPTS.glob("*.md")) == sorted(
        p.name for p in repo_prompts.glob("*.md")
    )
    (tmp_path / "other").mkdir()
    named = _write(
        tmp_path / "other", '[data]\nquestions = "q"\ncorpus = "c"\n[judge]\nprompt = "p/mine.md"\n'
    )
    assert load_config(named).judge.prompt == tmp_path / "other" / "conf" / "p" / "mine.md"


def test_a_config_in_an_empty_folder_outside_the_checkout_checks_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No prompts/ beside it, no prompt line: `judge check` and `judge run --backend lexical`
    work, run from the folder itself (as `judge import` leaves a team: data files and the
    [data] lines it prints)."""
    sample = Path(__file__).resolve().parents[1] / "golden" / "sample"
    folder = tmp_path / "team"
    folder.mkdir()
    for name in ("questions.jsonl", "corpus.jsonl", "run.jsonl", "labels.jsonl"):
        (folder / name).write_bytes((sample / name).read_bytes())
    (folder / "judge.toml").write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\nrun = "run.jsonl"\n'
        'labels = "labels.jsonl"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(folder)
    assert main(["check", "--backend", "lexical"]) == 0
    assert main(["check", "--no-judge"]) == 0
    assert main(["run", "--backend", "lexical"]) == 0
    out = capsys.readouterr()
    assert "prompt file not found" not in out.out + out.err
    assert (folder / "reports" / "latest").is_file()
