"""The inputs of every command: the golden set, the run to evaluate and the human labels,
loaded and validated once; and retrieval scored on them.

The run is a file or the adapter's answers (saved and reused). Nothing here judges or prints.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from judge.config import Config
from judge.errors import ConfigError
from judge.inputs.adapter import AdapterProgress, adapter_answers, log_note
from judge.inputs.golden import GoldenSet, Leak, find_leaks, load_golden
from judge.inputs.labels import Labels, load_labels_if_any
from judge.inputs.runs import Run, load_run
from judge.record.stages import Measured
from judge.record.store import ReportsDir
from judge.results.tables import retrieval_table
from judge.retrieval import score_run


def _ignore(_: Any) -> None:
    pass


class Inputs(NamedTuple):
    """A validated golden set, the run to evaluate, and the human labels."""

    golden: GoldenSet
    run: Run
    run_source: str
    """The run file (for an adapter, the file its answers were saved to)."""
    reused: bool
    """True when the adapter's saved answers were reused instead of asking it again."""
    asked_again: int
    """With reused answers: the questions the adapter had failed, asked again."""
    leaks: list[Leak]
    labels: Labels
    adapter_log: Path | None = None
    """What the adapter printed while it was asked this time (``reports/runs/<answers>.log``);
    None when it printed nothing or was not asked."""

    def warnings(self, with_labels: bool = True) -> list[str]:
        """Lines every command shows before its output (``check`` lists retired labels
        itself, so it leaves their warning out)."""
        lines = [
            f"document '{leak.doc}' quotes {len(leak.question_ids)} golden questions verbatim "
            f"({', '.join(leak.question_ids)}); the test set may be leaking into the corpus"
            for leak in self.leaks
        ]
        if self.reused:
            again = (
                f"asked again only the {self.asked_again} question(s) it had failed"
                if self.asked_again
                else "the adapter was not asked again"
            )
            lines.append(
                f"answers reused from {self.run_source} ({again}; --fresh-answers asks it)"
            )
        if self.adapter_log is not None:
            lines.append(log_note(self.adapter_log))
        failed = self.run.meta.failed
        if failed:
            lines.append(
                f"the adapter failed for {len(failed)} question(s): {', '.join(sorted(failed))}"
            )
        label_warning = self.labels.warning()
        if label_warning and with_labels:
            lines.append(label_warning)
        return lines


def load_inputs(
    config: Config,
    run_path: Path | None = None,
    *,
    fresh_answers: bool = False,
    on_adapter: Callable[[AdapterProgress], None] = _ignore,
    with_labels: bool = True,
) -> Inputs:
    """Load and validate the golden set, the run and (unless ``with_labels`` is false, for
    commands that never read them) the human labels.

    The run is a file (``run_path``, else ``data.run``) or the adapter's (``data.adapter``):
    its newest valid saved answers for this golden set and corpus with the questions it failed
    asked again, or, with ``fresh_answers`` or none saved, all new answers
    (``judge.inputs.adapter.adapter_answers``).
    """
    golden = load_golden(config.data)
    labels = load_labels_if_any(config.data.labels if with_labels else None, golden.by_id())
    path = run_path or config.data.run
    reused, asked_again = False, 0
    adapter_log: Path | None = None
    if path is not None:
        run = load_run(path, golden, config.data.max_file_mb)
        source = str(path)
    elif config.data.adapter:
        answers = adapter_answers(
            config.data.adapter,
            golden,
            ReportsDir(config.reports.dir).runs_dir,
            config.data.adapter_concurrency,
            fresh=fresh_answers,
            on_progress=on_adapter,
            search_dir=config.source.resolve().parent if config.source else None,
            timeout_s=config.data.adapter_timeout_s,
            say_log=False,  # warnings() names it
        )
        run, source = answers.run, str(answers.path)
        reused, asked_again = answers.reused, answers.asked_again
        adapter_log = answers.log
    else:
        raise ConfigError("no run: set data.run (a file) or data.adapter (module:function)")
    return Inputs(golden, run, source, reused, asked_again, find_leaks(golden), labels, adapter_log)


def measure_retrieval(config: Config, golden: GoldenSet, run: Run, source: str) -> Measured:
    """Score retrieval per question and build the per-type table."""
    scores = score_run(golden, run, config.retrieval.ks)
    return Measured(golden, run, source, scores, retrieval_table(config, golden, scores))
