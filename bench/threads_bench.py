"""llama.cpp generation threads for the embedded judge: 1 against 2, measured, not assumed.

The first sample item's prompt as ``judge run`` renders it, then 30 generated tokens, each in a
fresh process with ``n_threads`` 1 or 2 (llama-cpp-python's ``n_threads_batch``, the prompt's
threads, stays at its default: every core), alternating 1, 2, 2, 1 per round. Prints each
call's wall and CPU seconds with the load average, then the medians.

``python bench/threads_bench.py [--rounds R]``. On this 2-core machine (docs/benchmarks.md):
about equal nearly idle, a second thread four to five times slower under load (llama.cpp's
threads wait by spinning), so the default, half the cores, stays.
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

REPO = Path(__file__).resolve().parent.parent

_CHILD = r"""
import sys, time, llama_cpp
from judge.config import load_config
from judge.judging.backends.embedded import resolve_model
path, _ = resolve_model(load_config(sys.argv[3]).judge.embedded)
llm = llama_cpp.Llama(model_path=str(path), n_ctx=4096, n_threads=int(sys.argv[1]), verbose=False)
prompt = open(sys.argv[2], encoding="utf-8").read()
start = time.perf_counter()
llm.create_completion(prompt=prompt, max_tokens=30, temperature=0.0)
print(time.perf_counter() - start)
"""


def _prompt() -> str:
    """The first sample item's prompt, rendered by the shipped answer prompt."""
    from judge.config import load_config
    from judge.judging.items import build_items
    from judge.judging.prompts import load_prompt
    from judge.pipeline.inputs import load_inputs

    config = load_config(REPO / "judge.toml")
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    return load_prompt(REPO / "prompts" / "judge.v1.md").render_item(items[0])


def _one(threads: int, prompt: Path) -> tuple[float, float]:
    """Wall seconds of the call and CPU seconds of the child (model load included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-c", _CHILD, str(threads), str(prompt), str(REPO / "judge.toml")]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return float(done.stdout.strip().splitlines()[-1]), cpu


def run(rounds: int = 2) -> dict[str, Any]:
    calls: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        prompt = Path(tmp) / "prompt.txt"
        prompt.write_text(_prompt(), encoding="utf-8")
        for _ in range(rounds):
            for threads in (1, 2, 2, 1):
                calls[threads].append(_one(threads, prompt))
                loads.append(os.getloadavg()[0])
                print(threads, calls[threads][-1], loads[-1], flush=True)
    return {
        f"{n}_thread{'s' if n > 1 else ''}": {
            "wall_s_median": round(statistics.median(w for w, _ in got), 2),
            "wall_s_range": [round(min(w for w, _ in got), 2), round(max(w for w, _ in got), 2)],
            "cpu_s_median": round(statistics.median(c for _, c in got), 2),
        }
        for n, got in calls.items()
    } | {"load": [round(min(loads), 1), round(max(loads), 1)], "rounds": rounds}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    print(json.dumps(run(parser.parse_args().rounds), indent=1))
