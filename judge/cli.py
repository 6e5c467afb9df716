"""Command line: ``judge check | retrieval | trec | run | nightly | show | report | ...``.

Each command parses its arguments, makes one wiring call (``judge.pipeline``: it reads, does
the work and writes) and prints a view of what it returns (``judge.report``). Heavy modules
(pandas, pydantic models, the backends) are imported inside the commands, so ``judge --help``
answers at once.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from judge import signals
from judge.errors import (
    EXIT_BAD_INPUT,
    EXIT_REGRESSION,
    ConfigError,
    HarnessError,
    InputError,
    Interrupted,
)
from judge.formatting import terminal_text

if TYPE_CHECKING:
    from judge.config import Config
    from judge.pipeline import Inputs

DEFAULT_CONFIG = "judge.toml"
#: The collector's thresholds for a command (Python's defaults: 700, 10, 10): allocations
#: between two young-generation collections, then young collections between two of the middle
#: generation, and middle ones between two full collections.
GC_THRESHOLDS = (20_000, 100, 100)
#: judge.pipeline.batch.BATCH_MAX_FILE_MB, as a literal so that 'judge --help' imports nothing
#: (tests/test_batch.py checks they agree).
DEFAULT_BATCH_FILE_MB = 100.0


def _config(args: argparse.Namespace) -> Config:
    from judge.config import load_config

    return load_config(Path(args.config))


def _say(text: object = "", *, err: bool = False, one_line: bool = False) -> None:
    """Print text that may carry data (ids, answers, file lines, error messages, model names)
    through ``terminal_text``: no control character from the data reaches the terminal."""
    print(terminal_text(text, one_line=one_line), file=sys.stderr if err else sys.stdout)


def _warn(lines: Sequence[str]) -> None:
    for line in lines:
        _say(f"warning: {line}", err=True, one_line=True)


def _warnings_of(with_labels: bool = True) -> Callable[[Inputs], None]:
    """A wiring call's ``on_inputs``: the inputs' warnings, printed once they are loaded
    (``check`` lists retired labels itself; commands that read no labels leave them out)."""

    def on_inputs(inputs: Inputs) -> None:
        _warn(inputs.warnings(with_labels=with_labels))

    return on_inputs


def cmd_check(args: argparse.Namespace) -> int:
    from judge.console import adapter_progress
    from judge.pipeline.check import check, repeat, repeat_refusal

    config = _config(args)
    if args.repeat is not None:
        repeat_refusal(config, args.run)  # before anything is loaded or asked
    with adapter_progress() as on_adapter:
        checked = check(
            config,
            args.run,
            fresh_answers=args.fresh_answers,
            preflight_judge=not args.no_judge,
            backend=args.backend,
            on_adapter=on_adapter,
            on_inputs=_warnings_of(with_labels=False),
        )
    inputs = checked.inputs
    golden, run = inputs.golden, inputs.run
    _say(
        f"questions: {len(golden.questions)} "
        f"({', '.join(f'{n} {t}' for t, n in checked.per_type.items())})"
    )
    if checked.unlabelled:
        _say(f"           relevant chunks not labelled for {len(checked.unlabelled)} (judged only)")
    _say(f"corpus:    {len(golden.corpus)} chunks in {checked.documents} documents")
    _say(f"run:       {len(run.records)} answers from {inputs.run_source}")
    _say(f"answers:   {checked.answers.describe()}", one_line=True)
    labels = inputs.labels
    if config.data.labels is not None:
        _say(f"labels:    {len(labels.current)} from {checked.labellers} labeller(s)")
        for line in labels.retired_lines():
            _say(f"           {line}", one_line=True)
    preflight = checked.judge
    if preflight is None:
        _say("judge:     not checked (--no-judge)")
    else:
        _say(f"judge:     {preflight.judge}")
        _say(f"           ({preflight.reason})", one_line=True)
        _say(
            f"cache:     {preflight.cached} of {preflight.total} answers judged already "
            f"(from the cache); {preflight.to_judge} to judge"
        )
        for count in preflight.further:  # chunk grades, correctness: when they are on
            _say(f"           {count.line()}", one_line=True)
    _say("the gate can call (docs/gate.md):")
    for seen in checked.detectable:
        _say(f"  {seen.describe()}", one_line=True)
    if args.repeat is not None:
        with adapter_progress() as on_adapter:
            repeated = repeat(config, golden, args.repeat, on_adapter=on_adapter)
        _warn(repeated.warnings())
        for line in repeated.repeated.lines():
            _say(line, one_line=True)
        if repeated.problems:
            raise InputError(repeated.problems)
    _say("ok")
    return 0


def cmd_retrieval(args: argparse.Namespace) -> int:
    from judge.console import adapter_progress
    from judge.pipeline.retrieval import retrieval
    from judge.report.text_tables import render_text

    config = _config(args)
    with adapter_progress() as on_adapter:
        result = retrieval(
            config,
            args.run,
            fresh_answers=args.fresh_answers,
            trec_run=args.trec_run or None,
            trec_qrels=Path(args.trec_qrels) if args.trec_qrels else None,
            out=Path(args.json) if args.json else None,
            on_adapter=on_adapter,
            on_inputs=_warnings_of(with_labels=False),
        )
    measured = result.measured
    _say(f"retrieval of {measured.run_source} (context_k = {config.retrieval.context_k})")
    _say(render_text(measured.retrieval))
    _say(f"wrote {result.out}")
    return 0


def cmd_trec_export(args: argparse.Namespace) -> int:
    from judge.console import adapter_progress
    from judge.pipeline.retrieval import export_trec

    config = _config(args)
    with adapter_progress() as on_adapter:
        exported = export_trec(
            config,
            args.run,
            fresh_answers=args.fresh_answers,
            qrels=Path(args.qrels) if args.qrels else None,
            trec_out=Path(args.trec_out) if args.trec_out else None,
            on_adapter=on_adapter,
            on_inputs=_warnings_of(with_labels=False),
        )
    qrels, trec_out = exported.qrels, exported.run
    _say(f"wrote {exported.qrels_lines} qrels lines to {qrels}")
    _say(f"wrote {exported.run_lines} run lines to {trec_out}")
    _say(f"score them with: trec_eval -m recall.5 -m ndcg_cut.5 {qrels} {trec_out}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    out: list[str] = []  # the nightly prints its verdict first, so its output waits for the end
    try:
        return _judge_and_report(args, out)
    except (HarnessError, OSError, sqlite3.OperationalError, KeyboardInterrupt) as exc:
        if args.nightly:  # the first line of the nightly's output is its verdict, always
            _say(f"nightly: FAILED (exit {_exit_code(exc)}): {_first_problem(exc)}", one_line=True)
        if out:
            _say("\n".join(out))  # what was said about the judge before it stopped
        raise


def _exit_code(exc: BaseException) -> int:
    """The exit code ``main`` gives this exception."""
    if isinstance(exc, HarnessError):
        return exc.exit_code
    return signals.exit_code() if isinstance(exc, KeyboardInterrupt) else EXIT_BAD_INPUT


def _first_problem(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    problems = exc.problems if isinstance(exc, InputError) else str(exc).splitlines() or [""]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}"


class _Counts(Protocol):
    """What ``_announce_cached`` reads of a judging progress event
    (``judge.judging.grading.JudgeProgress``, which the CLI does not import)."""

    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def cached(self) -> int: ...


_Event = TypeVar("_Event", bound=_Counts)


def _announce_cached(
    forward: Callable[[_Event], None], say: Callable[[str], None]
) -> Callable[[_Event], None]:
    """``forward`` (the progress bar), after one line that says how many items the cache
    already holds ("2 of 10 already in the cache; ..."), said before anything is judged.

    The judging looks every item up in the cache first and reports each hit as one more done
    (``done`` goes up by one per event), then reports the same counts once more, when the
    lookup is over and before any request is sent (``done`` 0 when nothing was cached). That
    event, the first that does not advance ``done``, carries the count. The hits before it are
    held back, not drawn: they all come at once, and the bar then starts from the line.
    """
    from judge.report.summary import cached_line

    announced = False
    previous: int | None = None  # done of the previous (held back) event

    def on_event(event: _Event) -> None:
        nonlocal announced, previous
        if not announced:
            if event.done != 0 and event.done != previous:
                previous = event.done  # a cache hit, reported as it was looked up
                return
            say(cached_line(event.cached, event.total))
            announced = True
        forward(event)

    return on_event


def _judge_and_report(args: argparse.Namespace, out: list[str]) -> int:
    from judge.console import adapter_progress, judge_progress
    from judge.pipeline import Hooks, JudgeChoice, evaluate
    from judge.pipeline.run import ready_outputs, write_outputs
    from judge.report.ci import junit_xml, summary_json
    from judge.report.summary import console_summary

    nightly: bool = args.nightly
    config = _config(args)
    changes = {
        key: value
        for key, value in (("prompt", args.prompt), ("concurrency", args.concurrency))
        if value is not None
    }
    if changes:
        config = config.with_overrides(judge=changes)
    emit: Callable[[str], None] = out.append if nightly else _say
    # --bars, or the nightly of a configuration with a [bars] table; refused before anything
    # is judged when there are no bars to check.
    with_bars = args.bars or (nightly and bool(config.bars))
    if with_bars and not config.bars:
        raise ConfigError(
            f"{config.source or args.config}: no [bars] table; write one with 'judge bars "
            "suggest --write', or leave out --bars"
        )
    junit = Path(args.junit) if args.junit else None
    summary_path = Path(args.json) if args.json else None
    ready_outputs([junit, summary_path])  # a wrong path fails now, not after the judging

    def chosen(choice: JudgeChoice) -> None:
        for line in choice.lines():  # the judge, its estimate, then chunk grades, correctness
            emit(line)

    with adapter_progress() as on_adapter, judge_progress() as on_judging:
        result = evaluate(
            config,
            backend=args.backend,
            run_path=args.run,
            fresh_answers=args.fresh_answers,
            rejudge_failed=args.rejudge_failed,
            hooks=Hooks(
                on_adapter,
                lambda inputs: _warn(inputs.warnings()),
                chosen,
                _announce_cached(on_judging, emit),
            ),
        )
    for line in console_summary(result.report, config, result.folder.path):
        emit(line)
    report = result.report
    gate = result.gate
    code = gate.exit_code(args.fail_on_regression, args.require_baseline)
    verdict = gate.verdict
    if with_bars:
        from judge.pipeline.bars import check_run_bars

        bars = check_run_bars(config, report)
        report = bars.report
        met = len(bars.results) - len(bars.crossed)
        emit(f"\nbars: {met} of {len(bars.results)} met")
        for bar in bars.crossed:
            emit(bar.line())
        if bars.crossed:
            code = code or EXIT_REGRESSION
            more = f" (and {len(bars.crossed) - 1} more)" if len(bars.crossed) > 1 else ""
            verdict = f"FAILED: {bars.crossed[0].line()}{more}; {verdict}"
    if nightly:
        _say(f"nightly: {verdict}")
        _say("\n".join(out))
    else:
        _say(f"\ngate: {verdict}")
    files: dict[Path, str] = {}
    if junit is not None:
        files[junit] = junit_xml(report, args.fail_on_regression, args.require_baseline)
    if summary_path is not None:
        summary = summary_json(report, code, str(result.folder.path))
        files[summary_path] = json.dumps(summary, ensure_ascii=False, indent=2) + "\n"
    write_outputs(files)
    return code


def cmd_bars(args: argparse.Namespace) -> int:
    from judge.pipeline.bars import suggest, write_bars

    config = _config(args)
    suggestion = suggest(config, args.folder, args.metric, args.margin)
    if not args.write:
        _say(suggestion.toml.rstrip("\n"))
        return 0
    path = write_bars(config.source or Path(args.config), suggestion.toml, replace=args.replace)
    _say(
        f"wrote {len(suggestion.bars)} bars from {suggestion.folder} into {path}; "
        "'judge run --bars' checks them"
    )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from judge.console import adapter_progress, judge_progress
    from judge.pipeline import JudgeChoice, SweepHooks, SweepStep, sweep
    from judge.report.sweep import decision_lines

    config = _config(args)
    if args.judge_top is not None and config.sweep is not None:
        config = config.with_overrides(sweep={"judge_top": args.judge_top})
    bars = ExitStack()
    current: dict[str, Callable[..., None]] = {}

    def step(event: SweepStep) -> None:
        # A fresh bar per setting: each one is its own run of the adapter or the judge.
        bars.close()
        current["adapter"] = bars.enter_context(adapter_progress())
        current["judge"] = bars.enter_context(judge_progress())
        what = {"answers": "answers", "holdout": "holdout answers", "judge": "judging"}
        _say(f"{what[event.stage]} {event.position + 1}/{event.total}: {event.label}", err=True)

    def chosen(choice: JudgeChoice) -> None:
        _say(f"judge: {choice.judge} ({choice.reason})", err=True)

    hooks = SweepHooks(
        on_step=step,
        on_adapter=lambda e: current["adapter"](e),
        on_judge_chosen=chosen,
        on_judging=lambda e: current["judge"](e),
    )
    with bars:
        outcome = sweep(config, judge=not args.no_judge, backend=args.backend, hooks=hooks)
    for line in decision_lines(outcome):
        _say(line)
    _say(f"report: {outcome.folder / 'sweep.md'}")
    return 0


def cmd_stability(args: argparse.Namespace) -> int:
    from judge.console import judge_progress
    from judge.pipeline import JudgeChoice, judge_stability
    from judge.report.stability import stability_lines

    def chosen(choice: JudgeChoice) -> None:
        _say(f"judge: {choice.judge} ({choice.reason})", err=True)

    with judge_progress() as on_judging:
        report, path = judge_stability(
            _config(args),
            sample=args.sample,
            seed=args.seed,
            backend=args.backend,
            run_path=args.run,
            on_judge_chosen=chosen,
            on_judging=on_judging,
            on_inputs=_warnings_of(with_labels=False),
        )
    for line in stability_lines(report):
        _say(line)
    _say(f"report: {path}")
    return 0


def cmd_baseline(args: argparse.Namespace) -> int:
    from judge.pipeline.baseline import pin, ratchet

    config = _config(args)
    if args.baseline_command == "pin":
        pinned = pin(config, args.folder, replace=args.replace)
        _say(f"pinned {pinned.path} from {pinned.folder} ({pinned.questions} questions)")
        return 0
    ratcheted = ratchet(config, args.folder)
    _say(
        f"ratcheted {ratcheted.path} with {ratcheted.folder}: {len(ratcheted.raised)} per-type "
        "metric(s) raised where the run is shown better question by question, none lowered"
    )
    for c in ratcheted.raised:
        _say(f"  {c.section} {c.describe()}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import os

    from judge.pipeline.folders import folder_record
    from judge.report.show import show_item

    config = _config(args)
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    # show_item made the data in it safe before colouring it: printed as it is.
    print(show_item(folder_record(config, args.folder), args.question_id, color=color))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from judge.pipeline.folders import diff_folders
    from judge.report.show import diff_lines

    _say("\n".join(diff_lines(diff_folders(_config(args), args.a, args.b))))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from judge.pipeline import rerender

    folder = rerender(
        _config(args), args.folder, warn=lambda line: _warn([line]), rederive=args.rederive
    )
    _say(f"re-rendered {folder.path} (nothing judged)")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import audit
    from judge.report.audit_text import render_audit

    audited = audit(
        _config(args),
        args.folder,
        min_kappa=args.min_kappa,
        min_agreement=args.min_agreement,
        warn=lambda line: _warn([line]),
    )
    _say(
        render_audit(
            audited.result, audited.judge, limit=args.limit, full_list_path=audited.disagreements
        )
    )
    if audited.failures:
        _say("\naudit gate: FAILED: " + "; ".join(audited.failures))
        return EXIT_REGRESSION
    if args.min_kappa is not None or args.min_agreement is not None:
        _say("\naudit gate: passed")
    return 0


def cmd_audit_sample(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import sample

    sampled = sample(
        _config(args),
        args.folder,
        args.n,
        Path(args.out),
        oversample_uncertain=args.oversample_uncertain,
        seed=args.seed,
        warn=lambda line: _warn([line]),
    )
    out = sampled.sheet
    _say(
        f"wrote {out}: {sampled.items} item(s) from {sampled.folder} "
        f"({', '.join(f'{n} {t}' for t, n in sampled.per_type.items())}); no judge scores in it"
    )
    if sampled.items < args.n:
        _say(f"only {sampled.items} unlabelled item(s) were left to sample")
    _say(f"fill faithfulness, relevance (0-2) and labeller, then: judge audit import {out}")
    return 0


def cmd_audit_import(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import import_labels

    # A filled CSV sheet or review.html's marks file, told apart by content.
    imported = import_labels(
        _config(args), Path(args.file), labeller=args.labeller, replace=args.replace
    )
    path, result = imported.labels, imported.result
    if result.retired:
        _warn(
            [
                f"{path}: {result.retired} label(s) of questions no longer in the golden set "
                "were kept as they are ('judge check' lists them)"
            ]
        )
    blank = f"; {result.blank} row(s) left blank were skipped" if result.blank else ""
    _say(
        f"{path}: {result.added} added, {result.replaced} replaced, {result.unchanged} already "
        f"there{blank}"
    )
    return 0


def cmd_audit_label(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import label

    label(_config(args), args.folder, args.labeller)
    return 0


def cmd_cache_stats(args: argparse.Namespace) -> int:
    from judge.pipeline.cache import cache_stats

    stats = cache_stats(_config(args))
    _say(f"cache: {stats.path} · {len(stats.entries)} judge configuration(s)")
    for entry in stats.entries:
        _say(f"\n{entry.fingerprint}  {entry.replies} replies  last used {entry.last_used_at}")
        _say(f"  {entry.label}")
        for key, value in entry.parts.items():
            if key != "schema":
                _say(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    return 0


def cmd_cache_prune(args: argparse.Namespace) -> int:
    from judge.pipeline.cache import prune_cache

    pruned = prune_cache(_config(args), args.days, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    _say(
        f"{verb} {pruned.fingerprints} judge configuration(s) unused for {args.days:g} days "
        f"({pruned.replies} replies)"
    )
    return 0


# --- the parser ------------------------------------------------------------------------------

Handler = Callable[[argparse.Namespace], int]


class Number:
    """The type of every numeric option, with its range: the one rule that checks options
    before anything is opened. argparse refuses a value out of range while it parses (exit 2,
    one line naming the option), so ``judge stability --sample 0`` is a bad option even when
    no judge answers, and no command loads a config, asks an adapter or opens a cache with a
    value it would refuse later. ``tests/test_cli.py`` walks the parser: every option with a
    type of int or float has one of these."""

    def __init__(
        self,
        kind: type[int] | type[float],
        low: float | None = None,
        high: float | None = None,
        *,
        above: bool = False,
    ) -> None:
        self.kind, self.low, self.high, self.above = kind, low, high, above
        self.__name__ = kind.__name__  # argparse names the type in its "invalid ..." message

    def describe(self) -> str:
        """The range in words ("an integer of at least 1", "a number from 0 to 1")."""
        noun = "an integer" if self.kind is int else "a number"
        low, high = (f"{v:g}" if v is not None else None for v in (self.low, self.high))
        if low is not None and high is not None:
            return f"{noun} from {low} to {high}"
        if low is not None:
            return f"{noun} {'above' if self.above else 'of at least'} {low}"
        if high is not None:
            return f"{noun} of at most {high}"
        return noun

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {text!r}") from None
        finite = value == value and value not in (float("inf"), float("-inf"))
        low_ok = self.low is None or (value > self.low if self.above else value >= self.low)
        high_ok = self.high is None or value <= self.high
        if not (finite and low_ok and high_ok):
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {text}")
        return value


# --config works before and after the command: every sub-parser accepts it too, with a default
# that does not overwrite the one given before the command.
_CONFIG = argparse.ArgumentParser(add_help=False)
_CONFIG.add_argument(
    "--config", default=argparse.SUPPRESS, help=f"configuration file (default: {DEFAULT_CONFIG})"
)
_ANSWERS = argparse.ArgumentParser(add_help=False)
_ANSWERS.add_argument("--run", type=Path, help="a run file (overrides data.run / data.adapter)")
_ANSWERS.add_argument(
    "--fresh-answers",
    action="store_true",
    help="ask the adapter again instead of reusing its saved answers",
)
_CI_OUTPUT = argparse.ArgumentParser(add_help=False)
_CI_OUTPUT.add_argument("--junit", metavar="FILE", help="write the gate as JUnit XML")
_CI_OUTPUT.add_argument("--json", metavar="FILE", help="write a JSON summary of the run")
_FOLDER_HELP = "a report folder: a path, a name under reports/, or latest (the default)"


class _Commands:
    """A group of sub-commands, each taking --config and the given shared options."""

    def __init__(self, parser: argparse.ArgumentParser, dest: str, required: bool = True) -> None:
        self.group = parser.add_subparsers(dest=dest, required=required, metavar="COMMAND")

    def add(
        self, name: str, handler: Handler | None, text: str, *parents: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        sub = self.group.add_parser(name, help=text, description=text, parents=[_CONFIG, *parents])
        if handler is not None:
            sub.set_defaults(handler=handler)
        return sub


class _Version(argparse.Action):
    """--version, looked up only when asked (package metadata costs a few tens of ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from judge import __version__

        print(f"judge {__version__}")
        parser.exit()


def cmd_batch_export(args: argparse.Namespace) -> int:
    from judge.pipeline.batch import export_batch

    config = _config(args)
    result = export_batch(
        config,
        Path(args.out) if args.out else None,
        max_file_mb=args.max_file_mb,
        run_path=args.run,
    )
    _warn(result.warnings)
    if result.estimate is not None:
        _say(result.estimate.line())
    if result.manifest is None:
        _say(
            f"nothing to export: all {result.total} item(s) are in the cache for judge "
            f"configuration {result.fingerprint} (judge.openai: {config.judge.openai.model})"
        )
        return 0
    size = sum(f.bytes for f in result.files) / 1024 / 1024
    _say(
        f"wrote {result.pending} pending item(s) in {len(result.files)} file(s) ({size:.1f} MB) "
        f"to {result.out_dir}; {result.cached} of {result.total} already in the cache; "
        f"manifest {result.manifest}"
    )
    _say(
        f"run them with a batch engine serving '{config.judge.openai.model}' (docs/batch.md), "
        f"then: judge batch import {result.out_dir}/results-*.jsonl"
    )
    return 0


def cmd_batch_import(args: argparse.Namespace) -> int:
    from judge.pipeline.batch import import_batch

    config = _config(args)
    result = import_batch(
        config, [Path(f) for f in args.files], Path(args.manifest) if args.manifest else None
    )
    for problem in result.problems:
        _say(f"error: {problem}", err=True, one_line=True)
    _say(
        f"imported {result.imported} replies into {config.judge.cache_path} from "
        f"{result.lines} lines, {result.already} already there; {len(result.not_judged)} not "
        f"judged by the engine; {len(result.problems)} problems; {result.still_pending} items "
        f"of the export still without a reply"
    )
    if result.still_pending == 0 and not result.problems:
        _say("every item is in the cache: 'judge run --backend openai' judges nothing again")
    return EXIT_BAD_INPUT if result.problems else 0


def cmd_import(args: argparse.Namespace) -> int:
    from judge.pipeline.imports import import_foreign

    # A configuration gives the question types, the out-of-scope type and the refusal phrases;
    # without one (no judge.toml here yet, the usual case before an import) the defaults do.
    explicit = args.config != DEFAULT_CONFIG
    config = _config(args) if explicit or Path(args.config).is_file() else None
    result = import_foreign(
        args.tool,
        Path(args.file),
        Path(args.out),
        config=config,
        default_type=args.type,
        type_column=args.type_column,
        id_column=args.id_column,
        answerable_column=args.answerable_column,
        replace=args.replace,
    )
    _warn(result.warnings)
    total = sum(result.per_type.values())
    counts = ", ".join(f"{n} {qtype}" for qtype, n in result.per_type.items() if n)
    _say(
        f"imported {total} question(s) ({counts}), {result.chunks} chunk(s) and "
        f"{total - result.failed} answer(s) from {args.file} into {result.questions.parent}"
    )
    if result.failed:
        _say(f"{result.failed} question(s) failed in the source: reported, not scored")
    if result.unlabelled:
        _say(
            f"{result.unlabelled} answerable question(s) without relevant chunks: judged, "
            "their retrieval not scored (relevant_chunks: null)"
        )
    where = config.source if config is not None and config.source is not None else "judge.toml"
    _say(f"\nuse it: put this [data] table in {where} (replacing its own), then 'judge check':\n")
    _say("\n".join(result.data_lines))
    return 0


def _add_input_commands(commands: _Commands) -> None:
    check = commands.add(
        "check", cmd_check, "validate the golden set, corpus, run and labels", _ANSWERS
    )
    check.add_argument(
        "--repeat",
        type=Number(int, 2, 100),
        metavar="N",
        help="also ask data.adapter N times afresh (nothing saved) and report the share of "
        "questions whose retrieval order or answer changed, per type",
    )
    _backend_option(check)
    check.add_argument(
        "--no-judge",
        action="store_true",
        help="skip the judge's preflight (its server, model and digest, and what the cache "
        "holds), for offline use",
    )
    retrieval = commands.add("retrieval", cmd_retrieval, "per-type retrieval metrics", _ANSWERS)
    retrieval.add_argument("--trec-run", help="score a TREC run file instead of a run")
    retrieval.add_argument(
        "--trec-qrels", help="with --trec-run: take the relevant chunks from this qrels file"
    )
    retrieval.add_argument(
        "--json", help="where to write the table (default reports/retrieval.json)"
    )
    trec = _Commands(
        commands.add("trec", None, "export qrels and run files for trec_eval"), "trec_command"
    )
    export = trec.add(
        "export",
        cmd_trec_export,
        "write qrels and a TREC run (default: reports/trec/qrels.txt and run.txt)",
        _ANSWERS,
    )
    export.add_argument("--qrels", help="qrels output path (default reports/trec/qrels.txt)")
    export.add_argument("--trec-out", help="TREC run output path (default reports/trec/run.txt)")


#: ``judge.config.BackendName``'s values, spelled out: importing the config (pydantic) would
#: triple the time ``judge --help`` takes (tests/test_cli.py checks the two agree).
BACKENDS = ("auto", "ollama", "embedded", "openai", "lexical")


def _backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the judge (overrides judge.backend)",
    )


