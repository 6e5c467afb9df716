"""Speed as a ratio to the floor: each command against the work it cannot avoid, measured in the
same run, alternating (command, floor, floor, command, ...), so that the load of a shared machine
falls on both sides alike.

On this shared machine the seconds of one command move 2.5-3.5x with the load; the ratio of a
command to the reads and writes it must do moves far less. Three figures, each the median of
its rounds with the range and the load average beside it:

1. **cached re-run**: ``judge run --backend lexical`` on a 10,000-question set whose verdicts are
   all cached, against its floor: the same input bytes read and parsed with ``json.loads`` line
   by line (questions, corpus, run), the same cache rows selected and their replies parsed, and
   the same output bytes (every file of the folder the run wrote) written atomically.
2. **judge report** of that folder, against its floor: the record's files read and parsed
   (``report.json``; since format 4 also the JSON lines its rows reference), and the
   folder's files written atomically.
3. **judge overhead**: ``judge_bench.overhead`` (a zero-latency backend judging N items into a
   fresh cache) against a floor of one SQLite transaction per item inserting the same replies.

Each side is a fresh process, CPU seconds (user + system) of the child: start-up is in both.

``python bench/floor_bench.py [--tree PATH] [--questions N] [--rounds R]``: ``--tree`` measures
another checkout of the judge (a git worktree of an older commit, for a before/after table);
its own ``bench/judge_bench.py`` makes the data set and the overhead figure. ``--against BASE``
measures the change itself: ``--tree``'s re-run and report against ``BASE``'s, alternating
(before, after, after, before), as the ratio after / before.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from startup_bench import USER_ENV

REPO = Path(__file__).resolve().parent.parent

#: The floor of a run or a re-render, as a script of bare Python (stdlib only): read and parse
#: the inputs, select and parse the cache rows, write the output files atomically.
_FLOOR = r"""
import json, os, sqlite3, sys
from pathlib import Path

inputs, cache, folder, out = sys.argv[1:5]
for name in (inputs.split(os.pathsep) if inputs else []):
    with open(name, "rb") as handle:
        if name.endswith(".json"):  # one document
            json.loads(handle.read())
        else:  # JSON lines
            for line in handle:
                if line.strip():
                    json.loads(line)
if cache:
    db = sqlite3.connect(cache)
    for (reply,) in db.execute("SELECT reply FROM replies"):
        json.loads(reply)
    db.close()
Path(out).mkdir(parents=True, exist_ok=True)
for path in sorted(Path(folder).iterdir()):
    if path.is_file():
        data = path.read_bytes()
        temp = Path(out) / (path.name + ".tmp")
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, Path(out) / path.name)
"""

#: The floor of the judge overhead: one SQLite transaction per item (WAL, synchronous NORMAL, as
#: the verdict cache), inserting replies of the size the zero-latency backend gives.
_SQLITE_FLOOR = r"""
import json, sqlite3, sys, time
n, path = int(sys.argv[1]), sys.argv[2]
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE replies (fingerprint TEXT, item_key TEXT, question_id TEXT, "
           "reply TEXT, created_at TEXT, PRIMARY KEY (fingerprint, item_key))")
reply = json.dumps({"text": json.dumps({"evidence": "設定は12日ごとに同期されます。",
    "faithfulness": 2, "relevance": 2, "note": "ok"}, ensure_ascii=False),
    "finish_reason": "stop", "kind": "ok"}, ensure_ascii=False)
start = time.process_time()
for i in range(n):
    db.execute("BEGIN")
    db.execute("INSERT INTO replies VALUES (?, ?, ?, ?, ?)",
               ("f", f"k{i}", f"q{i}", reply, "2026-12-03T00:00:00Z"))
    db.execute("COMMIT")
print(time.process_time() - start)
"""


def _env(tree: Path) -> dict[str, str]:
    """A user's environment (``startup_bench.USER_ENV``: bytecode written, as a user's
    ``judge`` does) with ``tree``'s judge first."""
    return {**USER_ENV, "PYTHONPATH": str(tree)}


