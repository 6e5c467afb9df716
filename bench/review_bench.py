"""review.html at 1,000, 10,000 and 100,000 questions: the time to its first item in headless
Chromium, beside the floor of a page that size (``JSON.parse`` of all its own data).

Each size is a generated set (``judge_bench.write_dataset``) judged once by the lexical baseline;
the folders are kept under ``--dir`` (``/tmp/review-bench`` by default: the 100,000-question run
takes a few minutes of CPU, once per machine). Its review.html is rendered again from the
folder's record by the tree measured (``--tree``: another checkout, for a before/after table),
then opened in Debian's ``chromium`` (Playwright) from ``file://``, as a reviewer opens it.

*Time to the first item* is taken in the page's own clock (milliseconds since the navigation
began): a mutation observer, added before the page's script runs, notes when the first
``section.item`` is in the document and then the next animation frame, the one that paints it.
The floor is ``JSON.parse`` of every data block of the page, timed in the same page after it
loaded: a page cannot show its data faster than it can read it whole, but a page that draws its
list first may well beat that floor. Beside them: when the whole list is read (the header
counts what is shown of every item: the filters work), when the page has loaded, and how long
the first line takes to open once it has. Wall seconds on a shared machine: the load average is
printed beside them, and the median of ``--rounds`` loads.

``python bench/review_bench.py [--sizes 1000,10000,100000] [--rounds 3] [--tree PATH]``;
``--against PATH`` loads the page another checkout renders and this one's in turns (old, new,
new, old, ...), for a before/after figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = Path(os.environ.get("BENCH_REVIEW_DIR", "/tmp/review-bench"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: Run before the page's own script (Playwright's init script, outside the page's CSP): the
#: moment the first item is in the document, and the frame that paints it.
_WATCH = """
new MutationObserver((changes, observer) => {
  if (!window.__firstItem && document.querySelector('section.item')) {
    window.__firstItem = performance.now();
    requestAnimationFrame(() => { window.__firstPaint = performance.now(); });
  }
  // The whole list read: the header counts what is shown of every item.
  const shown = document.getElementById('shown');
  if (shown && / of \\d+ shown/.test(shown.textContent)) {
    observer.disconnect();
    window.__listReady = performance.now();
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""

#: After the load: the time to open the first item of the list (its details parsed and drawn).
_OPEN = """() => {
  const row = document.querySelector('section.item .row');
  const start = performance.now();
  row.click();
  const open = !row.parentElement.querySelector('.detail').hidden;
  return {open_ms: performance.now() - start, opened: open,
          load_ms: performance.getEntriesByType('navigation')[0].loadEventStart};
}"""

#: The floor, in the loaded page: every data block parsed, as a page that reads it all must.
_FLOOR = """() => {
  const blocks = Array.from(document.querySelectorAll('script[type="application/json"]'));
  const start = performance.now();
  let size = 0;
  for (const block of blocks) { const text = block.textContent; size += text.length; JSON.parse(text); }
  return {parse_ms: performance.now() - start, chars: size, blocks: blocks.length};
}"""

#: Renders review.html again from a folder's record, with the tree on ``PYTHONPATH``.
_RENDER = """
import sys
from pathlib import Path
from judge.record.store import read_record
from judge.report.review_page import render_review_page
folder = Path(sys.argv[1])
(folder / sys.argv[2]).write_bytes(render_review_page(read_record(folder)))
"""

_MAKE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import judge_bench
from judge.cli import main
folder = Path(sys.argv[1])
toml = judge_bench.write_dataset(folder, int(sys.argv[2]))
sys.exit(main(["--config", str(toml), "run", "--backend", "lexical"]))
"""


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def report_folder(root: Path, n: int, tree: Path) -> Path:
    """The report folder of the ``n``-question set under ``root``, judged once and kept."""
    base = root / str(n)
    reports = base / "reports"
    latest = reports / "latest"
    if not latest.exists():
        base.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-c", _MAKE, str(base), str(n), str(REPO / "bench")],
            env=_env(tree),
            cwd=tree,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return reports / latest.read_text(encoding="utf-8").strip()


def render(folder: Path, tree: Path, name: str = "review.html") -> int:
    """review.html of ``folder`` rendered by ``tree`` (written as ``name`` beside it); its size
    in bytes."""
    # In the tree's folder: ``python -c`` puts the working directory first on the path.
    subprocess.run(
        [sys.executable, "-c", _RENDER, str(folder), name], env=_env(tree), cwd=tree, check=True
    )
    return (folder / name).stat().st_size


def first_item(browser: Any, page_path: Path) -> dict[str, float]:
    """One load of the page: the first item's time and paint, and the floor (milliseconds)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.add_init_script(_WATCH)
        page.goto(page_path.as_uri(), wait_until="commit", timeout=0)
        # Polled from here (the page's CSP refuses Playwright's string predicates): the times
        # are the page's own, so the polling's delay is not in them.
        times = [None, None]
        while times[1] is None:
            if errors:
                raise RuntimeError(f"{page_path}: {errors[0]}")
            time.sleep(0.05)
            times = page.evaluate("[window.__firstItem ?? null, window.__firstPaint ?? null]")
        page.wait_for_load_state("load", timeout=0)
        ready = page.evaluate("window.__listReady ?? null")
        opened = page.evaluate(_OPEN)
        floor = page.evaluate(_FLOOR)
        return {"item_ms": times[0], "paint_ms": times[1], "list_ms": ready, **opened, **floor}
    finally:
        context.close()


def _median_s(loads: list[dict[str, Any]], key: str) -> float | None:
    values = [load[key] for load in loads if load.get(key) is not None]
    return round(statistics.median(values) / 1000, 3) if values else None


def run(
    sizes: tuple[int, ...] = (1000, 10000, 100000),
    rounds: int = 3,
    tree: Path = REPO,
    root: Path = DEFAULT_DIR,
) -> dict[str, Any]:
    """Each size's median time to the first item, the floor, and their ratio."""
    if CHROMIUM is None:
        return {"skipped": "chromium not installed (apt-get install chromium)"}
    from playwright import sync_api

    from tests.report.review_screens import chromium  # the tests' own launch options

    results: dict[str, Any] = {}
    for n in sizes:
        folder = report_folder(root, n, tree)
        size = render(folder, tree)
        with chromium(sync_api) as browser:
            loads = [first_item(browser, folder / "review.html") for _ in range(rounds)]
        paint = statistics.median(load["paint_ms"] for load in loads) / 1000
        floor = statistics.median(load["parse_ms"] for load in loads) / 1000
        results[str(n)] = {
            "page_mb": round(size / 1e6, 1),
            "first_item_s": round(paint, 3),
            "first_item_range": [
                round(min(x["paint_ms"] for x in loads) / 1000, 3),
                round(max(x["paint_ms"] for x in loads) / 1000, 3),
            ],
            "list_ready_s": _median_s(loads, "list_ms"),
            "loaded_s": _median_s(loads, "load_ms"),
            "open_item_s": _median_s(loads, "open_ms"),
            "json_parse_s": round(floor, 3),
            "ratio": round(paint / floor, 2) if floor else None,
            "rounds": rounds,
            "load_average": round(os.getloadavg()[0], 1),
        }
    return results


def compare(
    sizes: tuple[int, ...], rounds: int, old: Path, tree: Path = REPO, root: Path = DEFAULT_DIR
) -> dict[str, Any]:
    """The page rendered by ``old`` (another checkout) against this tree's, loaded in turns
    (old, new, new, old, ...) in one browser: each one's median time to the first item."""
    from playwright import sync_api

    from tests.report.review_screens import chromium

    results: dict[str, Any] = {}
    for n in sizes:
        folder = report_folder(root, n, tree)
        pages = {"old": folder / "review-old.html", "new": folder / "review.html"}
        render(folder, old, pages["old"].name)
        render(folder, tree, pages["new"].name)
        times: dict[str, list[float]] = {"old": [], "new": []}
        with chromium(sync_api) as browser:
            for turn in range(rounds):
                for side in ("old", "new") if turn % 2 == 0 else ("new", "old"):
                    times[side].append(first_item(browser, pages[side])["paint_ms"] / 1000)
        results[str(n)] = {
            side: {
                "first_item_s": round(statistics.median(t), 3),
                "range": [round(min(t), 3), round(max(t), 3)],
            }
            for side, t in times.items()
        } | {
            "speed_up": round(statistics.median(times["old"]) / statistics.median(times["new"]), 1),
            "load_average": round(os.getloadavg()[0], 1),
        }
    return results


def lines(results: dict[str, Any]) -> list[str]:
    """The figures as ``make bench`` prints them, one line a size."""
    if "skipped" in results:
        return [f"  skipped: {results['skipped']}"]
    return [
        f"  {int(n):>7,} questions ({r['page_mb']} MB): first item {r['first_item_s']} s "
        f"(range {r['first_item_range'][0]}-{r['first_item_range'][1]} over {r['rounds']}), "
        f"{r['ratio']}x the JSON.parse of the page's data ({r['json_parse_s']} s); whole list "
        f"read {r['list_ready_s']} s, page loaded {r['loaded_s']} s, an item opens in "
        f"{r['open_item_s']} s; load {r['load_average']}"
        for n, r in results.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument(
        "--against", type=Path, help="another checkout: its page and this one's, in turns"
    )
    args = parser.parse_args()
    sizes = tuple(int(n) for n in args.sizes.split(","))
    if args.against is not None:
        print(
            json.dumps(
                compare(sizes, args.rounds, args.against.resolve(), args.tree.resolve(), args.dir)
            )
        )
        return
    results = run(sizes, args.rounds, args.tree.resolve(), args.dir)
    print("\n".join(lines(results)))
    print(json.dumps(results))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