def _add_run_commands(commands: _Commands) -> None:
    run = commands.add(
        "run", cmd_run, "retrieval metrics, then judge every answer", _ANSWERS, _CI_OUTPUT
    )
    _backend_option(run)
    run.add_argument("--prompt", type=Path, help="a prompt file (overrides judge.prompt)")
    run.add_argument(
        "--concurrency", type=Number(int, 1, 256), help="items judged at once (judge.concurrency)"
    )
    run.add_argument(
        "--rejudge-failed",
        action="store_true",
        help="judge again the answers whose cached reply gave no verdict (e.g. an empty reply)",
    )
    run.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a per-type metric regressed, question by question (docs/gate.md): a "
        "collapse, a fall beyond the margin shown tonight by the exact paired test, or a fall "
        "that stays over the season; or when a question got no answer or no verdict",
    )
    run.add_argument(
        "--require-baseline",
        action="store_true",
        help="exit 1 when there is nothing compatible to compare with",
    )
    run.add_argument(
        "--bars",
        action="store_true",
        help="exit 1 when a per-type bar of [bars] is crossed (one line per bar crossed)",
    )
    run.set_defaults(nightly=False)
    nightly = commands.add(
        "nightly",
        cmd_run,
        "run with the gate: exit 1 on a regression (a collapse, a fall beyond the margin shown "
        "tonight by the exact paired test, or a fall that stays over the season; docs/gate.md), "
        "a question "
        "without an answer or a verdict, a missing baseline, or a bar of [bars] crossed; the "
        "verdict comes first (with "
        "an adapter, always asks it: the nightly measures tonight's system)",
        _CI_OUTPUT,
    )
    _backend_option(nightly)
    nightly.add_argument("--run", type=Path, help="a run file (overrides data.run / data.adapter)")
    nightly.set_defaults(
        nightly=True,
        fresh_answers=True,
        rejudge_failed=False,
        backend=None,
        prompt=None,
        concurrency=None,
        fail_on_regression=True,
        require_baseline=True,
        bars=False,
    )
    bars = _Commands(
        commands.add("bars", None, "per-type bars: the floors judge run --bars checks"),
        "bars_command",
    )
    suggest = bars.add(
        "suggest",
        cmd_bars,
        "today's per-type values of a run minus a margin, as a [bars] table to paste (or "
        "--write into the configuration)",
    )
    suggest.add_argument("folder", nargs="?", help=_FOLDER_HELP)
    suggest.add_argument(
        "--margin",
        type=Number(float, 0, 1),
        help="below today's value on 0-1 shares (0.05); the 0-2 scores get twice it (0.10)",
    )
    suggest.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help="a metric to set bars on (repeatable; default faithfulness, relevance and "
        "recall@context_k)",
    )
    suggest.add_argument(
        "--write",
        action="store_true",
        help="write the table into the configuration file (every other byte kept)",
    )
    suggest.add_argument(
        "--replace", action="store_true", help="with --write: replace an existing [bars] table"
    )


