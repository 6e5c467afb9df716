"""``judge import ragas | deepeval | otel`` and ``judge golden accept``: data in from elsewhere."""

from __future__ import annotations

import argparse
from pathlib import Path

from judge.cli.common import DEFAULT_CONFIG, config_of, say_lines, warn
from judge.cli.options import Commands


def cmd_import(args: argparse.Namespace) -> int:
    from judge.pipeline.imports import import_foreign
    from judge.report.command_lines import foreign_import_lines

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
    where = config.source if config is not None and config.source is not None else "judge.toml"
    say_lines(foreign_import_lines(result, args.file, str(where)))
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
    from judge.report.command_lines import accepted_lines

    accepted = accept_labels(config_of(args), Path(args.file), dry_run=args.dry_run)
    say_lines(accepted_lines(accepted, dry_run=args.dry_run))
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
