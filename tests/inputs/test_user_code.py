"""The user's code, contained: an adapter that cannot be imported is refused in one line, and
its error message, however long or broken, is kept short enough to save and read back."""

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import AdapterError
from judge.inputs.adapter import produce_run
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run, save_run
from judge.inputs.user_code import MAX_ERROR_CHARS
from judge.io.jsonl import record_problem

Tiny = Callable[..., Config]


def test_adapter_that_cannot_be_loaded(tiny: Tiny, adapter_module: str) -> None:
    golden = load_golden(tiny().data)
    with pytest.raises(AdapterError, match="expected 'module:function'"):
        produce_run("my_rag", golden, 1)
    with pytest.raises(AdapterError, match="cannot import 'no_such_module'"):
        produce_run("no_such_module:answer", golden, 1)
    with pytest.raises(AdapterError, match="'my_rag' has no callable 'missing'"):
        produce_run(f"{adapter_module}:missing", golden, 1)


def test_a_long_or_broken_error_message_is_kept_short_and_savable(
    tiny: Tiny, tmp_path: Path
) -> None:
    (tmp_path / "loud_rag.py").write_text(
        "def answer(question):\n    raise RuntimeError('\\ud800' + 'x' * 100_000)\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    try:
        run = produce_run("loud_rag:answer", load_golden(tiny().data), concurrency=2)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("loud_rag", None)
    errors = list(run.meta.failed.values())
    assert len(errors) == 4
    assert all(len(e) == MAX_ERROR_CHARS and e.startswith("RuntimeError: ?xxx") for e in errors)
    assert errors[0].endswith("x…")
    assert record_problem({"run_meta": run.meta.model_dump(mode="json")}) is None
    save_run(run, tmp_path / "saved.jsonl")  # a lone surrogate would not encode
    assert (
        load_run(tmp_path / "saved.jsonl", load_golden(tiny().data)).meta.failed == run.meta.failed
    )