def _add_sweep_command(commands: _Commands) -> None:
    sweep = commands.add(
        "sweep",
        cmd_sweep,
        "try every setting of [sweep] on the tuning questions and recommend one only when the "
        "guards allow (docs/sweep.md)",
    )
    _backend_option(sweep)
    sweep.add_argument(
        "--judge-top",
        type=Number(int, 0, 20),
        metavar="N",
        help="besides the default, judge the N best settings (overrides sweep.judge_top)",
    )
    sweep.add_argument(
        "--no-judge", action="store_true", help="retrieval only: judge no setting's answers"
    )


def _add_stability_command(commands: _Commands) -> None:
    stability = commands.add(
        "stability",
        cmd_stability,
        "re-judge a sample with the chunks reordered and a prompt injection appended to the "
        "answer: how often the judge's verdicts change (docs/judge.md)",
    )
    stability.add_argument(
        "--sample", type=Number(int, 1), default=20, help="answers to re-judge (20)"
    )
    stability.add_argument(
        "--seed", type=Number(int), default=0, help="which sample and shuffle (0)"
    )
    _backend_option(stability)
    stability.add_argument("--run", type=Path, help="a run file (overrides data.run)")


def _add_folder_commands(commands: _Commands) -> None:
    show = commands.add("show", cmd_show, "one verdict with its chunks and the quote marked")
    show.add_argument("question_id", help="a golden question id")
    show.add_argument("--folder", help=_FOLDER_HELP)
    report = commands.add("report", cmd_report, "render a report folder's files again")
    report.add_argument("folder", nargs="?", help=_FOLDER_HELP)
    report.add_argument(
        "--rederive",
        action="store_true",
        help="rebuild the record from the folder's run and the cache: each verdict re-derived "
        "from its cached reply (a newer parser or evidence verifier applies), the labels and "
        "comparisons read again (default: render the folder's record as it was written)",
    )
    diff = commands.add("diff", cmd_diff, "compare two report folders")
    diff.add_argument("a", help="the earlier report folder")
    diff.add_argument("b", help="the later report folder")
    baseline = _Commands(
        commands.add("baseline", None, "the pinned baseline the gate holds runs to"),
        "baseline_command",
    )
    pin = baseline.add("pin", cmd_baseline, "pin a run's numbers as the baseline")
    pin.add_argument("folder", nargs="?", help=_FOLDER_HELP)
    pin.add_argument("--replace", action="store_true", help="overwrite an existing baseline")
    ratchet = baseline.add(
        "ratchet", cmd_baseline, "raise the baseline where a run is shown better (never lower it)"
    )
    ratchet.add_argument("folder", nargs="?", help=_FOLDER_HELP)


