"""Command line: ``judge check | retrieval | trec | run | cache ...``. Holds no logic of its own."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from judge.config import Config, load_config
from judge.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_REGRESSION,
    ConfigError,
    HarnessError,
    InputError,
)
from judge.jsonl import write_atomic
from judge.pipeline import Inputs, evaluate_retrieval, load_inputs
from judge.render import render_text
from judge.trec import read_qrels, read_trec_run, with_qrels, write_qrels, write_trec_run


def _config(args: argparse.Namespace) -> Config:
    return load_config(Path(args.config))


def _inputs(args: argparse.Namespace, config: Config) -> Inputs:
    from judge.console import adapter_progress

    with adapter_progress() as on_progress:
        return load_inputs(config, getattr(args, "run", None), on_progress)


def _print_leaks(inputs: Inputs, config: Config) -> None:
    for leak in inputs.leaks:
        print(
            f"warning: {config.data.corpus}: document '{leak.doc}' quotes "
            f"{len(leak.question_ids)} golden questions verbatim ({', '.join(leak.question_ids)}); "
            "the test set may be leaking into the corpus",
            file=sys.stderr,
        )


def cmd_check(args: argparse.Namespace) -> int:
    config = _config(args)
    inputs = _inputs(args, config)
    golden, run = inputs.golden, inputs.run
    types = Counter(q.type for q in golden.questions)
    docs = {c.doc for c in golden.corpus.values()}
    print(
        f"questions: {len(golden.questions)} "
        f"({', '.join(f'{types[t]} {t}' for t in config.data.question_types)})"
    )
    print(f"corpus:    {len(golden.corpus)} chunks in {len(docs)} documents")
    print(f"run:       {len(run.records)} answers from {inputs.run_source}")
    if run.meta.failed:
        print(f"           adapter failed for {len(run.meta.failed)}: {', '.join(run.meta.failed)}")
    if config.data.labels is not None:
        from judge.golden import load_labels_if_any

        labels = load_labels_if_any(config.data.labels, golden.by_id())
        print(f"labels:    {len(labels)} from {len({lab.labeller for lab in labels})} labeller(s)")
    _print_leaks(inputs, config)
    print("ok")
    return 0


def cmd_retrieval(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.trec_run:
        from judge.golden import load_golden

        golden = load_golden(config.data)
        if args.trec_qrels:
            golden = with_qrels(golden, read_qrels(Path(args.trec_qrels)), Path(args.trec_qrels))
        run = read_trec_run(Path(args.trec_run), golden)
        source = args.trec_run
    else:
        inputs = _inputs(args, config)
        _print_leaks(inputs, config)
        golden, run, source = inputs.golden, inputs.run, inputs.run_source
    result = evaluate_retrieval(config, golden, run)
    print(f"retrieval of {source} (context_k = {config.retrieval.context_k})")
    print(render_text(result.table))
    out = Path(args.json) if args.json else config.reports.dir / "retrieval.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "run": source,
        "context_k": config.retrieval.context_k,
        "golden_hash": golden.questions_hash,
        "corpus_hash": golden.corpus_hash,
        "table": result.table.to_json(),
        "excluded": result.scores.excluded,
    }
    write_atomic(out, json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def cmd_trec_export(args: argparse.Namespace) -> int:
    config = _config(args)
    inputs = _inputs(args, config)
    if args.qrels:
        n = write_qrels(inputs.golden, Path(args.qrels))
        print(f"wrote {n} qrels lines to {args.qrels}")
    if args.trec_out:
        n = write_trec_run(inputs.run, Path(args.trec_out))
        print(f"wrote {n} run lines to {args.trec_out}")
    return 0


def _judge_overrides(args: argparse.Namespace, config: Config) -> Config:
    changes = {
        key: value
        for key, value in (
            ("backend", args.backend),
            ("prompt", args.prompt),
            ("concurrency", args.concurrency),
        )
        if value is not None
    }
    return config.with_overrides(judge=changes) if changes else config


def cmd_run(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from judge.backends import open_backend
    from judge.cache import VerdictCache
    from judge.console import judge_progress
    from judge.golden import load_labels_if_any
    from judge.lock import run_lock
    from judge.pipeline import evaluate_judge
    from judge.prompts import load_prompt
    from judge.report import (
        build_report,
        console_summary,
        gate,
        new_folder_name,
        write_report,
    )

    nightly = getattr(args, "nightly", False)
    fail_on_regression = args.fail_on_regression or nightly
    require_baseline = args.require_baseline or nightly
    started_at = datetime.now(UTC)
    config = _judge_overrides(args, _config(args))
    inputs = _inputs(args, config)
    _print_leaks(inputs, config)
    prompt = load_prompt(config.judge.prompt)  # a bad prompt fails before any model loads
    labels = load_labels_if_any(config.data.labels, inputs.golden.by_id(), retired_ok=True)
    retrieval = evaluate_retrieval(config, inputs.golden, inputs.run)
    out: list[str] = []  # the nightly prints its verdict first, so output waits for the end
    emit = out.append if nightly else print
    with run_lock(config.reports.dir):
        opened = open_backend(config.judge)
        emit(f"judge: {opened.backend.identity.describe()}")
        emit(f"       ({opened.reason})")
        emit(
            f"prompt: {prompt.path} · run: {inputs.run_source} · context_k {config.retrieval.context_k}"
        )
        cache = VerdictCache(config.judge.cache_path)
        try:
            with judge_progress() as on_progress:
                judged = evaluate_judge(config, inputs, retrieval, opened, cache, on_progress)
        finally:
            cache.close()
            opened.backend.close()
        outcome = judged.outcome
        if outcome.interrupted:
            if out:
                print("\n".join(out))
            again = (
                f"run with --run {inputs.run_source}"
                if inputs.run.meta.adapter
                else "run the same command again"
            )
            print(
                f"interrupted: {len(outcome.verdicts)} of {len(inputs.run.records)} answers judged "
                f"and cached; {again} to resume",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        folder_name = new_folder_name(config, outcome.fingerprint.value, started_at)
        report = build_report(config, inputs, retrieval, judged, labels, started_at, folder_name)
        folder = write_report(config, report, inputs.run)
    for line in console_summary(report, config, folder):
        emit(line)
    code, verdict = gate(report, fail_on_regression, require_baseline)
    if nightly:
        print(f"nightly: {verdict}")
        print("\n".join(out))
    else:
        print(f"\ngate: {verdict}")
    return code


def cmd_baseline(args: argparse.Namespace) -> int:
    from judge.history import pin_baseline, ratchet_baseline
    from judge.runs_index import history_entry, resolve_folder

    config = _config(args)
    folder = resolve_folder(config.reports.dir, args.folder)
    entry = history_entry(config.reports.dir, folder)
    path = config.reports.baseline
    if args.baseline_command == "pin":
        pin_baseline(path, entry, replace=args.replace)
        print(f"pinned {path} from {folder.name}")
        return 0
    _, raised = ratchet_baseline(path, entry)
    print(f"ratcheted {path} with {folder.name}: {len(raised)} metric(s) raised, none lowered")
    for c in raised:
        print(f"  {c.section} {c.describe()}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from judge.show import show_item

    config = _config(args)
    print(show_item(config.reports.dir, args.folder, args.question_id, color=_color()))
    return 0


def _color() -> bool:
    import os

    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def cmd_diff(args: argparse.Namespace) -> int:
    from judge.show import diff_runs

    config = _config(args)
    print(diff_runs(config.reports.dir, args.a, args.b, config.reports.regression_threshold))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from judge.rerender import rerender

    config = _config(args)
    folder = rerender(config, args.folder)
    print(f"re-rendered {folder} from its run and the cache (nothing judged)")
    return 0


def _labels_path(config: Config) -> Path:
    if config.data.labels is None:
        raise ConfigError("set data.labels in judge.toml (where human labels are kept)")
    return config.data.labels


def cmd_audit(args: argparse.Namespace) -> int:
    from judge.audit import gate as audit_gate
    from judge.audit import render_audit, run_audit
    from judge.golden import load_golden, load_labels_if_any
    from judge.runs_index import resolve_folder

    config = _config(args)
    golden = load_golden(config.data)
    labels = load_labels_if_any(_labels_path(config), golden.by_id())
    if not labels:
        raise ConfigError(
            f"no human labels in {config.data.labels} yet; start with 'judge audit sample --n 30'"
        )
    folder = resolve_folder(config.reports.dir, args.folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    judge_name = f"{manifest['judge']['backend']} · {manifest['judge']['model']}"
    result = run_audit(folder, labels)
    print(render_audit(result, judge_name))
    failures = audit_gate(result, args.min_kappa, args.min_agreement)
    if failures:
        print("\naudit gate: FAILED: " + "; ".join(failures))
        return EXIT_REGRESSION
    if args.min_kappa is not None or args.min_agreement is not None:
        print("\naudit gate: passed")
    return 0


def cmd_audit_sample(args: argparse.Namespace) -> int:
    from judge.audit import sample_items, write_sheet
    from judge.golden import load_golden, load_labels_if_any
    from judge.records import read_items, read_verdicts
    from judge.runs_index import resolve_folder

    config = _config(args)
    golden = load_golden(config.data)
    labels = load_labels_if_any(config.data.labels, golden.by_id())
    folder = resolve_folder(config.reports.dir, args.folder)
    items = read_items(folder)
    chosen = sample_items(
        items, read_verdicts(folder), labels, args.n, args.oversample_uncertain, args.seed
    )
    out = Path(args.out)
    write_sheet(out, chosen)
    per_type = Counter(item.type for item in chosen)
    print(
        f"wrote {out}: {len(chosen)} item(s) from {folder.name} "
        f"({', '.join(f'{n} {t}' for t, n in sorted(per_type.items()))}); no judge scores in it"
    )
    if len(chosen) < args.n:
        print(f"only {len(chosen)} unlabelled item(s) were left to sample")
    print(f"fill faithfulness, relevance (0-2) and labeller, then: judge audit import {out}")
    return 0


def cmd_audit_import(args: argparse.Namespace) -> int:
    from judge.audit import import_sheet
    from judge.golden import load_golden

    config = _config(args)
    golden = load_golden(config.data)
    path = _labels_path(config)
    result = import_sheet(Path(args.file), path, golden.by_id(), args.labeller, args.replace)
    print(
        f"{path}: {result.added} added, {result.replaced} replaced, {result.unchanged} already "
        f"there; {result.blank} row(s) left blank were skipped"
    )
    return 0


def cmd_audit_label(args: argparse.Namespace) -> int:
    from judge.audit import label_in_terminal
    from judge.golden import load_golden
    from judge.records import read_items
    from judge.runs_index import resolve_folder

    config = _config(args)
    golden = load_golden(config.data)
    folder = resolve_folder(config.reports.dir, args.folder)
    items = list(read_items(folder).values())
    label_in_terminal(items, _labels_path(config), golden.by_id(), args.labeller)
    return 0


def cmd_cache_stats(args: argparse.Namespace) -> int:
    from judge.cache import VerdictCache

    config = _config(args)
    cache = VerdictCache(config.judge.cache_path)
    try:
        stats = cache.stats()
    finally:
        cache.close()
    print(f"cache: {config.judge.cache_path} · {len(stats)} judge configuration(s)")
    for entry in stats:
        print(f"\n{entry.fingerprint}  {entry.replies} replies  last used {entry.last_used_at}")
        print(f"  {entry.label}")
        for key, value in entry.parts.items():
            if key != "schema":
                print(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    return 0


def cmd_cache_prune(args: argparse.Namespace) -> int:
    from judge.cache import VerdictCache

    config = _config(args)
    cache = VerdictCache(config.judge.cache_path)
    try:
        fingerprints, replies = cache.prune(args.days)
    finally:
        cache.close()
    print(
        f"removed {fingerprints} judge configuration(s) unused for {args.days:g} days ({replies} replies)"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judge", description="Evaluate a RAG system: retrieval metrics and a Gemma judge."
    )
    parser.add_argument("--config", default="judge.toml", help="configuration file (judge.toml)")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="validate the golden set, corpus, run and labels")
    check.add_argument("--run", type=Path, help="a run file (overrides data.run)")
    check.set_defaults(handler=cmd_check)

    retrieval = commands.add_parser("retrieval", help="per-type retrieval metrics")
    retrieval.add_argument("--run", type=Path, help="a run file (overrides data.run)")
    retrieval.add_argument("--trec-run", help="score a TREC run file instead of a run")
    retrieval.add_argument(
        "--trec-qrels", help="with --trec-run: relevant chunks from this qrels file"
    )
    retrieval.add_argument(
        "--json", help="where to write the table (default reports/retrieval.json)"
    )
    retrieval.set_defaults(handler=cmd_retrieval)

    trec = commands.add_parser("trec", help="export qrels and run files for trec_eval")
    trec_commands = trec.add_subparsers(dest="trec_command", required=True)
    export = trec_commands.add_parser("export", help="write qrels and/or a TREC run")
    export.add_argument("--run", type=Path, help="a run file (overrides data.run)")
    export.add_argument("--qrels", help="qrels output path")
    export.add_argument("--trec-out", help="TREC run output path")
    export.set_defaults(handler=cmd_trec_export)

    run = commands.add_parser("run", help="retrieval metrics, then judge every answer")
    run.add_argument("--run", type=Path, help="a run file (overrides data.run)")
    run.add_argument("--backend", choices=["auto", "ollama", "embedded", "openai", "lexical"])
    run.add_argument("--prompt", type=Path, help="a prompt file (overrides judge.prompt)")
    run.add_argument("--concurrency", type=int, help="items judged at once")
    run.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a per-type metric fell by more than the threshold",
    )
    run.add_argument(
        "--require-baseline",
        action="store_true",
        help="exit 1 when there is nothing compatible to compare with",
    )
    run.set_defaults(handler=cmd_run, nightly=False)

    nightly = commands.add_parser(
        "nightly", help="run with the gate: exit 1 on regression or missing baseline; verdict first"
    )
    nightly.add_argument("--run", type=Path, help="a run file (overrides data.run)")
    nightly.set_defaults(
        handler=cmd_run,
        nightly=True,
        backend=None,
        prompt=None,
        concurrency=None,
        fail_on_regression=True,
        require_baseline=True,
    )

    show = commands.add_parser("show", help="one verdict with its chunks and the quote marked")
    show.add_argument("question_id")
    show.add_argument("--folder", help="a run folder (default: the latest run)")
    show.set_defaults(handler=cmd_show)

    report = commands.add_parser("report", help="re-render a run's report from the cache")
    report.add_argument("folder", nargs="?", help="a run folder (default: the latest run)")
    report.set_defaults(handler=cmd_report)

    diff = commands.add_parser("diff", help="compare two runs")
    diff.add_argument("a", help="the earlier run folder")
    diff.add_argument("b", help="the later run folder")
    diff.set_defaults(handler=cmd_diff)

    baseline = commands.add_parser("baseline", help="the pinned baseline the gate holds runs to")
    baseline_commands = baseline.add_subparsers(dest="baseline_command", required=True)
    pin = baseline_commands.add_parser("pin", help="pin a run's numbers as the baseline")
    pin.add_argument("folder", nargs="?", help="a run folder (default: the latest run)")
    pin.add_argument("--replace", action="store_true", help="overwrite an existing baseline")
    pin.set_defaults(handler=cmd_baseline)
    ratchet = baseline_commands.add_parser(
        "ratchet", help="raise the baseline where a run is better"
    )
    ratchet.add_argument("folder", nargs="?", help="a run folder (default: the latest run)")
    ratchet.set_defaults(handler=cmd_baseline)

    audit = commands.add_parser("audit", help="agreement of the judge with human labels")
    audit.add_argument("--folder", help="a run folder (default: the latest run)")
    audit.add_argument("--min-kappa", type=float, help="exit 1 if either axis' kappa is lower")
    audit.add_argument(
        "--min-agreement", type=float, help="exit 1 if either axis' exact agreement is lower (0-1)"
    )
    audit.set_defaults(handler=cmd_audit)
    audit_commands = audit.add_subparsers(dest="audit_command")
    sample = audit_commands.add_parser("sample", help="write a blind labelling sheet (CSV)")
    sample.add_argument("--n", type=int, required=True, help="how many items")
    sample.add_argument("--out", default="labelling-sheet.csv", help="the sheet to write")
    sample.add_argument(
        "--oversample-uncertain",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="share (0-1) of each type's quota taken first from items the judge may be unsure about",
    )
    sample.add_argument("--seed", type=int, default=0)
    sample.add_argument("--folder", help="a run folder (default: the latest run)")
    sample.set_defaults(handler=cmd_audit_sample)
    imp = audit_commands.add_parser("import", help="import a filled sheet into the labels file")
    imp.add_argument("file")
    imp.add_argument("--labeller", help="for rows whose labeller column is empty")
    imp.add_argument("--replace", action="store_true", help="overwrite conflicting labels")
    imp.set_defaults(handler=cmd_audit_import)
    label = audit_commands.add_parser("label", help="label in the terminal (saves after each item)")
    label.add_argument("--labeller", required=True)
    label.add_argument("--folder", help="a run folder (default: the latest run)")
    label.set_defaults(handler=cmd_audit_label)

    cache = commands.add_parser("cache", help="the verdict cache")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True)
    stats = cache_commands.add_parser("stats", help="judge configurations and their replies")
    stats.set_defaults(handler=cmd_cache_stats)
    prune = cache_commands.add_parser("prune", help="drop configurations not used lately")
    prune.add_argument("--days", type=float, required=True, help="unused for this many days")
    prune.set_defaults(handler=cmd_cache_prune)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: user errors print one line each and exit non-zero; bugs keep tracebacks."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except InputError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        if len(exc.problems) > 1:
            print(f"{len(exc.problems)} problems; nothing was evaluated", file=sys.stderr)
        return exc.exit_code
    except HarnessError as exc:
        for line in str(exc).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `judge ... | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
    except sqlite3.OperationalError as exc:  # e.g. 'cache prune' vacuuming during a run
        print(
            f"error: the verdict cache is busy ({exc}); wait for the other judge command",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except OSError as exc:  # disk full, permission denied: the environment, not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
