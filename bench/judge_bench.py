"""Judge-stage benchmarks (issue 3): harness overhead, cached re-run, concurrency, embedded.

1. overhead: a zero-latency backend judging N generated items into a fresh cache: everything
   the harness does per item (render, cache write, parse, evidence check), in items/s.
2. cached re-run: ``judge run`` as a subprocess on 1,000 and on 10,000 items that are all in
   the cache, start-up, report folder and tables included (the median of five timed runs).
3. concurrency: a loopback server speaking Ollama's API that answers after a fixed delay with
   N slots; throughput at concurrency N against the ideal N / delay.
4. embedded: the sample set judged by the harness with the real Gemma 3 270M, against the same
   prompts sent straight to llama-cpp-python in a loop (same grammar, same settings).
5. rerender: ``judge report`` as a subprocess re-rendering a 10,000-item folder from its record
   (the median of five timed runs).
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judge.config import Config, load_config
from judge.config_backends import OllamaConfig
from judge.judging.backends.base import BackendIdentity, JudgeRequest
from judge.judging.cache import VerdictCache
from judge.judging.items import build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from judge.judging.verdict import Reply
from judge.pipeline.inputs import load_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import loopback_ollama
from startup_bench import USER_ENV  # every command here runs from bytecode, as a user's does

REPO = Path(__file__).resolve().parent.parent
PROMPT = REPO / "prompts" / "judge.v1.md"
WORDS = [
    "設定",
    "バックアップ",
    "復元",
    "テーマ",
    "ウィジェット",
    "アカウント",
    "料金",
    "同期",
    "通知",
    "写真",
]


def write_dataset(folder: Path, n_questions: int, seed: int = 3) -> Path:
    """A generated golden set, corpus and run (Japanese-like text) with a judge.toml."""
    rng = random.Random(seed)
    chunks = []
    for i in range(300):
        sentences = [
            f"{rng.choice(WORDS)}は{rng.randint(1, 99)}日ごとに{rng.choice(WORDS)}されます。"
            for _ in range(4)
        ]
        chunks.append(
            {"chunk_id": f"doc{i % 20}/h{i}", "doc": f"doc{i % 20}", "text": "".join(sentences)}
        )
    questions, run = [], [{"run_meta": {"system": "bench"}}]
    for i in range(n_questions):
        relevant = rng.sample(chunks, 2)
        questions.append(
            {
                "id": f"q{i}",
                "type": rng.choice(["factual", "procedural", "negative"]),
                "question": f"{rng.choice(WORDS)}について質問です {i}",
                "answerable": True,
                "relevant_chunks": [c["chunk_id"] for c in relevant],
            }
        )
        retrieved = [*relevant, *rng.sample(chunks, 8)]
        ids = list(dict.fromkeys(c["chunk_id"] for c in retrieved))
        run.append(
            {
                "id": f"q{i}",
                "retrieved": [{"chunk_id": c} for c in ids],
                "answer": relevant[0]["text"][:40] + f" 回答{i}",
            }
        )
    for name, records in (("questions", questions), ("corpus", chunks), ("run", run)):
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
    toml = folder / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\nrun = "run.jsonl"\n'
        f'[judge]\nprompt = "{PROMPT}"\ncache_path = "cache.sqlite3"\n[reports]\ndir = "reports"\n',
        encoding="utf-8",
    )
    return toml


class ZeroLatency:
    """Answers instantly with a valid verdict quoting the first chunk's first sentence."""

    identity = BackendIdentity(kind="bench", model="zero-latency", digest=None, options={})

    def complete(self, request: JudgeRequest) -> Reply:
        quote = request.context[0].text.split("。")[0] + "。"
        text = json.dumps(
            {"evidence": quote, "faithfulness": 2, "relevance": 2, "note": "ok"}, ensure_ascii=False
        )
        return Reply(text=text, finish_reason="stop")


