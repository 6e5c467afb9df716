"""The Ray Data recipe of docs/batch.md run for real: an export, `examples/ray_batch.py` in a
local Ray (its HTTP processor pointed at llama.cpp's server on loopback), `judge batch import`
of what Ray wrote, then a run that judges nothing and agrees with a direct run.

Ray is the ``ray`` extra (``make setup`` installs it). Its start-up and its worker processes
cost about 10 s on 2 cores; the two prompts cost the rest (about a minute each way).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from judge.cli import main
from judge.judging.backends.openai_batch import read_manifest
from judge.judging.grading import JudgeProgress
from judge.pipeline.batch import export_batch
from judge.pipeline.evaluate import Hooks, evaluate
from tests.conftest import REPO
from tests.judging.backends.test_batch_roundtrip import (
    QUESTION_IDS,
    _shown,
    same_start,
    sample_subset,
)

RECIPE = REPO / "examples" / "ray_batch.py"

#: Ray's own modules still use pydantic's class-based config (a DeprecationWarning at import).
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*")]


@pytest.fixture(scope="module")
def recipe() -> Iterator[ModuleType]:
    """``examples/ray_batch.py`` as a module, with a local Ray of 2 CPUs started for it and shut
    down after (no worker process outlives the tests).

    The recipe's functions are pickled by value: Ray's workers could not import a module
    loaded from a file path (run as a script, the functions are ``__main__``'s, which Ray
    pickles by value anyway).
    """
    pytest.importorskip(
        "ray.data.llm", reason="Ray Data is the 'ray' extra: pip install -e '.[ray]'"
    )
    import ray
    import ray.cloudpickle

    spec = importlib.util.spec_from_file_location("ray_batch", RECIPE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["ray_batch"] = module
    spec.loader.exec_module(module)
    ray.cloudpickle.register_pickle_by_value(module)
    saved = {key: os.environ.get(key) for key in ("RAY_USAGE_STATS_ENABLED", "RAY_DEDUP_LOGS")}
    os.environ.update({"RAY_USAGE_STATS_ENABLED": "0", "RAY_DEDUP_LOGS": "0"})
    try:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
        ray.data.DataContext.get_current().enable_progress_bars = False
        yield module
    finally:
        ray.shutdown()
        ray.cloudpickle.unregister_pickle_by_value(module)
        del sys.modules["ray_batch"]
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_the_ray_recipe_round_trip_judges_nothing_afterwards_and_agrees_with_a_direct_run(
    recipe: ModuleType, llama_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = sample_subset(tmp_path / "ray", llama_server, "ray.sqlite3")
    export = export_batch(config)
    n = len(QUESTION_IDS)
    assert (export.pending, export.cached) == (n, 0)

    same_start(llama_server)
    out = recipe.run(export.out_dir, f"{llama_server}/chat/completions", concurrency=1)
    assert out == export.out_dir / "ray-results.jsonl"
    lines = [json.loads(raw) for raw in out.read_text(encoding="utf-8").splitlines()]
    assert export.manifest
    assert sorted(line["custom_id"] for line in lines) == sorted(
        read_manifest(export.manifest).items
    )
    assert all(line["response"]["status_code"] == 200 for line in lines)
    with pytest.raises(FileExistsError, match=r"ray-results\.jsonl exists"):
        recipe.run(export.out_dir, f"{llama_server}/chat/completions")

    # The import exactly as docs/batch.md gives it (the manifest beside the file is the export's).
    capsys.readouterr()
    assert (
        main(["--config", str(tmp_path / "ray" / "judge.toml"), "batch", "import", str(out)]) == 0
    )
    said = capsys.readouterr().out
    assert f"imported {n} replies" in said and "0 items of the export still without" in said

    progress: list[JudgeProgress] = []
    from_cache = evaluate(config, backend="openai", hooks=Hooks(on_judging=progress.append))
    assert progress[-1] == JudgeProgress(n, n, n, progress[-1].not_ok)  # 0 judged
    assert all(v.cached for v in from_cache.report.verdicts)
    assert export_batch(config).pending == 0
    # And `judge run` says so before it judges nothing.
    assert (
        main(["--config", str(tmp_path / "ray" / "judge.toml"), "run", "--backend", "openai"]) == 0
    )
    said = "".join(capsys.readouterr())
    assert f"{n} of {n} already in the cache; nothing to judge" in said
    assert f"({n} from the cache)" in said
    # Each verdict is made from the reply Ray wrote for its item.
    written = {
        line["custom_id"]: line["response"]["body"]["choices"][0]["message"]["content"]
        for line in lines
    }
    assert sorted(v.raw_reply for v in from_cache.report.verdicts) == sorted(written.values())

    # Ray sent the bodies as the export wrote them: the same replies as a direct run.
    direct_config = sample_subset(tmp_path / "direct", llama_server, "direct.sqlite3")
    same_start(llama_server)
    direct = evaluate(direct_config, backend="openai")
    assert not any(v.cached for v in direct.report.verdicts)
    assert from_cache.report.manifest.fingerprints.judge == (
        direct.report.manifest.fingerprints.judge
    )
    through_ray, directly = _shown(from_cache.report.verdicts), _shown(direct.report.verdicts)
    differ = {
        qid: {k: (v, directly[qid][k]) for k, v in shown.items() if directly[qid][k] != v}
        for qid, shown in through_ray.items()
    }
    assert through_ray == directly, differ