def _add_audit_commands(commands: _Commands) -> None:
    audit = commands.add("audit", cmd_audit, "agreement of the judge with human labels")
    audit.add_argument("--folder", help=_FOLDER_HELP)
    audit.add_argument(
        "--min-kappa", type=Number(float), help="exit 1 if either axis' kappa is lower"
    )
    audit.add_argument(
        "--min-agreement",
        type=Number(float),
        help="exit 1 if either axis' exact agreement is lower (0-1)",
    )
    audit.add_argument(
        "--limit",
        type=Number(int, 0),
        default=20,
        help="disagreements to print, largest score gap first (0: all; every one goes to "
        "disagreements.csv in the report folder)",
    )
    steps = _Commands(audit, "audit_command", required=False)
    sample = steps.add("sample", cmd_audit_sample, "write a blind labelling sheet (CSV)")
    sample.add_argument("--n", type=Number(int, 1), required=True, help="how many items")
    sample.add_argument(
        "--out", default="labelling-sheet.csv", help="the sheet to write (labelling-sheet.csv)"
    )
    sample.add_argument(
        "--oversample-uncertain",
        type=Number(float, 0, 1),
        default=0.0,
        metavar="SHARE",
        help="share (0-1) of each type's quota taken first from items the judge may be unsure about",
    )
    sample.add_argument("--seed", type=Number(int), default=0, help="random seed of the sample (0)")
    sample.add_argument("--folder", help=_FOLDER_HELP)
    imp = steps.add(
        "import",
        cmd_audit_import,
        "import a filled sheet (CSV) or review.html's marks file (JSON) into the labels file",
    )
    imp.add_argument("file", help="the filled sheet (CSV) or the marks file review.html exports")
    imp.add_argument(
        "--labeller",
        help="for rows whose labeller column is empty, or a marks file without a reviewer name",
    )
    imp.add_argument("--replace", action="store_true", help="overwrite conflicting labels")
    label = steps.add("label", cmd_audit_label, "label in the terminal (saves after each item)")
    label.add_argument("--labeller", required=True, help="your name, stored with each label")
    label.add_argument("--folder", help=_FOLDER_HELP)


