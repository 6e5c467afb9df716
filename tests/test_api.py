"""The Python API: `import judge` is cheap and side-effect free; the README's example runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, SAMPLE


def test_import_judge_loads_no_model_no_pandas_no_backend() -> None:
    code = (
        "import sys, judge\n"
        "print(judge.__version__)\n"
        "print(sorted(m for m in ('pandas', 'llama_cpp', 'httpx', 'ollama', "
        "'judge.judging.backends', 'judge.pipeline') if m in sys.modules))\n"
        "print(judge.evaluate.__module__)\n"
        "import judge.pipeline\n"
        "print(judge.evaluate is judge.pipeline.evaluate)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.splitlines()
    assert out[0]
    assert out[1] == "[]"
    assert out[2] == "judge.pipeline.evaluate"
    assert out[3] == "True"  # the name the CLI looks up (and tests replace) is the same function


def _readme_block(marker: str) -> str:
    """The fenced Python block of README.md that starts with ``marker``."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"```python\n(.*?)```", readme, flags=re.S):
        if block.startswith(marker):
            return str(block)
    raise AssertionError(f"README.md has no python block starting with {marker!r}")


def test_the_readme_pytest_example_passes_as_written(tmp_path: Path) -> None:
    """Copied into a file and run with pytest, next to a judge.toml for the sample set."""
    (tmp_path / "judge.toml").write_text(
        f'[data]\nquestions = "{SAMPLE / "questions.jsonl"}"\n'
        f'corpus = "{SAMPLE / "corpus.jsonl"}"\nrun = "{SAMPLE / "run.jsonl"}"\n'
        f'[judge]\nprompt = "{REPO / "prompts" / "judge.v1.md"}"\n',
        encoding="utf-8",
    )
    example = _readme_block("# test_rag_quality.py")
    (tmp_path / "test_rag_quality.py").write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_rag_quality.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    # The same test fails, with a message naming the type and metric, when a bar is too high.
    strict = example.replace('"negative": 0.5', '"negative": 0.99')
    assert strict != example
    (tmp_path / "test_rag_quality.py").write_text(strict, encoding="utf-8")
    failed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_rag_quality.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert failed.returncode == 1
    assert "negative recall@5" in failed.stdout


def test_the_record_is_part_of_the_api(tmp_path: Path) -> None:
    """``judge.Record`` and ``judge.read_record``: a saved folder reads back into the record
    ``evaluate`` returned (loaded on first use, like every name of the package)."""
    code = (
        "import sys, judge\n"
        "print('judge.record' in sys.modules, 'judge.folders' in sys.modules)\n"
        f"config = judge.load_config({str(REPO / 'judge.toml')!r}).with_overrides(\n"
        f"    judge={{'cache_path': {str(tmp_path / 'cache.sqlite3')!r}}},\n"
        f"    reports={{'dir': {str(tmp_path / 'reports')!r}}})\n"
        "result = judge.evaluate(config, backend='lexical')\n"
        "back = judge.read_record(result.folder.path)\n"
        "print(isinstance(back, judge.Record), back.model_dump(mode='json') == "
        "result.report.model_dump(mode='json'))\n"
        "print(len(back.questions), [r.question_id for r in back.needs_review] == "
        "[r.question_id for r in result.report.needs_review])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.splitlines()
    assert out[0] == "False False"
    assert out[1] == "True True"
    questions, same = out[2].split()
    assert int(questions) == 30 and same == "True"