def _cpu(command: list[str], tree: Path) -> tuple[float, str]:
    """CPU seconds (user + system) of ``command`` as a child process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree, env=_env(tree))
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} exited {done.returncode}: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def summary(ratios: list[float], sides: dict[str, list[float]], digits: int = 2) -> dict[str, Any]:
    """An alternating measurement as the benches report it: the median ratio with its range,
    each side's median CPU seconds (``sides``: name → its times), the rounds and the load."""
    return {
        "ratio": round(statistics.median(ratios), digits),
        "ratio_range": [round(min(ratios), digits), round(max(ratios), digits)],
        **{name: round(statistics.median(times), 3) for name, times in sides.items()},
        "rounds": len(ratios),
        "load": round(os.getloadavg()[0], 1),
    }


def _alternating(command: list[str], floor: list[str], tree: Path, rounds: int) -> dict[str, Any]:
    """``rounds`` rounds of command, floor, floor, command: the median ratio of each round's
    command to its floor, with the range, the medians of both and the load average."""
    ratios, commands, floors = [], [], []
    for _ in range(rounds):
        first, _ = _cpu(command, tree)
        low_a, _ = _cpu(floor, tree)
        low_b, _ = _cpu(floor, tree)
        second, _ = _cpu(command, tree)
        commands += [first, second]
        floors += [low_a, low_b]
        ratios.append((first + second) / (low_a + low_b))
    return summary(ratios, {"command_cpu_s": commands, "floor_cpu_s": floors})


def _dataset(tree: Path, folder: Path, n_questions: int) -> Path:
    """``tree``'s own ``judge_bench.write_dataset`` (its judge.toml), run in ``tree``."""
    script = (
        "import sys; sys.path.insert(0, 'bench'); import judge_bench; from pathlib import Path; "
        f"print(judge_bench.write_dataset(Path({str(folder)!r}), {n_questions}))"
    )
    _, out = _cpu([sys.executable, "-c", script], tree)
    return Path(out.strip())


def _record_files(folder: Path) -> list[str]:
    """The files a folder's record is read from: ``report.json``, and since format 4 (a folder
    with ``chunks.jsonl``) the items, chunk texts and verdicts its rows reference."""
    if (folder / "chunks.jsonl").is_file():
        return ["report.json", "items.jsonl", "chunks.jsonl", "verdicts.jsonl"]
    return ["report.json"]


def _latest(reports: Path) -> Path:
    return reports / (reports / "latest").read_text(encoding="utf-8").strip()


def run_and_report(tree: Path, n_questions: int, rounds: int) -> dict[str, Any]:
    """The cached re-run and ``judge report`` against their floors, on one data set."""
    with tempfile.TemporaryDirectory() as tmp:
        toml = _dataset(tree, Path(tmp), n_questions)
        judge = [sys.executable, "-m", "judge", "--config", str(toml)]
        _cpu([*judge, "run", "--backend", "lexical"], tree)  # caches every verdict
        folder = _latest(Path(tmp) / "reports")
        inputs = os.pathsep.join(
            str(Path(tmp) / f"{n}.jsonl") for n in ("questions", "corpus", "run")
        )
        cache = str(Path(tmp) / "cache.sqlite3")
        out = str(Path(tmp) / "floor-out")
        rerun_floor = [sys.executable, "-c", _FLOOR, inputs, cache, str(folder), out]
        rerun = _alternating([*judge, "run", "--backend", "lexical"], rerun_floor, tree, rounds)
        folder = _latest(Path(tmp) / "reports")
        report_floor = [
            sys.executable,
            "-c",
            _FLOOR,
            os.pathsep.join(str(folder / name) for name in _record_files(folder)),
            "",
            str(folder),
            out,
        ]
        report = _alternating([*judge, "report"], report_floor, tree, rounds)
    return {"questions": n_questions, "cached_rerun": rerun, "report": report}


