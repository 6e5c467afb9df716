"""``judge check``, ``judge retrieval`` and ``judge trec export``: the inputs, validated and scored."""

from __future__ import annotations

import argparse
from pathlib import Path

from judge.cli.common import config_of, say, say_lines, warn, warnings_of
from judge.cli.options import ANSWER_OPTIONS, Commands, Number, backend_option
from judge.errors import (
    InputError,
)


def cmd_check(args: argparse.Namespace) -> int:
    from judge.console import adapter_progress
    from judge.pipeline.check import check, repeat, repeat_refusal
    from judge.report.check_text import check_lines

    config = config_of(args)
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
            on_inputs=warnings_of(with_labels=False),
        )
    say_lines(check_lines(checked, with_labels=config.data.labels is not None))
    if args.repeat is not None:
        with adapter_progress() as on_adapter:
            repeated = repeat(config, checked.inputs.golden, args.repeat, on_adapter=on_adapter)
        warn(repeated.warnings())
        say_lines(repeated.repeated.lines())
        if repeated.problems:
            raise InputError(repeated.problems)
    say("ok")
    return 0


def cmd_retrieval(args: argparse.Namespace) -> int:
    from judge.console import adapter_progress
    from judge.pipeline.retrieval import retrieval
    from judge.report.text_tables import render_text

    config = config_of(args)
    with adapter_progress() as on_adapter:
        result = retrieval(
            config,
            args.run,
            fresh_answers=args.fresh_answers,
            trec_run=args.trec_run or None,
            trec_qrels=Path(args.trec_qrels) if args.trec_qrels else None,
            out=Path(args.json) if args.json else None,
            on_adapter=on_adapter,
            on_inputs=warnings_of(with_labels=False),
        )
    measured = result.measured
    say(f"retrieval of {measured.run_source} (context_k = {config.retrieval.context_k})")
    say(render_text(measured.retrieval))
    say(f"wrote {result.out}")
    return 0


def cmd_trec_export(args: argparse.Namespace) -> int:
    from judge.console import adapter_progress
    from judge.pipeline.retrieval import export_trec
    from judge.report.command_lines import trec_export_lines

    config = config_of(args)
    with adapter_progress() as on_adapter:
        exported = export_trec(
            config,
            args.run,
            fresh_answers=args.fresh_answers,
            qrels=Path(args.qrels) if args.qrels else None,
            trec_out=Path(args.trec_out) if args.trec_out else None,
            on_adapter=on_adapter,
            on_inputs=warnings_of(with_labels=False),
        )
    say_lines(trec_export_lines(exported))
    return 0


def add_input_commands(commands: Commands) -> None:
    check = commands.add(
        "check", cmd_check, "validate the golden set, corpus, run and labels", ANSWER_OPTIONS
    )
    check.add_argument(
        "--repeat",
        type=Number(int, 2, 100),
        metavar="N",
        help="also ask data.adapter N times afresh (nothing saved) and report the share of "
        "questions whose retrieval order or answer changed, per type",
    )
    backend_option(check)
    check.add_argument(
        "--no-judge",
        action="store_true",
        help="skip the judge's preflight (its server, model and digest, and what the cache "
        "holds), for offline use",
    )
    retrieval = commands.add(
        "retrieval", cmd_retrieval, "per-type retrieval metrics", ANSWER_OPTIONS
    )
    retrieval.add_argument("--trec-run", help="score a TREC run file instead of a run")
    retrieval.add_argument(
        "--trec-qrels", help="with --trec-run: take the relevant chunks from this qrels file"
    )
    retrieval.add_argument(
        "--json", help="where to write the table (default reports/retrieval.json)"
    )
    trec = Commands(
        commands.add("trec", None, "export qrels and run files for trec_eval"), "trec_command"
    )
    export = trec.add(
        "export",
        cmd_trec_export,
        "write qrels and a TREC run (default: reports/trec/qrels.txt and run.txt)",
        ANSWER_OPTIONS,
    )
    export.add_argument("--qrels", help="qrels output path (default reports/trec/qrels.txt)")
    export.add_argument("--trec-out", help="TREC run output path (default reports/trec/run.txt)")
