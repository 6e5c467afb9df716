"""``judge align`` with the embedded Gemma 3 270M on both shipped samples, and what the
exemplars cost per item with and without llama.cpp's prompt-prefix reuse.

For each sample: ``judge align`` (variants of ``--k`` exemplars, ``--folds`` folds, within
``--budget`` estimated tokens) in a temporary folder (its own cache, reports and a copy of the
prompt, so an adoption writes there), printed as the command prints it. Then the cost: the
variant with ``k`` exemplars chosen from every label judges the first ``--cost-items`` answers
twice with a fresh cache, once as llama.cpp runs by default (the evaluated tokens of the
previous request are reused up to the longest common prefix: the instructions and exemplars)
and once with the model's token state reset before every request (no reuse); the current prompt
once, for scale. Seconds per item are the backend's own latency, first item left out (it fills
the cache in both).

    PYTHONPATH=. .venv/bin/python bench/align_real.py [--k 1 2] [--folds 3] [--budget 1700]
        [--only sample-en] [--limit N] [--cost-items 6] [--cost-only]

The embedded model is a base model with no judging signal zero-shot: these numbers show the
mechanics and the cost, not what exemplars do for a real judge.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from judge.audit.align import choose_exemplars, examples_of, variant_prompt
from judge.config import Config, load_config
from judge.judging.backends.embedded import EmbeddedBackend
from judge.judging.cache import VerdictCache
from judge.judging.items import build_items
from judge.judging.judge import Judge
from judge.judging.prompts import Prompt, load_prompt
from judge.judging.tasks.answer import ANSWER
from judge.pipeline.align import AlignSettings, align, aligned_lines
from judge.pipeline.inputs import load_inputs

REPO = Path(__file__).resolve().parent.parent
SAMPLES = {
    "sample (Japanese)": REPO / "judge.toml",
    "sample-en": REPO / "golden/sample-en/judge.toml",
}


def _config(toml: Path, folder: Path, limit: int | None) -> Config:
    """The sample's configuration in ``folder``; with ``limit``, its run and golden questions
    cut to the first ``limit`` answers that have labels (the others have no examples to
    give; their labels are then retired, with a warning)."""
    prompt = folder / "prompts" / "judge.v1.md"
    prompt.parent.mkdir(parents=True)
    shutil.copyfile(REPO / "prompts" / "judge.v1.md", prompt)
    config = load_config(toml).with_overrides(
        judge={"backend": "embedded", "cache_path": folder / "cache.sqlite3", "prompt": prompt},
        reports={"dir": folder / "reports"},
    )
    if limit is None or config.data.run is None:
        return config
    labelled = {json.loads(line)["question_id"] for line in _lines(config.data.labels)}
    records = [json.loads(line) for line in _lines(config.data.run)]
    meta = [r for r in records if "id" not in r]
    kept = [r for r in records if r.get("id") in labelled][:limit]
    run = folder / "run.jsonl"
    run.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in meta + kept), encoding="utf-8"
    )
    ids = {r["id"] for r in kept}
    questions = folder / "questions.jsonl"
    questions.write_text(
        "".join(
            line + "\n" for line in _lines(config.data.questions) if json.loads(line)["id"] in ids
        ),
        encoding="utf-8",
    )
    return config.with_overrides(data={"run": run, "questions": questions})


def _lines(path: Path | None) -> list[str]:
    assert path is not None
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class _Reset:
    """The embedded backend with llama.cpp's token state cleared before every request."""

    def __init__(self, inner: EmbeddedBackend) -> None:
        self.inner = inner
        self.identity = inner.identity

    def complete(self, request: Any) -> Any:
        reset: Any = self.inner.llm.reset
        reset()
        return self.inner.complete(request)

    def close(self) -> None:
        pass


def _seconds(backend: Any, prompt: Prompt, items: list[Any], cache: Path) -> tuple[float, float]:
    """Mean latency and prompt tokens per item, the first item left out."""
    store = VerdictCache(cache)
    try:
        results = Judge(backend, store).run(ANSWER, prompt, items).results
    finally:
        store.close()
    rest = results[1:]
    tokens = [v.prompt_tokens for v in rest if v.prompt_tokens is not None]
    return statistics.mean(v.latency_s for v in rest), statistics.mean(tokens) if tokens else 0.0


def _cost(config: Config, k: int, budget: int, count: int, folder: Path) -> list[str]:
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    examples = examples_of(items, inputs.labels.current)
    base = load_prompt(config.judge.prompt)
    chosen = choose_exemplars(examples, k, budget, base.uses_reference)
    variant = variant_prompt(base, chosen, f"judge+k{k}.md")
    shown = {e.question_id for e in chosen}
    asked = [item for item in items if item.question_id not in shown][:count]
    backend = EmbeddedBackend(config.judge.embedded)
    try:
        plain = _seconds(backend, base, asked, folder / "cost-current.sqlite3")
        reused = _seconds(backend, variant, asked, folder / "cost-prefix.sqlite3")
        reset = _seconds(_Reset(backend), variant, asked, folder / "cost-reset.sqlite3")
    finally:
        backend.close()
    return [
        f"cost per item ({len(asked) - 1} items after the first): current prompt "
        f"{plain[0]:.1f} s ({plain[1]:.0f} prompt tokens); {len(chosen)} exemplar(s) with the "
        f"prefix reused {reused[0]:.1f} s ({reused[1]:.0f} tokens); without reuse "
        f"{reset[0]:.1f} s"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1700)
    parser.add_argument(
        "--cost-items", type=int, default=6, help="answers timed for the cost (0: skip)"
    )
    parser.add_argument(
        "--cost-only", action="store_true", help="time the cost only (no judge align)"
    )
    parser.add_argument("--only", choices=list(SAMPLES), help="one sample only")
    parser.add_argument("--limit", type=int, help="the first N labelled answers only")
    args = parser.parse_args()
    settings = AlignSettings(tuple(args.k), args.folds, args.budget, write=True)
    for name, toml in SAMPLES.items():
        if args.only and name != args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            config = _config(toml, folder, args.limit)
            print(f"## {name}", flush=True)
            if not args.cost_only:
                for line in aligned_lines(align(config, settings)):
                    print(line, flush=True)
            if args.cost_items > 1:
                for line in _cost(config, max(args.k), args.budget, args.cost_items, folder):
                    print(line, flush=True)


if __name__ == "__main__":
    main()
