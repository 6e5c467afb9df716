from pathlib import Path

import pytest

from judge.config import load_config
from judge.errors import ConfigError


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
