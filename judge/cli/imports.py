"""``judge import ragas | deepeval | otel`` and ``judge golden accept``: data in from elsewhere."""

from __future__ import annotations

import argparse
from pathlib import Path

from judge.cli.common import DEFAULT_CONFIG, config_of, say, warn
from judge.cli.options import Commands


def cmd_import(args: argparse.Namespace) -> int:
    from judge.pipeline.imports import import_foreign

    # A configuration gives the question types, the out-of-scope type and the refusal phrases;
    # without one (no judge.toml here yet, the usual case before an import) the defaults do.
    explicit = args.config != DEFAULT_CONFIG
    config = config_of(args) if explicit or Path(args.config).is_file() else None
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
    warn(result.warnings)
    total = sum(result.per_type.values())
    counts = ", ".join(f"{n} {qtype}" for qtype, n in result.per_type.items() if n)
    say(
        f"imported {total} question(s) ({counts}), {result.chunks} chunk(s) and "
        f"{total - result.failed} answer(s) from {args.file} into {result.questions.parent}"
    )
    if result.failed:
        say(f"{result.failed} question(s) failed in the source: reported, not scored")
    if result.unlabelled:
        say(
            f"{result.unlabelled} answerable question(s) without relevant chunks: judged, "
            "their retrieval not scored (relevant_chunks: null)"
        )
    where = config.source if config is not None and config.source is not None else "judge.toml"
    say(f"\nuse it: put this [data] table in {where} (replacing its own), then 'judge check':\n")
    say("\n".join(result.data_lines))
    return 0


def add_import_commands(commands: Commands) -> None:
    imports = Commands(
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

    accepted = accept_labels(config_of(args), Path(args.file), dry_run=args.dry_run)
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
    say("; ".join(parts))
    if edit.added and args.dry_run:
        lines = ", ".join(str(line) for line in edit.lines)
        say(f"nothing written (--dry-run); line(s) {lines} would change")
    elif accepted.written:
        say(
            "the golden set changed: the next run is not compared with runs on the old one "
            "(pin a new baseline after it), and an adapter is asked again"
        )
    return 0


def add_golden_commands(commands: Commands) -> None:
    golden = Commands(
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
