"""``judge show``, ``diff``, ``report``, ``history`` and ``baseline pin | ratchet``: saved
report folders."""

from __future__ import annotations

import argparse
import sys

from judge.cli.common import config_of, say, say_lines, warn
from judge.cli.options import FOLDER_HELP, Commands


def cmd_baseline(args: argparse.Namespace) -> int:
    from judge.pipeline.baseline import pin, ratchet
    from judge.report.command_lines import pinned_lines, ratcheted_lines

    config = config_of(args)
    if args.baseline_command == "pin":
        pinned = pin(config, args.folder, replace=args.replace)
        say_lines(pinned_lines(pinned))
        return 0
    say_lines(ratcheted_lines(ratchet(config, args.folder)))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import os

    from judge.pipeline.folders import folder_record
    from judge.report.show import show_item

    config = config_of(args)
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    # show_item made the data in it safe before colouring it: printed as it is.
    print(show_item(folder_record(config, args.folder), args.question_id, color=color))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from judge.pipeline.folders import diff_folders
    from judge.report.show import diff_lines

    say("\n".join(diff_lines(diff_folders(config_of(args), args.a, args.b))))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from judge.pipeline.report import rerender

    folder = rerender(
        config_of(args), args.folder, warn=lambda line: warn([line]), rederive=args.rederive
    )
    say(f"re-rendered {folder.path} (nothing judged)")
    return 0


def _nights(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of nights, 1 or more")
    return int(text)


def cmd_history(args: argparse.Namespace) -> int:
    from judge.pipeline.history import history
    from judge.report.history_text import history_lines

    view, path = history(config_of(args))
    say_lines(history_lines(view, args.nights, str(path)))
    if args.open:
        import webbrowser

        if not webbrowser.open(path.resolve().as_uri()):
            warn([f"no browser to open {path} with; open it by hand"])
    return 0


def add_folder_commands(commands: Commands) -> None:
    show = commands.add("show", cmd_show, "one verdict with its chunks and the quote marked")
    show.add_argument("question_id", help="a golden question id")
    show.add_argument("--folder", help=FOLDER_HELP)
    report = commands.add("report", cmd_report, "render a report folder's files again")
    report.add_argument("folder", nargs="?", help=FOLDER_HELP)
    report.add_argument(
        "--rederive",
        action="store_true",
        help="rebuild the record from the folder's run and the cache: each verdict re-derived "
        "from its cached reply (a newer parser or evidence verifier applies), the labels and "
        "comparisons read again (default: render the folder's record as it was written)",
    )
    history = commands.add(
        "history", cmd_history, "the season: values, gate marks and changes, night by night"
    )
    history.add_argument("--open", action="store_true", help="open reports/history.html")
    history.add_argument(
        "--nights", type=_nights, default=10, help="how many of the last nights to print (10)"
    )
    diff = commands.add("diff", cmd_diff, "compare two report folders")
    diff.add_argument("a", help="the earlier report folder")
    diff.add_argument("b", help="the later report folder")
    baseline = Commands(
        commands.add("baseline", None, "the pinned baseline the gate holds runs to"),
        "baseline_command",
    )
    pin = baseline.add("pin", cmd_baseline, "pin a run's numbers as the baseline")
    pin.add_argument("folder", nargs="?", help=FOLDER_HELP)
    pin.add_argument("--replace", action="store_true", help="overwrite an existing baseline")
    ratchet = baseline.add(
        "ratchet", cmd_baseline, "raise the baseline where a run is shown better (never lower it)"
    )
    ratchet.add_argument("folder", nargs="?", help=FOLDER_HELP)
