"""``judge import ragas | deepeval | otel`` and ``judge golden propose | review | accept``: data
in from elsewhere, and the golden set grown (docs/golden.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from judge.cli.common import DEFAULT_CONFIG, config_of, say_lines, warn
from judge.cli.options import Commands, Number, backend_option


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
    from judge.pipeline.golden import Accepted, accept
    from judge.report.command_lines import accepted_lines
    from judge.report.golden_lines import candidates_accepted_lines

    accepted = accept(config_of(args), Path(args.file), dry_run=args.dry_run)
    if isinstance(accepted, Accepted):
        say_lines(accepted_lines(accepted, dry_run=args.dry_run))
    else:
        say_lines(candidates_accepted_lines(accepted, dry_run=args.dry_run))
    return 0


def cmd_golden_propose(args: argparse.Namespace) -> int:
    from judge.pipeline.propose import propose_from_corpus, propose_from_questions
    from judge.report.golden_lines import proposed_lines

    config = config_of(args)
    if args.backend:
        config = config.with_overrides(judge={"backend": args.backend})
    out = Path(args.out)
    if args.from_questions:
        run = Path(args.run) if args.run else None
        proposed = propose_from_questions(
            config, Path(args.from_questions), out, run=run, guess_types=args.guess_types
        )
    else:
        proposed = propose_from_corpus(config, out, count=args.count)
    say_lines(proposed_lines(proposed))
    return 0


def cmd_golden_review(args: argparse.Namespace) -> int:
    from judge.pipeline.golden_review import review_in_terminal
    from judge.report.golden_lines import reviewed_lines

    reviewed = review_in_terminal(config_of(args), Path(args.file))
    say_lines(reviewed_lines(reviewed, Path(args.file)))
    return 0


def add_golden_commands(commands: Commands) -> None:
    golden = Commands(
        commands.add("golden", None, "edit the golden set (golden/README.md)"), "golden_command"
    )
    _add_propose(golden)
    review = golden.add(
        "review", cmd_golden_review, "decide on proposed candidates one at a time, in the terminal"
    )
    review.add_argument("file", metavar="FILE", help="a candidates file of golden propose")
    accept = golden.add(
        "accept",
        cmd_golden_accept,
        "add the chunks a reviewer confirmed in a report's missing-labels.csv, or the accepted "
        "candidates of golden propose, to the questions",
    )
    accept.add_argument(
        "file",
        metavar="FILE",
        help="missing-labels.csv with its confirmed column filled (or .jsonl), or a candidates "
        "file of golden propose",
    )
    accept.add_argument(
        "--dry-run", action="store_true", help="say what would be added, write nothing"
    )


def _add_propose(golden: Commands) -> None:
    propose = golden.add(
        "propose",
        cmd_golden_propose,
        "candidate questions from real questions or drafted from the corpus, verified, to a "
        "file (never into the golden set)",
    )
    source = propose.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--from-questions",
        metavar="FILE",
        help='a JSONL of real questions ({"question": ...} a line, or judge import otel\'s '
        "questions.jsonl)",
    )
    source.add_argument(
        "--from-corpus", action="store_true", help="the judge drafts questions from chunks"
    )
    propose.add_argument(
        "--run", metavar="FILE", help="the system's run on those questions (proposes chunks)"
    )
    propose.add_argument(
        "--guess-types",
        action="store_true",
        help="guess every question's type, ignoring the file's (judge import's default type)",
    )
    propose.add_argument(
        "--count",
        type=Number(int, 1, 10000),
        default=30,
        help="questions to draft (--from-corpus; default 30: 12 factual, 8 procedural, 5 "
        "negative, 5 out of scope)",
    )
    propose.add_argument(
        "--out", default="candidates.jsonl", help="the candidates file (default: candidates.jsonl)"
    )
    backend_option(propose)
