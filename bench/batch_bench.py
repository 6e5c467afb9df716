"""Batch export and import (issue 13): 100,000 pending items out, 100,000 results back in.

Synthetic data, no model: a generated golden set, corpus and run of N questions
(``judge_bench.write_dataset``, 10 chunks retrieved, context_k 5), nothing cached.

1. export: ``judge.pipeline.batch.export_batch`` end to end, as ``judge batch export`` runs it: the
   inputs loaded and validated, the items built, the cache looked up, every prompt rendered,
   the request files and the manifest written. Target: < 30 s for 100,000 items.
2. import: the output file of a fake engine that answered every request with a valid verdict
   (OpenAI Batch output shape, written before the clock starts), read by
   ``judge.pipeline.batch.import_batch``: every line parsed and checked, every reply stored.
   Target: < 60 s for 100,000 results. Then the same file again (everything already there).

3. against its floor (issue 35): ``judge batch export`` as a user runs it (a fresh process,
   start-up included) against the work it cannot avoid: the same input bytes read and parsed
   with ``json.loads`` line by line, and the same output bytes (the request files and the
   manifest) written atomically (``floor_bench._FLOOR``). Alternating rounds (export, floor,
   floor, export), CPU seconds of each child: the median ratio, its range and the load average.

Run alone with ``.venv/bin/python bench/batch_bench.py [N] [--rounds R] [--tree PATH]``
(``--tree``: another checkout of the judge, for a before/after figure; only the floor ratio).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from floor_bench import _FLOOR, _cpu, _dataset, summary
from judge_bench import write_dataset

from judge.config import load_config
from judge.pipeline.batch import export_batch, import_batch

REPO = Path(__file__).resolve().parent.parent

VERDICT = json.dumps(
    {"evidence": "", "faithfulness": 2, "relevance": 2, "note": "ok"}, ensure_ascii=False
)


def _engine_output(requests: list[Path], out: Path) -> int:
    """One OpenAI Batch output line per request, as an engine writes them (not timed)."""
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for path in requests:
            with path.open(encoding="utf-8") as lines:
                for line in lines:
                    key = json.loads(line)["custom_id"]
                    body = {
                        "id": f"chatcmpl-{count}",
                        "object": "chat.completion",
                        "created": 1764417600,
                        "model": "gemma-3-12b-it",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": VERDICT},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 900,
                            "completion_tokens": 40,
                            "total_tokens": 940,
                        },
                    }
                    output = {
                        "id": f"batch_req_{count}",
                        "custom_id": key,
                        "response": {
                            "status_code": 200,
                            "request_id": f"req_{count}",
                            "body": body,
                        },
                        "error": None,
                    }
                    handle.write(json.dumps(output, ensure_ascii=False) + "\n")
                    count += 1
    return count


def run(n_items: int = 100_000, rounds: int = 3) -> dict[str, Any]:
    floor = against_floor(n_items, rounds)
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(write_dataset(Path(tmp), n_items))
        start = time.perf_counter()
        export = export_batch(config)
        export_s = time.perf_counter() - start
        assert export.pending == n_items, export
        request_mb = sum(f.bytes for f in export.files) / 1024 / 1024
        out = export.out_dir / "results.jsonl"
        assert _engine_output(export.paths, out) == n_items
        result_mb = out.stat().st_size / 1024 / 1024
        start = time.perf_counter()
        imported = import_batch(config, [out])
        import_s = time.perf_counter() - start
        assert (imported.imported, imported.problems, imported.still_pending) == (n_items, [], 0)
        start = time.perf_counter()
        again = import_batch(config, [out])
        again_s = time.perf_counter() - start
        assert (again.imported, again.already) == (0, n_items)
        assert export_batch(config).pending == 0
    return {
        "items": n_items,
        "export_s": round(export_s, 2),
        "export_items_per_s": round(n_items / export_s),
        "request_files": len(export.files),
        "request_mb": round(request_mb, 1),
        "import_s": round(import_s, 2),
        "import_items_per_s": round(n_items / import_s),
        "result_mb": round(result_mb, 1),
        "import_again_s": round(again_s, 2),
        "floor": floor,
    }


def against_floor(n_items: int = 100_000, rounds: int = 3, tree: Path = REPO) -> dict[str, Any]:
    """``judge batch export`` of ``n_items`` (``tree``'s judge) against its floor, alternating
    (export, floor, floor, export) ``rounds`` times: CPU seconds of each child process."""
    with tempfile.TemporaryDirectory() as tmp:
        toml = _dataset(tree, Path(tmp), n_items)
        inputs = os.pathsep.join(
            str(Path(tmp) / f"{name}.jsonl") for name in ("questions", "corpus", "run")
        )
        reference = Path(tmp) / "reference"  # the export the floor writes again, byte for byte
        export = [sys.executable, "-m", "judge", "--config", str(toml), "batch", "export"]
        _cpu([*export, "--out", str(reference)], tree)  # untimed: writes the bytecode too
        floor = [sys.executable, "-c", _FLOOR, inputs, "", str(reference), str(Path(tmp) / "f")]
        ratios, exports, floors = [], [], []
        for number in range(rounds):
            outs = [Path(tmp) / f"out{number}-{side}" for side in (0, 1)]
            first, _ = _cpu([*export, "--out", str(outs[0])], tree)
            low_a, _ = _cpu(floor, tree)
            low_b, _ = _cpu(floor, tree)
            second, _ = _cpu([*export, "--out", str(outs[1])], tree)
            for out in outs:  # 350 MB each at 100,000 items
                shutil.rmtree(out)
            exports += [first, second]
            floors += [low_a, low_b]
            ratios.append((first + second) / (low_a + low_b))
    return {"items": n_items, **summary(ratios, {"export_cpu_s": exports, "floor_cpu_s": floors})}


def floor_line(floor: dict[str, Any]) -> str:
    """The export against its floor, as ``make bench`` prints it."""
    low, high = floor["ratio_range"]
    return (
        f"  judge batch export of {floor['items']:,}: {floor['ratio']}x its floor ({low}-{high} "
        f"over {floor['rounds']} rounds, load {floor['load']}; {floor['export_cpu_s']} s of CPU "
        f"against {floor['floor_cpu_s']} s; target <= 4x)"
    )


def describe(r: dict[str, Any]) -> list[str]:
    against = [floor_line(r["floor"])] if "floor" in r else []
    return [
        *against,
        f"  export {r['items']:,} items: {r['export_s']} s ({r['export_items_per_s']:,} items/s; "
        f"{r['request_files']} files, {r['request_mb']} MB)",
        f"  import {r['items']:,} results: {r['import_s']} s ({r['import_items_per_s']:,} items/s; "
        f"{r['result_mb']} MB); the same file again: {r['import_again_s']} s",
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", nargs="?", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", type=Path, help="only the floor ratio, of this checkout")
    args = parser.parse_args()
    if args.tree is not None:
        figure = against_floor(args.items, args.rounds, args.tree.resolve())
        print(floor_line(figure))
        print(json.dumps(figure))
    else:
        print(
            f"batch export and import, {args.items:,} items (targets: export < 30 s, "
            "import < 60 s, export <= 4x its floor)"
        )
        print("\n".join(describe(run(args.items, args.rounds))))
