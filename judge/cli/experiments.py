"""``judge sweep`` and ``judge stability``: judging again under other settings or perturbed inputs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from judge.cli.common import config_of, judging_hooks, say, say_judge_choice
from judge.cli.options import Commands, Number, backend_option


def cmd_sweep(args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from judge.console import adapter_progress, judge_progress
    from judge.pipeline.sweep import SweepHooks, SweepStep, sweep
    from judge.report.sweep import decision_lines

    config = config_of(args)
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
        say(f"{what[event.stage]} {event.position + 1}/{event.total}: {event.label}", err=True)

    hooks = SweepHooks(
        on_step=step,
        on_adapter=lambda e: current["adapter"](e),
        on_judge_chosen=say_judge_choice,
        on_judging=lambda e: current["judge"](e),
    )
    with bars:
        outcome = sweep(config, judge=not args.no_judge, backend=args.backend, hooks=hooks)
    for line in decision_lines(outcome):
        say(line)
    say(f"report: {outcome.folder / 'sweep.md'}")
    return 0


def cmd_stability(args: argparse.Namespace) -> int:
    from judge.pipeline.stability import judge_stability
    from judge.report.stability import stability_lines

    with judging_hooks(with_labels=False) as hooks:
        report, path = judge_stability(
            config_of(args),
            sample=args.sample,
            seed=args.seed,
            backend=args.backend,
            run_path=args.run,
            **hooks,
        )
    for line in stability_lines(report):
        say(line)
    say(f"report: {path}")
    return 0


def add_sweep_command(commands: Commands) -> None:
    sweep = commands.add(
        "sweep",
        cmd_sweep,
        "try every setting of [sweep] on the tuning questions and recommend one only when the "
        "guards allow (docs/sweep.md)",
    )
    backend_option(sweep)
    sweep.add_argument(
        "--judge-top",
        type=Number(int, 0, 20),
        metavar="N",
        help="besides the default, judge the N best settings (overrides sweep.judge_top)",
    )
    sweep.add_argument(
        "--no-judge", action="store_true", help="retrieval only: judge no setting's answers"
    )


def add_stability_command(commands: Commands) -> None:
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
    backend_option(stability)
    stability.add_argument("--run", type=Path, help="a run file (overrides data.run)")
