"""``judge cache stats | prune`` and ``judge batch export | import``: the verdict cache."""

from __future__ import annotations

import argparse
from pathlib import Path

from judge.cli.common import config_of, say, say_lines, warn
from judge.cli.options import DEFAULT_BATCH_FILE_MB, Commands, Number
from judge.errors import (
    EXIT_BAD_INPUT,
)


def cmd_cache_stats(args: argparse.Namespace) -> int:
    from judge.pipeline.cache import cache_stats
    from judge.report.command_lines import cache_stats_lines

    say_lines(cache_stats_lines(cache_stats(config_of(args))))
    return 0


def cmd_cache_prune(args: argparse.Namespace) -> int:
    from judge.pipeline.cache import prune_cache
    from judge.report.command_lines import pruned_lines

    pruned = prune_cache(config_of(args), args.days, dry_run=args.dry_run)
    say_lines(pruned_lines(pruned, args.days, dry_run=args.dry_run))
    return 0


def cmd_batch_export(args: argparse.Namespace) -> int:
    from judge.pipeline.batch import export_batch
    from judge.report.command_lines import batch_export_lines

    config = config_of(args)
    result = export_batch(
        config,
        Path(args.out) if args.out else None,
        max_file_mb=args.max_file_mb,
        run_path=args.run,
    )
    warn(result.warnings)
    say_lines(batch_export_lines(result, config.judge.openai.model))
    return 0


def cmd_batch_import(args: argparse.Namespace) -> int:
    from judge.pipeline.batch import import_batch
    from judge.report.command_lines import batch_import_lines

    config = config_of(args)
    result = import_batch(
        config, [Path(f) for f in args.files], Path(args.manifest) if args.manifest else None
    )
    for problem in result.problems:
        say(f"error: {problem}", err=True, one_line=True)
    say_lines(batch_import_lines(result, config.judge.cache_path))
    return EXIT_BAD_INPUT if result.problems else 0


def add_cache_commands(commands: Commands) -> None:
    cache = Commands(commands.add("cache", None, "the verdict cache"), "cache_command")
    cache.add("stats", cmd_cache_stats, "judge configurations and their replies")
    prune = cache.add("prune", cmd_cache_prune, "drop configurations not used lately")
    prune.add_argument(
        "--days", type=Number(float, 0), required=True, help="unused for this many days"
    )
    prune.add_argument(
        "--dry-run", action="store_true", help="say what would be removed, remove nothing"
    )


def add_batch_commands(commands: Commands) -> None:
    batch = Commands(
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
