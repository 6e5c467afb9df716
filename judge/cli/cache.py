"""``judge cache stats | prune`` and ``judge batch export | import``: the verdict cache."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from judge.cli.common import config_of, say, warn
from judge.cli.options import DEFAULT_BATCH_FILE_MB, Commands, Number
from judge.errors import (
    EXIT_BAD_INPUT,
)


def cmd_cache_stats(args: argparse.Namespace) -> int:
    from judge.pipeline.cache import cache_stats

    stats = cache_stats(config_of(args))
    say(f"cache: {stats.path} · {len(stats.entries)} judge configuration(s)")
    for entry in stats.entries:
        say(f"\n{entry.fingerprint}  {entry.replies} replies  last used {entry.last_used_at}")
        say(f"  {entry.label}")
        for key, value in entry.parts.items():
            if key != "schema":
                say(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    return 0


def cmd_cache_prune(args: argparse.Namespace) -> int:
    from judge.pipeline.cache import prune_cache

    pruned = prune_cache(config_of(args), args.days, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    say(
        f"{verb} {pruned.fingerprints} judge configuration(s) unused for {args.days:g} days "
        f"({pruned.replies} replies)"
    )
    return 0


def cmd_batch_export(args: argparse.Namespace) -> int:
    from judge.pipeline.batch import export_batch

    config = config_of(args)
    result = export_batch(
        config,
        Path(args.out) if args.out else None,
        max_file_mb=args.max_file_mb,
        run_path=args.run,
    )
    warn(result.warnings)
    if result.estimate is not None:
        say(result.estimate.line())
    if result.manifest is None:
        say(
            f"nothing to export: all {result.total} item(s) are in the cache for judge "
            f"configuration {result.fingerprint} (judge.openai: {config.judge.openai.model})"
        )
        return 0
    size = sum(f.bytes for f in result.files) / 1024 / 1024
    say(
        f"wrote {result.pending} pending item(s) in {len(result.files)} file(s) ({size:.1f} MB) "
        f"to {result.out_dir}; {result.cached} of {result.total} already in the cache; "
        f"manifest {result.manifest}"
    )
    say(
        f"run them with a batch engine serving '{config.judge.openai.model}' (docs/batch.md), "
        f"then: judge batch import {result.out_dir}/results-*.jsonl"
    )
    return 0


def cmd_batch_import(args: argparse.Namespace) -> int:
    from judge.pipeline.batch import import_batch

    config = config_of(args)
    result = import_batch(
        config, [Path(f) for f in args.files], Path(args.manifest) if args.manifest else None
    )
    for problem in result.problems:
        say(f"error: {problem}", err=True, one_line=True)
    say(
        f"imported {result.imported} replies into {config.judge.cache_path} from "
        f"{result.lines} lines, {result.already} already there; {len(result.not_judged)} not "
        f"judged by the engine; {len(result.problems)} problems; {result.still_pending} items "
        f"of the export still without a reply"
    )
    if result.still_pending == 0 and not result.problems:
        say("every item is in the cache: 'judge run --backend openai' judges nothing again")
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
