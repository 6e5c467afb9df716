"""Three smaller classes of the hardening matrix (issue 34): ``bars suggest --write --replace``
into a configuration whose bars are dotted keys; the pytest plugin with a missing golden set;
a ``reports/latest`` that names a folder outside ``reports/``.

- dotted keys (``bars.faithfulness.factual = 1.5`` at the top of judge.toml) are replaced as
  ``[bars]`` tables are, every other byte kept; a dotted value over several lines is refused
  in one line, the file untouched;
- the plugin's evaluation error (a golden set that is not there) is printed once, under the
  first bar; every other bar fails with a short line naming it;
- ``reports/latest`` holding ``../elsewhere``, an absolute path or a name with a slash is
  refused in one line (exit 2), never followed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.cli import main
from judge.config import load_config
from judge.pipeline.bars import write_bars
from tests.conftest import sample_toml

DOTTED = "bars.faithfulness.factual = 1.5\n'bars'.relevance.factual = 1.25\n"


def test_replace_takes_out_dotted_bars_at_the_top_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text("# my config\n" + DOTTED + "title = 'kept'\n" + text, encoding="utf-8")
    with pytest.raises(Exception):  # noqa: B017 (the config refuses an unknown key)
        load_config(path)
    path.write_text("# my config\n" + DOTTED + text, encoding="utf-8")
    assert load_config(path).bars == {
        "faithfulness": {"factual": 1.5},
        "relevance": {"factual": 1.25},
    }
    assert main(["--config", str(path), "run"]) == 0
    assert main(["--config", str(path), "bars", "suggest", "--write"]) == 2
    assert "already has a [bars] table; give --replace" in capsys.readouterr().err
    assert (
        main(["--config", str(path), "bars", "suggest", "--write", "--replace", "--metric", "mrr"])
        == 0
    )
    new = path.read_text(encoding="utf-8")
    assert new.startswith("# my config\n" + text)  # the dotted keys out, every other byte kept
    assert "bars.faithfulness" not in new and "'bars'.relevance" not in new
    assert set(load_config(path).bars) == {"mrr"}


def test_a_dotted_bar_over_several_lines_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    path = sample_toml(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text("bars.faithfulness.factual = [\n  1.5,\n]\n" + text, encoding="utf-8")
    before = path.read_bytes()
    from judge.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        write_bars(path, "[bars.mrr]\nfactual = 0.5\n", replace=True)
    assert "cannot be replaced line by line; edit them by hand" in str(caught.value)
    assert path.read_bytes() == before


def test_the_plugins_evaluation_error_is_printed_once(pytester: pytest.Pytester) -> None:
    path = sample_toml(
        pytester.path / "project",
        extra="\n[bars.faithfulness]\nfactual = 1.0\nprocedural = 1.0\nnegative = 1.0\n",
    )
    missing = pytester.path / "gone.jsonl"
    text = path.read_text(encoding="utf-8")
    start = text.index('questions = "') + len('questions = "')
    end = text.index('"', start)
    path.write_text(text[:start] + str(missing) + text[end:], encoding="utf-8")
    result = pytester.runpytest(
        "--judge-config", str(path), "--judge-backend", "lexical", "-p", "no:randomly"
    )
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    # Pytest's own short summary repeats each failure's first line when the terminal is wide
    # enough (CI's is); the plugin's part is the failure sections above it.
    sections = out.split("short test summary info")[0]
    assert sections.count(str(missing)) == 1, out
    assert sections.count("the evaluation failed; its error is shown once, under") == 2
    assert "Traceback" not in out


@pytest.mark.parametrize("pointer", ["../elsewhere", "/tmp", "a/b", "..", "sub\\..\\.."])
def test_a_latest_pointer_outside_reports_is_refused(
    pointer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path / "project")
    assert main(["--config", str(path), "run"]) == 0
    reports = tmp_path / "project" / "reports"
    real = (reports / "latest").read_text(encoding="utf-8").strip()
    elsewhere = tmp_path / "project" / "elsewhere"  # what ../elsewhere names
    elsewhere.mkdir()
    (elsewhere / "manifest.json").write_text("{}", encoding="utf-8")  # a decoy folder
    (reports / "latest").write_text(pointer + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["--config", str(path), "report"]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert f"{reports / 'latest'}: names" in lines[0] and "not a report folder in" in lines[0]
    (reports / "latest").write_text(real + "\n", encoding="utf-8")
    assert main(["--config", str(path), "report"]) == 0
