"""``bench/memory_bench.py`` (issue 35) measures what it says at a small size: the peak RSS of
a cached re-run and of ``judge report`` each in a process of its own, and the folder against
the inputs, each chunk text stored once (no timed assertion: the figures are the bench's)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.conftest import REPO


def _bench() -> ModuleType:
    sys.path.insert(0, str(REPO / "bench"))  # memory_bench imports startup_bench
    try:
        spec = importlib.util.spec_from_file_location(
            "memory_bench", REPO / "bench" / "memory_bench.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "bench"))
    return module


def test_the_bench_measures_peaks_and_the_folder_at_a_small_size() -> None:
    bench = _bench()
    result = bench.run(REPO, sizes=(40,))
    (size,) = result["sizes"]
    assert size["questions"] == 40
    for step in ("first_run", "cached_rerun", "report"):
        assert size[step]["peak_mb"] > 10  # an interpreter with the judge imported
    folder = size["folder"]
    assert folder["folder_mb"] > 0 and folder["inputs_mb"] > 0
    assert folder["ratio"] > 0
    (line, files) = bench.lines(result)
    assert line.startswith("  40 questions (load ")
    assert "peak RSS of the cached re-run" in line and "x the inputs'" in line
    assert files.startswith("    largest files: ")
