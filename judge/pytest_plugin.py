"""The pytest plugin: ``pytest --judge-config judge.toml`` turns every per-type bar of the
configuration's ``[bars]`` table into its own test case, the article's CI habit.

One evaluation (``judge.pipeline.evaluate``, the one ``judge run`` makes, report folder
included, every bar checked in its record's gate) is run when the first bar is tested, and
each bar passes or fails as its gate check did, with the bar's own line as the failure message
(``judge.results.bars``). The judge is
the configuration's, or ``--judge-backend`` (``lexical`` keeps a test model-free).

Paths never depend on the directory pytest happens to run in by accident: ``--judge-config`` is
read relative to where pytest was started (as any file argument), the ``judge_config`` ini
setting relative to the ini file's folder, and every path inside the configuration relative to
the configuration file itself (``judge.config.load_config``).

Registered as the ``judge`` entry point of ``pytest11``, so it loads in every pytest session:
this module imports nothing heavy until a judge configuration is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from judge.config import Config
    from judge.pipeline.evaluate import Evaluation
    from judge.results.gate import GateCheck

#: Where the session keeps its one evaluation (or the error that stopped it).
_EVALUATION = pytest.StashKey[Any]()
_CONFIG: pytest.StashKey[Config] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("judge", "per-type bars of a RAG system (judge)")
    group.addoption(
        "--judge-config",
        metavar="FILE",
        help="a judge.toml with a [bars] table: one test per bar (after one evaluation)",
    )
    group.addoption(
        "--judge-backend",
        metavar="NAME",
        help="the judge for that evaluation (overrides judge.backend; 'lexical': no model)",
    )
    parser.addini(
        "judge_config",
        "a judge.toml with a [bars] table, relative to this ini file: one test per bar",
    )


def _config_path(config: pytest.Config) -> Path | None:
    given = config.getoption("judge_config")
    if given:
        return Path(config.invocation_params.dir, given)
    ini = config.getini("judge_config")
    if ini:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return Path(base, str(ini))
    return None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    path = _config_path(config)
    if path is None:
        return
    from judge.config import load_config
    from judge.errors import HarnessError
    from judge.pipeline.bars import bars_asked

    try:
        judge_config = load_config(path)
    except HarnessError as exc:
        raise pytest.UsageError(f"--judge-config: {exc}") from None
    try:
        bars_asked(judge_config, True)
    except HarnessError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_CONFIG] = judge_config
    collector = BarsCollector.from_parent(session, name=path.name, path=path)
    for metric, floors in judge_config.bars.items():
        for qtype in floors:
            name = f"{metric}[{qtype}]"
            items.append(BarItem.from_parent(collector, name=name, bar=(metric, qtype)))


class BarsCollector(pytest.Collector):
    """The configuration file's bars (its items are made at collection, from ``[bars]``)."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:  # pragma: no cover (not called)
        return []


class BarCrossed(AssertionError):
    """A bar crossed: its line is the whole failure message."""


class EvaluationFailed(Exception):
    """The evaluation failed, and its error was shown under the first bar (``first``): every
    other bar fails with this short line instead of the same error again (a missing golden set
    said once, not once per bar)."""

    def __init__(self, first: str) -> None:
        super().__init__(f"judge: the evaluation failed; its error is shown once, under {first}")


@dataclass(frozen=True)
class _Failed:
    """The evaluation's error, and the bar that ran it (the one that shows the error)."""

    error: Exception
    first: str


def _evaluation(config: pytest.Config, item: str) -> Evaluation:
    """The session's one evaluation, run on first use (by the bar ``item``); an error that
    stopped it fails that bar with the error and every other bar with ``EvaluationFailed``."""
    if _EVALUATION not in config.stash:
        from judge.errors import HarnessError
        from judge.pipeline.evaluate import evaluate

        try:
            backend = config.getoption("judge_backend") or None
            config.stash[_EVALUATION] = evaluate(config.stash[_CONFIG], backend=backend, bars=True)
        except HarnessError as exc:
            config.stash[_EVALUATION] = _Failed(exc, item)
    outcome = config.stash[_EVALUATION]
    if isinstance(outcome, _Failed):
        if outcome.first == item:
            raise outcome.error
        raise EvaluationFailed(outcome.first)
    return outcome  # type: ignore[no-any-return]


class BarItem(pytest.Item):
    """One per-type bar: passes when the run's type meets it (``judge.results.bars``)."""

    def __init__(self, *, bar: tuple[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bar = bar

    def result(self) -> GateCheck:
        """The bar's check in the run record's gate (the evaluation checked every bar)."""
        metric, qtype = self.bar
        name = f"bar: {qtype} {metric}"
        checks = _evaluation(self.config, self.nodeid).report.gate.bar_checks
        return next(check for check in checks if check.name == name)

    def runtest(self) -> None:
        result = self.result()
        self.user_properties.append(("bar", result.message))
        if not result.passed:
            raise BarCrossed(result.message)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        from judge.errors import HarnessError

        if isinstance(excinfo.value, BarCrossed | EvaluationFailed):
            return str(excinfo.value)
        if isinstance(excinfo.value, HarnessError):
            return f"judge: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        metric, qtype = self.bar
        return self.path, None, f"bar: {qtype} {metric}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Where the evaluation's report went, and which judge gave the verdicts."""
    outcome = config.stash.get(_EVALUATION, None)
    if outcome is None or isinstance(outcome, _Failed):
        return
    manifest = outcome.report.manifest
    judge = manifest.judge.describe()
    terminalreporter.write_line(f"judge: {judge}; report {outcome.folder.path}")