def overhead(n_items: int = 5000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(write_dataset(Path(tmp), n_items))
        inputs = load_inputs(config)
        items = build_items(inputs.golden, inputs.run, 5)
        cache = VerdictCache(Path(tmp) / "overhead.sqlite3")
        start, cpu_start = time.perf_counter(), time.process_time()
        outcome = judge_items(items, ZeroLatency(), load_prompt(PROMPT), cache, concurrency=1)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        cache.close()
    assert all(
        v.status == "ok" and v.match is not None and v.match.found
        for v in outcome.verdicts.values()
    )
    return {
        "items": n_items,
        "seconds": round(elapsed, 3),
        "cpu_seconds": round(cpu, 3),
        "items_per_s": round(n_items / elapsed),
    }


JUDGE_CLI = [sys.executable, "-m", "judge"]


def _timed(command: list[str]) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run ``command``; its output, wall-clock seconds and CPU seconds (user + system).

    The CPU time is the steadier figure on a shared machine: other jobs stretch the wall
    clock of a process that waits for a core, much less the work it does.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        command, check=True, capture_output=True, text=True, cwd=REPO, env=USER_ENV
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, elapsed, cpu


def _summary(n_items: int, timings: list[tuple[float, float]]) -> dict[str, Any]:
    """The median of several timed runs (wall and CPU seconds), with the CPU range: one run on a
    shared machine can be a third slower than the next for nothing the code did."""
    cpu = sorted(c for _, c in timings)
    return {
        "items": n_items,
        "runs": len(timings),
        "seconds": round(statistics.median(w for w, _ in timings), 3),
        "cpu_seconds": round(statistics.median(cpu), 3),
        "cpu_range": [round(cpu[0], 3), round(cpu[-1], 3)],
    }


def cached_rerun(n_items: int = 1000, repeats: int = 5) -> dict[str, Any]:
    """``judge run`` timed end to end ``repeats`` times on ``n_items`` that a first, untimed run
    cached (its median and CPU range).

    Each timed run also re-reads the previous run's folder for its comparison, as a nightly
    does.
    """
    timings = []
    with tempfile.TemporaryDirectory() as tmp:
        toml = write_dataset(Path(tmp), n_items)
        command = [*JUDGE_CLI, "--config", str(toml), "run", "--backend", "lexical"]
        subprocess.run(command, check=True, capture_output=True, cwd=REPO, env=USER_ENV)
        for _ in range(repeats):
            done, elapsed, cpu = _timed(command)
            assert f"({n_items} from the cache)" in done.stdout, done.stdout[-500:]
            timings.append((elapsed, cpu))
    return _summary(n_items, timings)


def rerender(n_items: int = 10_000, repeats: int = 5) -> dict[str, Any]:
    """``judge report`` (re-render the latest folder from its record) timed end to end
    ``repeats`` times on a folder of ``n_items`` that an untimed ``judge run`` wrote."""
    timings = []
    with tempfile.TemporaryDirectory() as tmp:
        toml = write_dataset(Path(tmp), n_items)
        judged = [*JUDGE_CLI, "--config", str(toml), "run", "--backend", "lexical"]
        subprocess.run(judged, check=True, capture_output=True, cwd=REPO, env=USER_ENV)
        reports = Path(tmp) / "reports"
        folder = reports / (reports / "latest").read_text(encoding="utf-8").strip()
        for _ in range(repeats):
            done, elapsed, cpu = _timed([*JUDGE_CLI, "--config", str(toml), "report"])
            lines = (folder / "verdicts.jsonl").read_text(encoding="utf-8").count("\n")
            assert "re-rendered" in done.stdout and lines == n_items, (lines, done.stdout[-500:])
            timings.append((elapsed, cpu))
    return _summary(n_items, timings)


def concurrency(delay_s: float = 0.2, slots: int = 4, n_items: int = 80) -> dict[str, Any]:
    from judge.judging.backends.ollama import OllamaBackend

    server = loopback_ollama.start(delay_s, slots)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = load_config(write_dataset(Path(tmp), n_items))
            inputs = load_inputs(config)
            items = build_items(inputs.golden, inputs.run, 5)
            host = f"http://127.0.0.1:{server.server_address[1]}"
            backend = OllamaBackend(OllamaConfig(host=host, model=loopback_ollama.MODEL))
            cache = VerdictCache(Path(tmp) / "c.sqlite3")
            start = time.perf_counter()
            judge_items(items, backend, load_prompt(PROMPT), cache, concurrency=slots)
            elapsed = time.perf_counter() - start
            cache.close()
            backend.close()
    finally:
        server.shutdown()
        server.server_close()
    achieved = n_items / elapsed
    ideal = slots / delay_s
    return {
        "delay_s": delay_s,
        "slots": slots,
        "items": n_items,
        "items_per_s": round(achieved, 2),
        "ideal_items_per_s": ideal,
        "share_of_ideal": round(achieved / ideal, 3),
    }


def embedded(config: Config | None = None) -> dict[str, Any]:
    """Harness vs bare llama-cpp-python on the sample set (about 4 minutes each).

    Fair by construction: one model instance for both; its state is reset before every timed
    call (otherwise the second of two identical prompts would skip prompt evaluation through
    llama.cpp's prefix reuse); the two are interleaved item by item, alternating which goes
    first, so drift and background load fall on both; one untimed warm-up call first.
    """
    from llama_cpp.llama_grammar import LlamaGrammar

    from judge.judging.backends.embedded import EmbeddedBackend, verdict_grammar
    from judge.judging.verdict import verdict_schema

    config = config or load_config(REPO / "judge.toml")
    settings = config.judge.embedded
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    prompt = load_prompt(config.judge.prompt)
    backend = EmbeddedBackend(settings)
    grammar = LlamaGrammar.from_string(verdict_grammar(json.dumps(verdict_schema())), verbose=False)

    def bare(item: Any) -> None:
        text = prompt.render_item(item)
        # The same tokens and stop strings as the backend: only the harness around it differs.
        backend.llm.create_completion(
            prompt=backend.tokens(text),
            max_tokens=settings.max_tokens,
            temperature=0.0,
            seed=settings.seed,
            grammar=grammar,
            stop=["<end_of_turn>"] if backend.prompt_format == "gemma-turns" else [],
        )

    with tempfile.TemporaryDirectory() as tmp:
        cache = VerdictCache(Path(tmp) / "c.sqlite3")

        def harness(item: Any) -> None:
            judge_items([item], backend, prompt, cache)

        bare(items[0])  # warm-up: first-call costs belong to neither side
        totals = {"harness": 0.0, "bare": 0.0}
        for index, item in enumerate(items):
            order = [("harness", harness), ("bare", bare)]
            for name, run_one in order if index % 2 == 0 else reversed(order):
                backend.llm.reset()
                start = time.perf_counter()
                run_one(item)
                totals[name] += time.perf_counter() - start
        cache.close()
    n = len(items)
    return {
        "items": n,
        "harness_items_per_min": round(n / totals["harness"] * 60, 2),
        "bare_items_per_min": round(n / totals["bare"] * 60, 2),
        "harness_overhead": round(totals["harness"] / totals["bare"] - 1, 4),
    }


if __name__ == "__main__":
    shutil.rmtree(REPO / ".bench-tmp", ignore_errors=True)
    print(overhead(), cached_rerun(), cached_rerun(10_000), rerender(), concurrency())