def _add_cache_commands(commands: _Commands) -> None:
    cache = _Commands(commands.add("cache", None, "the verdict cache"), "cache_command")
    cache.add("stats", cmd_cache_stats, "judge configurations and their replies")
    prune = cache.add("prune", cmd_cache_prune, "drop configurations not used lately")
    prune.add_argument(
        "--days", type=Number(float, 0), required=True, help="unused for this many days"
    )
    prune.add_argument(
        "--dry-run", action="store_true", help="say what would be removed, remove nothing"
    )


def _add_batch_commands(commands: _Commands) -> None:
    batch = _Commands(
        commands.add("batch", None, "judge through a batch engine (vLLM, Ray Data, batch APIs)"),
        "batch_command",
    )
    export = batch.add(
        "export",
        cmd_batch_export,
        "write the items not yet in the cache for judge.openai as OpenAI Batch JSONL",
    )
    export.add_argument("--run", type=Path, help="a run file (overrides data.run / data.adapter)")
    export.add_argument(
        "--out", help="folder to write to (default reports/batch/<time>-<fingerprint>)"
    )
    export.add_argument(
        "--max-file-mb",
        type=Number(float, 0, above=True),
        default=DEFAULT_BATCH_FILE_MB,
        help=f"largest request file, in MB (default {DEFAULT_BATCH_FILE_MB:g}; "
        "at most 50,000 requests a file)",
    )
    imp = batch.add("import", cmd_batch_import, "read a batch engine's output files into the cache")
    imp.add_argument("files", nargs="+", metavar="FILE", help="the engine's output files (JSONL)")
    imp.add_argument(
        "--manifest", help="the export's manifest.json (default: the one beside the first FILE)"
    )


