"""``judge audit`` and ``audit sample | import | label``: the judge against human labels; ``judge
align``: the judge learning from them behind a held-out guard; ``judge panel``: several judges
voting."""

from __future__ import annotations

import argparse
from pathlib import Path

from judge.cli.common import config_of, judging_hooks, say, say_lines, warn
from judge.cli.options import FOLDER_HELP, Commands, Number, backend_option
from judge.errors import (
    EXIT_REGRESSION,
)


def cmd_audit(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import audit
    from judge.report.audit_text import audit_gate_lines, render_audit

    audited = audit(
        config_of(args),
        args.folder,
        min_kappa=args.min_kappa,
        min_agreement=args.min_agreement,
        warn=lambda line: warn([line]),
    )
    say(
        render_audit(
            audited.result, audited.judge, limit=args.limit, full_list_path=audited.disagreements
        )
    )
    gated = args.min_kappa is not None or args.min_agreement is not None
    say_lines(audit_gate_lines(audited.failures, gated=gated))
    return EXIT_REGRESSION if audited.failures else 0


def cmd_audit_sample(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import sample
    from judge.report.command_lines import sampled_lines

    sampled = sample(
        config_of(args),
        args.folder,
        args.n,
        Path(args.out),
        oversample_uncertain=args.oversample_uncertain,
        seed=args.seed,
        warn=lambda line: warn([line]),
    )
    say_lines(sampled_lines(sampled, args.n))
    return 0


def cmd_audit_import(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import import_labels
    from judge.report.command_lines import labels_imported_lines, labels_imported_warnings

    # A filled CSV sheet or review.html's marks file, told apart by content.
    imported = import_labels(
        config_of(args), Path(args.file), labeller=args.labeller, replace=args.replace
    )
    warn(labels_imported_warnings(imported))
    say_lines(labels_imported_lines(imported))
    return 0


def cmd_audit_label(args: argparse.Namespace) -> int:
    from judge.pipeline.audit import label

    label(config_of(args), args.folder, args.labeller)
    return 0


def cmd_align(args: argparse.Namespace) -> int:
    from judge.pipeline.align import AlignSettings, align, aligned_lines

    config = config_of(args)
    if args.backend:
        config = config.with_overrides(judge={"backend": args.backend})

    settings = AlignSettings(
        tuple(sorted(set(args.k))), args.folds, args.budget, args.seed, write=not args.dry_run
    )
    with judging_hooks() as hooks:
        aligned = align(config, settings, run_path=args.run, **hooks)
    say_lines(aligned_lines(aligned))
    say(f"report: {aligned.report}")
    return 0


def add_align_command(commands: Commands) -> None:
    align = commands.add(
        "align",
        cmd_align,
        "prompt variants with worked exemplars from the labels, adopted only when they beat "
        "the current prompt on held-out labels (docs/align.md)",
    )
    align.add_argument(
        "--k",
        type=Number(int, 1, 32),
        nargs="+",
        default=[2, 4],
        help="exemplars per variant, one variant per value (2 4)",
    )
    align.add_argument("--folds", type=Number(int, 2, 20), default=5, help="cross-fitted folds (5)")
    align.add_argument(
        "--budget",
        type=Number(int, 100),
        default=2000,
        help="estimated tokens the exemplars may take in the prompt (2000)",
    )
    align.add_argument("--seed", type=Number(int), default=0, help="how folds are dealt (0)")
    align.add_argument(
        "--dry-run", action="store_true", help="say what would be adopted, write no prompt file"
    )
    backend_option(align)
    align.add_argument("--run", type=Path, help="a run file (overrides data.run)")


def cmd_panel(args: argparse.Namespace) -> int:
    from judge.pipeline.panel import panel, panel_lines

    with judging_hooks() as hooks:
        paneled = panel(config_of(args), run_path=args.run, **hooks)
    say_lines(panel_lines(paneled))
    say(f"report: {paneled.report}")
    return 0


def add_panel_command(commands: Commands) -> None:
    panel = commands.add(
        "panel",
        cmd_panel,
        "judge the run with every member of [judge.panel] and vote: each member's agreement "
        "with the labels and with the others; disputed answers go first into the next audit "
        "sample (docs/align.md#a-panel-of-judges)",
    )
    panel.add_argument("--run", type=Path, help="a run file (overrides data.run)")


def add_audit_commands(commands: Commands) -> None:
    add_align_command(commands)
    add_panel_command(commands)
    audit = commands.add("audit", cmd_audit, "agreement of the judge with human labels")
    audit.add_argument("--folder", help=FOLDER_HELP)
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
    steps = Commands(audit, "audit_command", required=False)
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
    sample.add_argument("--folder", help=FOLDER_HELP)
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
    label.add_argument("--folder", help=FOLDER_HELP)
