"""`make bench`: every benchmark in one run; figures go to reports/bench.json.

The numbers are quoted in docs/benchmarks.md (with how long the whole takes). Run on an
otherwise idle machine. The embedded comparison and prompt-prefix count judge the sample set with
Gemma 3 270M on the CPU; BENCH_SKIP_EMBEDDED=1 leaves them out.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import batch_bench
import chunk_ppi_sim
import floor_bench
import fuzz_bench
import gate_sim
import history_bench
import judge_bench
import memory_bench
import ppi_sim
import prefix_bench
import retrieval_bench
import review_bench
import startup_bench
import sweep_sim


def _medians(timed: dict[str, Any]) -> str:
    """A timed command's median of its runs, with the CPU range (``judge_bench._summary``)."""
    low, high = timed["cpu_range"]
    return (
        f"  median {timed['seconds']} s ({timed['cpu_seconds']} s of CPU, {low}-{high} over "
        f"{timed['runs']} runs)"
    )


def main() -> None:
    results: dict[str, Any] = {}
    print("start-up: `judge --help` in a fresh interpreter, median of 9 (target: < 0.5 s)")
    results["startup"] = s = startup_bench.run()
    print(
        f"  judge --help {s['help_s']} s; import judge {s['import_s']} s; "
        f"bare python {s['python_s']} s"
    )
    print(
        "retrieval scoring: 100,000 questions x 100 chunks (target: >= 5x pytrec_eval at any load)"
    )
    results["retrieval"] = r = retrieval_bench.run()
    print(
        f"  judge       {r['judge_qps']:>10,} questions/s  ({r['judge_s']} s)\n"
        f"  pytrec_eval {r.get('pytrec_eval_qps', 0):>10,} questions/s  ({r.get('pytrec_eval_s')} s)\n"
        f"  speed-up    {r.get('speedup')}x (range {r.get('speedup_range')} over {r.get('pairs')} "
        f"alternating pairs, load {r.get('load_average')}); max |difference| on every metric "
        f"{r.get('max_abs_diff')}"
    )
    print("judge overhead, zero-latency backend, cache writes included (target: >= 2,000 items/s)")
    results["judge_overhead"] = o = judge_bench.overhead()
    print(
        f"  {o['items_per_s']:,} items/s ({o['items']} items in {o['seconds']} s, "
        f"{o['cpu_seconds']} s of CPU)"
    )
    print("cached re-run of 1,000 items, start-up included (target: < 2 s)")
    results["cached_rerun"] = c = judge_bench.cached_rerun()
    print(_medians(c))
    print("cached re-run of 10,000 items, start-up and comparison included (target: < 3 s)")
    results["cached_rerun_10k"] = c = judge_bench.cached_rerun(10_000)
    print(_medians(c))
    print("judge report re-rendering a 10,000-item folder, start-up included (target: < 2 s)")
    results["rerender_10k"] = r = judge_bench.rerender(10_000)
    print(_medians(r))
    print(
        "speed as a ratio to the floor (the reads and writes a command cannot avoid, measured in "
        "the same run, alternating): cached 10,000-question re-run, judge report of it, judge "
        "overhead"
    )
    results["floor"] = f = floor_bench.run()
    print("\n".join(floor_bench.lines(f)))
    sizes = tuple(
        int(n) for n in os.environ.get("BENCH_MEMORY_QUESTIONS", "10000,100000").split(",")
    )
    print(
        "peak memory of a cached re-run and of judge report, and the folder against the inputs "
        "(targets: <= 1 GB, <= 4x; BENCH_MEMORY_QUESTIONS=10000 runs one size)"
    )
    results["memory"] = m = memory_bench.run(sizes=sizes)
    print("\n".join(memory_bench.lines(m)))
    print("loopback server, 0.2 s per reply, N slots, concurrency N (target: >= 90 % of N / delay)")
    results["concurrency"] = rows = [
        judge_bench.concurrency(slots=n, n_items=20 * n) for n in (1, 4, 8)
    ]
    for row in rows:
        print(
            f"  N={row['slots']}: {row['items_per_s']} items/s of {row['ideal_items_per_s']} ideal "
            f"({row['share_of_ideal']:.1%})"
        )
    print(
        "regression gate on simulated 30-night seasons (sample-shaped 12/8/5/5 and 10-question "
        "3/3/2/2 sets), previous rule vs new; one night's checks of a 10,000-question run timed"
    )
    results["gate"] = gate_sim.run()
    print("\n".join(gate_sim.describe(results["gate"])))
    print("corrected estimates: coverage of the interval shown, per regime (target >= 94 %)")
    results["ppi"] = ppi_sim.run()
    print("\n".join(ppi_sim.describe(results["ppi"])))
    print("corrected recall@5 from chunk grades: coverage per regime (target >= 93 %)")
    results["chunk_ppi"] = chunk_ppi_sim.run()
    print("\n".join(chunk_ppi_sim.describe(results["chunk_ppi"])))
    print("guarded sweep on synthetic golden sets: adoption under the null, detection of a gain")
    results["sweep"] = sweep_sim.run()
    print("\n".join(sweep_sim.describe(results["sweep"])))
    print("batch export and import, 100,000 items (targets: export < 30 s, import < 60 s)")
    results["batch"] = b = batch_bench.run()
    print("\n".join(batch_bench.describe(b)))
    nights = int(os.environ.get("BENCH_HISTORY_NIGHTS", "365"))
    questions = int(os.environ.get("BENCH_HISTORY_QUESTIONS", "10000"))
    print(
        f"history.html: the season of {nights} nights x {questions:,} questions built and "
        "rendered from the nights' summaries, as a ratio to reading them and to reading every "
        "values.json (BENCH_HISTORY_NIGHTS and "
        "BENCH_HISTORY_QUESTIONS make it smaller)"
    )
    results["history"] = h = history_bench.run(nights, questions, rounds=1)
    print("\n".join(history_bench.lines(h)))
    print("review.html: time to the first item in headless Chromium (target: < 2 s at any size)")
    results["review"] = v = review_bench.run()
    print("\n".join(review_bench.lines(v)))
    print("error boundary: mutated imports and state files (target: exit 0 or a located exit 2)")
    results["fuzz"] = z = fuzz_bench.run()
    print("\n".join(fuzz_bench.describe(z)))
    if os.environ.get("BENCH_SKIP_EMBEDDED") != "1":
        print(
            "embedded Gemma 3 270M on the sample set: harness vs bare llama-cpp-python "
            "(target: harness adds < 5 %)"
        )
        results["embedded"] = e = judge_bench.embedded()
        print(
            f"  harness {e['harness_items_per_min']} items/min, bare {e['bare_items_per_min']} "
            f"items/min, overhead {e['harness_overhead']:+.1%}"
        )
        print(
            "embedded prompt tokens evaluated per item in `judge run` (llama.cpp reuses the "
            "rubric's prefix from the item before)"
        )
        results["prefix"] = p = prefix_bench.run()
        print(
            f"  {p['calls']} items: {p['prompt_tokens_median']} prompt tokens given, "
            f"{p['evaluated_tokens_median']} evaluated (medians; the first item all "
            f"{p['first_call'][0]})"
        )
    out = Path(__file__).resolve().parent.parent / "reports" / "bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