def _add_import_commands(commands: _Commands) -> None:
    imports = _Commands(
        commands.add(
            "import",
            None,
            "a golden set, corpus and run from another tool's data (docs/imports.md)",
        ),
        "import_command",
    )
    sources = {
        "ragas": "a Ragas evaluation dataset (JSONL, CSV, JSON array, Parquet)",
        "deepeval": "DeepEval test cases (save_as JSON, JSONL or CSV)",
        "otel": "OpenTelemetry traces with OpenInference attributes (OTLP JSON)",
    }
    for tool, what in sources.items():
        sub = imports.add(tool, cmd_import, f"write questions, corpus and run from {what}")
        sub.set_defaults(tool=tool)
        sub.add_argument("file", metavar="FILE", help=f"{what}")
        sub.add_argument(
            "--out",
            default="imported",
            help="folder for questions.jsonl, corpus.jsonl and run.jsonl (default: imported)",
        )
        sub.add_argument(
            "--replace", action="store_true", help="overwrite those files if they exist"
        )
        sub.add_argument(
            "--type",
            metavar="TYPE",
            help="the type of a question that no column types and that the source does not mark "
            "out of scope (default: factual)",
        )
        where = "attribute of the root span" if tool == "otel" else "column"
        sub.add_argument(
            "--type-column", metavar="NAME", help=f"the {where} holding each question's type"
        )
        sub.add_argument(
            "--id-column",
            metavar="NAME",
            help=f"the {where} holding each question's id (default: from its text)",
        )
        sub.add_argument(
            "--answerable-column",
            metavar="NAME",
            help=f"the {where} saying (true/false) whether the question is answerable",
        )


