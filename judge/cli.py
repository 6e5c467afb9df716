"""Command line: ``judge check | retrieval | trec | run | cache ...``. Holds no logic of its own."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from judge.config import Config, load_config
from judge.errors import EXIT_INTERRUPTED, HarnessError, InputError
from judge.pipeline import Inputs, evaluate_retrieval, load_inputs
from judge.render import render_text
from judge.trec import read_trec_run, write_qrels, write_trec_run


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
        from judge.golden import load_labels

        labels = load_labels(config.data.labels, golden.by_id())
        print(f"labels:    {len(labels)} from {len({lab.labeller for lab in labels})} labeller(s)")
    _print_leaks(inputs, config)
    print("ok")
    return 0


def cmd_retrieval(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.trec_run:
        from judge.golden import load_golden

        golden = load_golden(config.data)
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
    out.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
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
    from judge.backends import open_backend
    from judge.cache import VerdictCache
    from judge.console import judge_progress
    from judge.pipeline import evaluate_judge
    from judge.prompts import load_prompt
    from judge.render import render_text
    from judge.report import write_run_folder

    config = _judge_overrides(args, _config(args))
    inputs = _inputs(args, config)
    _print_leaks(inputs, config)
    prompt = load_prompt(config.judge.prompt)  # a bad prompt fails before any model loads
    retrieval = evaluate_retrieval(config, inputs.golden, inputs.run)
    opened = open_backend(config.judge)
    print(f"judge: {opened.backend.identity.describe()}")
    print(f"       ({opened.reason})")
    print(
        f"prompt: {prompt.path} · run: {inputs.run_source} · context_k {config.retrieval.context_k}"
    )
    cache = VerdictCache(config.judge.cache_path)
    try:
        with judge_progress() as on_progress:
            judged = evaluate_judge(config, inputs, retrieval, opened, cache, on_progress)
    finally:
        cache.close()
    outcome = judged.outcome
    if outcome.interrupted:
        print(
            f"interrupted: {len(outcome.verdicts)} of {len(inputs.run.records)} answers judged and "
            "cached; run the same command again to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    hits = sum(v.cached for v in outcome.verdicts.values())
    print(
        f"\njudged {len(outcome.verdicts)} answers in {outcome.elapsed_s:.1f} s ({hits} from the cache)"
    )
    print(f"\nretrieval per type (context_k = {config.retrieval.context_k})")
    print(render_text(retrieval.table))
    print(f"\njudge per type ({opened.backend.identity.kind} · {opened.backend.identity.model})")
    print(render_text(judged.table))
    review = [v for v in outcome.verdicts.values() if v.review or v.status != "ok"]
    if review:
        print(f"\n{len(review)} verdicts need a look:")
        for v in review:
            why = "; ".join(v.review) if v.review else f"{v.status}: {v.error}"
            print(f"  {v.question_id}: {why}")
    folder = write_run_folder(
        config.reports.dir, inputs, retrieval, judged, config.retrieval.context_k
    )
    print(f"\nsaved {folder}")
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
    run.set_defaults(handler=cmd_run)

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


if __name__ == "__main__":
    sys.exit(main())
