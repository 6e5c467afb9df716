"""judge: measure a RAG system's retrieval and answers, with a local Gemma model as the judge.

The Python API (the command line calls the same functions)::

    import judge

    config = judge.load_config("judge.toml")          # or judge.Config(data=judge.DataConfig(...))
    result = judge.evaluate(config, backend="lexical")  # writes a report folder, like `judge run`
    result.judge_table        # per type: n, non-ok counts, faithfulness, relevance, ... (pandas)
    result.retrieval_table    # per type: recall@k, hit@k, mrr, ndcg@k (pandas)
    result.questions()        # one row per golden question (pandas)
    result.gate.verdict       # "ok: ...", "REGRESSED: ...", "FAILED: the adapter failed ...",
                              # or "no compatible earlier run ..."
    result.report             # the run record (judge.Record): what every file was rendered from
    judge.read_record(result.folder.path)   # a saved folder's record (its report.json)

Progress bars (the command line's) show by default when stdout is a terminal or a notebook;
``progress=False`` turns them off, and ``on_progress=`` is called with each
``judge.JudgeProgress`` (done, total, cached, not_ok)::

    judge.evaluate(config, progress=False, on_progress=lambda p: print(p.done, "/", p.total))

``hooks=judge.Hooks(on_adapter=..., on_inputs=..., on_judge_chosen=..., on_judging=...)``
sees every step, as the command line does (then no bars are added unless ``progress=True``).

Importing this package loads no model, opens no connection and does not import pandas: every
name below is loaded on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: public name → the module that defines it
_EXPORTS = {
    "Config": "judge.config",
    "DataConfig": "judge.config",
    "JudgeConfig": "judge.config",
    "RetrievalConfig": "judge.config",
    "ReportsConfig": "judge.config",
    "load_config": "judge.config",
    "evaluate": "judge.pipeline.evaluate",
    "rerender": "judge.pipeline.report",
    "load_inputs": "judge.pipeline.inputs",
    "Evaluation": "judge.pipeline.evaluate",
    "Hooks": "judge.pipeline.evaluate",
    "JudgeProgress": "judge.judging.grading",
    "Record": "judge.record.model",
    "read_record": "judge.record.store",
    "HarnessError": "judge.errors",
    "InputError": "judge.errors",
    "ConfigError": "judge.errors",
}

if TYPE_CHECKING:
    __version__: str
    from judge.config import (
        Config,
        DataConfig,
        JudgeConfig,
        ReportsConfig,
        RetrievalConfig,
        load_config,
    )
    from judge.errors import ConfigError, HarnessError, InputError
    from judge.judging.grading import JudgeProgress
    from judge.pipeline.evaluate import Evaluation, Hooks, evaluate
    from judge.pipeline.inputs import load_inputs
    from judge.pipeline.report import rerender
    from judge.record.model import Record as Record
    from judge.record.store import read_record as read_record


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("judge")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":  # looked up on first use: package metadata is slow to read
        version = globals()["__version__"] = _version()
        return version
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'judge' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "Config",
    "ConfigError",
    "DataConfig",
    "Evaluation",
    "HarnessError",
    "Hooks",
    "InputError",
    "JudgeConfig",
    "JudgeProgress",
    "ReportsConfig",
    "RetrievalConfig",
    "__version__",
    "evaluate",
    "load_config",
    "load_inputs",
    "rerender",
]