def cmd_golden_accept(args: argparse.Namespace) -> int:
    from judge.pipeline.golden import accept_labels

    accepted = accept_labels(_config(args), Path(args.file), dry_run=args.dry_run)
    edit, shown = accepted.edit, 10
    listed = ", ".join(f"{qid} + {chunk}" for qid, chunk in edit.added[:shown])
    more = f", … {len(edit.added) - shown} more" if len(edit.added) > shown else ""
    n = len(edit.added)
    labels = f"{n} label{'' if n == 1 else 's'}"
    if not edit.added:
        head = f"no labels to add to {accepted.questions}"
    elif args.dry_run:
        head = f"would add {labels} to {accepted.questions} ({listed}{more})"
    else:
        head = f"added {labels} to {accepted.questions} ({listed}{more})"
    parts = [head, f"{edit.already} already listed", f"{edit.marked_no} marked no"]
    if edit.undecided:
        parts.append(f"{edit.undecided} not decided (confirmed left empty), skipped")
    _say("; ".join(parts))
    if edit.added and args.dry_run:
        lines = ", ".join(str(line) for line in edit.lines)
        _say(f"nothing written (--dry-run); line(s) {lines} would change")
    elif accepted.written:
        _say(
            "the golden set changed: the next run is not compared with runs on the old one "
            "(pin a new baseline after it), and an adapter is asked again"
        )
    return 0