def overhead(tree: Path, n_items: int, rounds: int) -> dict[str, Any]:
    """``tree``'s ``judge_bench.overhead`` (CPU seconds of the judging) against one SQLite
    transaction per item, alternating as ``_alternating`` does (judge, floor, floor, judge):
    the ratio of each round's two judgings to its two floors."""
    script = (
        "import sys, json; sys.path.insert(0, 'bench'); import judge_bench; "
        f"print(json.dumps(judge_bench.overhead({n_items})))"
    )
    ratios, judged, floors = [], [], []
    with tempfile.TemporaryDirectory() as tmp:

        def judge() -> float:
            return float(json.loads(_cpu([sys.executable, "-c", script], tree)[1])["cpu_seconds"])

        def floor() -> float:
            path = str(Path(tmp) / f"floor{len(floors)}.sqlite3")
            return float(_cpu([sys.executable, "-c", _SQLITE_FLOOR, str(n_items), path], tree)[1])

        for _ in range(rounds):
            first = judge()
            floors.append(floor())
            floors.append(floor())
            judged += [first, judge()]
            ratios.append((judged[-2] + judged[-1]) / (floors[-2] + floors[-1]))
    return {
        "items": n_items,
        **summary(ratios, {"judge_cpu_s": judged, "floor_cpu_s": floors}),
        "items_per_cpu_s": round(n_items / statistics.median(judged)),
    }


def _paired(
    first: list[str], second: list[str], trees: tuple[Path, Path], rounds: int
) -> dict[str, Any]:
    """``rounds`` rounds of first, second, second, first (``first`` run in ``trees[0]``, the
    other in ``trees[1]``): the median ratio of second to first, with the range and the load."""
    ratios, old, new = [], [], []
    for _ in range(rounds):
        a, _ = _cpu(first, trees[0])
        b, _ = _cpu(second, trees[1])
        c, _ = _cpu(second, trees[1])
        d, _ = _cpu(first, trees[0])
        old += [a, d]
        new += [b, c]
        ratios.append((b + c) / (a + d))
    return summary(ratios, {"before_cpu_s": old, "after_cpu_s": new}, digits=3)


def before_after(base: Path, tree: Path, n_questions: int, rounds: int) -> dict[str, Any]:
    """The cached re-run and ``judge report`` of ``tree`` against those of ``base`` (another
    checkout: the code before a change), alternating in one run: each tree on a data set of its
    own (the same questions, made by its own ``judge_bench``), both cached by a first run, so
    that a change of one tree's folder format cannot reach the other. The ratio is after over
    before (below 1: faster)."""
    with tempfile.TemporaryDirectory() as tmp:
        commands = []
        for name, checkout in (("before", base), ("after", tree)):
            folder = Path(tmp) / name
            folder.mkdir()
            toml = _dataset(checkout, folder, n_questions)
            judge = [sys.executable, "-m", "judge", "--config", str(toml)]
            _cpu([*judge, "run", "--backend", "lexical"], checkout)  # caches every verdict
            commands.append(judge)
        (old, new), trees = commands, (base, tree)
        rerun = ["run", "--backend", "lexical"]
        result = {
            "questions": n_questions,
            "cached_rerun": _paired([*old, *rerun], [*new, *rerun], trees, rounds),
            "report": _paired([*old, "report"], [*new, "report"], trees, rounds),
        }
    return result


def run(tree: Path = REPO, n_questions: int = 10_000, rounds: int = 3) -> dict[str, Any]:
    return {**run_and_report(tree, n_questions, rounds), "overhead": overhead(tree, 5000, rounds)}


def lines(result: dict[str, Any]) -> list[str]:
    """The figures as ``make bench`` prints them."""
    out = []
    for key, what in (
        ("cached_rerun", f"cached re-run of {result['questions']:,}"),
        ("report", f"judge report of {result['questions']:,}"),
        ("overhead", f"judge overhead, {result['overhead']['items']:,} items"),
    ):
        fig = result[key]
        low, high = fig["ratio_range"]
        out.append(
            f"  {what}: {fig['ratio']}x its floor ({low}-{high} over {fig['rounds']} rounds, "
            f"load {fig['load']})"
        )
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (the code before): print --tree's cached re-run and judge report "
        "as a ratio to its, alternating, instead of the ratios to the floor",
    )
    args = parser.parse_args()
    if args.against is not None:
        print(
            json.dumps(
                before_after(
                    args.against.resolve(), args.tree.resolve(), args.questions, args.rounds
                )
            )
        )
        raise SystemExit(0)
    result = run(args.tree.resolve(), args.questions, args.rounds)
    print("\n".join(lines(result)))
    print(json.dumps(result))