def _add_golden_commands(commands: _Commands) -> None:
    golden = _Commands(
        commands.add("golden", None, "edit the golden set (golden/README.md)"), "golden_command"
    )
    accept = golden.add(
        "accept",
        cmd_golden_accept,
        "add the chunks a reviewer confirmed in a report's missing-labels.csv to the questions",
    )
    accept.add_argument(
        "file",
        metavar="FILE",
        help="missing-labels.csv with its confirmed column filled (or .jsonl)",
    )
    accept.add_argument(
        "--dry-run", action="store_true", help="say what would be added, write nothing"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judge",
        description="Evaluate a RAG system: retrieval metrics and a Gemma judge.",
        epilog="exit codes: 0 ok, 1 regression, 2 bad input, 3 no judge, 130 interrupted "
        "(Ctrl-C), 143 stopped (SIGTERM)",
    )
    parser.add_argument("--version", action=_Version)
    parser.add_argument(
        "--config", default=DEFAULT_CONFIG, help=f"configuration file (default: {DEFAULT_CONFIG})"
    )
    commands = _Commands(parser, "command")
    _add_input_commands(commands)
    _add_run_commands(commands)
    _add_sweep_command(commands)
    _add_stability_command(commands)
    _add_folder_commands(commands)
    _add_audit_commands(commands)
    _add_cache_commands(commands)
    _add_batch_commands(commands)
    _add_import_commands(commands)
    _add_golden_commands(commands)
    return parser


class _WarningLines(logging.Handler):
    """The package's logged warnings (e.g. a torn last line of history.jsonl), as warning lines."""

    def emit(self, record: logging.LogRecord) -> None:
        _warn([record.getMessage()])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: user errors print one line each and exit non-zero; bugs keep tracebacks.
    SIGINT and SIGTERM stop a command cleanly (exit 130 and 143)."""
    # A command builds hundreds of thousands of small objects (one verdict, item and row per
    # question) that live until it ends: with Python's default thresholds (700, 10, 10) the
    # collector rescans them over and over, about a third of a 10,000-question run; with
    # (20,000, 20, 10) its older generations still took 0.5 s of a 3 s cached run, with
    # (20,000, 100, 100) 0.09 s (docs/benchmarks.md). The young generation is still collected
    # every 20,000 allocations, so short-lived cycles (an exception and its frames) go soon.
    # A command-line process, so the setting is ours to make; the Python API leaves it alone.
    gc.set_threshold(*GC_THRESHOLDS)
    log = logging.getLogger("judge")
    if not any(isinstance(h, _WarningLines) for h in log.handlers):
        log.addHandler(_WarningLines(logging.WARNING))
        log.propagate = False  # printed once, by us, not again by Python's last-resort handler
    with signals.handled():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except InputError as exc:
        for problem in exc.problems:
            _say(f"error: {problem}", err=True, one_line=True)
        if len(exc.problems) > 1:
            _say(f"{len(exc.problems)} problems; nothing was evaluated", err=True)
        return exc.exit_code
    except Interrupted as exc:
        _say(f"interrupted: {exc}", err=True)
        return exc.exit_code
    except HarnessError as exc:
        for line in str(exc).splitlines():
            _say(f"error: {line}", err=True, one_line=True)
        return exc.exit_code
    except KeyboardInterrupt:
        _say("interrupted", err=True)
        return signals.exit_code()
    except BrokenPipeError:  # `judge ... | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
    except sqlite3.OperationalError as exc:  # e.g. 'cache prune' vacuuming during a run
        _say(
            f"error: the verdict cache is busy ({exc}); wait for the other judge command",
            err=True,
        )
        return EXIT_BAD_INPUT
    except OSError as exc:  # disk full, permission denied: the environment, not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        _say(f"error: {where}{exc.strerror or exc}", err=True)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
