"""Judge-stage benchmarks (issue 3): harness overhead, cached re-run, concurrency, embedded.

1. overhead: a zero-latency backend judging N generated items into a fresh cache: everything
   the harness does per item (render, cache write, parse, evidence check), in items/s.
2. cached re-run: ``judge run`` as a subprocess on 1,000 items that are all in the cache,
   start-up, report folder and tables included.
3. concurrency: a loopback server speaking Ollama's API that answers after a fixed delay with
   N slots; throughput at concurrency N against the ideal N / delay.
4. embedded: the sample set judged by the harness with the real Gemma 3 270M, against the same
   prompts sent straight to llama-cpp-python in a loop (same grammar, same settings).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from judge.backends import BackendIdentity, JudgeRequest
from judge.cache import VerdictCache
from judge.config import Config, OllamaConfig, load_config
from judge.grading import build_items, judge_items
from judge.pipeline import load_inputs
from judge.prompts import load_prompt
from judge.verdict import Reply

REPO = Path(__file__).resolve().parent.parent
PROMPT = REPO / "prompts" / "judge.v1.md"
WORDS = ["設定", "バックアップ", "復元", "テーマ", "ウィジェット", "アカウント", "料金", "同期", "通知", "写真"]


def write_dataset(folder: Path, n_questions: int, seed: int = 3) -> Path:
    """A generated golden set, corpus and run (Japanese-like text) with a judge.toml."""
    rng = random.Random(seed)
    chunks = []
    for i in range(300):
        sentences = [f"{rng.choice(WORDS)}は{rng.randint(1, 99)}日ごとに{rng.choice(WORDS)}されます。" for _ in range(4)]
        chunks.append({"chunk_id": f"doc{i % 20}/h{i}", "doc": f"doc{i % 20}", "text": "".join(sentences)})
    questions, run = [], [{"run_meta": {"system": "bench"}}]
    for i in range(n_questions):
        relevant = rng.sample(chunks, 2)
        questions.append({"id": f"q{i}", "type": rng.choice(["factual", "procedural", "negative"]),
                          "question": f"{rng.choice(WORDS)}について質問です {i}", "answerable": True,
                          "relevant_chunks": [c["chunk_id"] for c in relevant]})
        retrieved = [*relevant, *rng.sample(chunks, 8)]
        ids = list(dict.fromkeys(c["chunk_id"] for c in retrieved))
        run.append({"id": f"q{i}", "retrieved": [{"chunk_id": c} for c in ids],
                    "answer": relevant[0]["text"][:40] + f" 回答{i}"})
    for name, records in (("questions", questions), ("corpus", chunks), ("run", run)):
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    toml = folder / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\nrun = "run.jsonl"\n'
        f'[judge]\nprompt = "{PROMPT}"\ncache_path = "cache.sqlite3"\n[reports]\ndir = "reports"\n',
        encoding="utf-8")
    return toml


class ZeroLatency:
    """Answers instantly with a valid verdict quoting the first chunk's first sentence."""

    identity = BackendIdentity(kind="bench", model="zero-latency", digest=None, options={})

    def complete(self, request: JudgeRequest) -> Reply:
        quote = request.context[0].text.split("。")[0] + "。"
        text = json.dumps({"evidence": quote, "faithfulness": 2, "relevance": 2, "note": "ok"},
                          ensure_ascii=False)
        return Reply(text=text, finish_reason="stop")


def overhead(n_items: int = 5000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(write_dataset(Path(tmp), n_items))
        inputs = load_inputs(config)
        items = build_items(inputs.golden, inputs.run, 5)
        cache = VerdictCache(Path(tmp) / "overhead.sqlite3")
        start = time.perf_counter()
        outcome = judge_items(items, ZeroLatency(), load_prompt(PROMPT), cache, concurrency=1)
        elapsed = time.perf_counter() - start
        cache.close()
    assert all(v.status == "ok" and v.match is not None and v.match.found for v in outcome.verdicts.values())
    return {"items": n_items, "seconds": round(elapsed, 3), "items_per_s": round(n_items / elapsed)}


def cached_rerun(n_items: int = 1000) -> dict[str, Any]:
    judge_cli = [sys.executable, "-m", "judge"]
    with tempfile.TemporaryDirectory() as tmp:
        toml = write_dataset(Path(tmp), n_items)
        command = [*judge_cli, "--config", str(toml), "run", "--backend", "lexical"]
        subprocess.run(command, check=True, capture_output=True, cwd=REPO)
        start = time.perf_counter()
        done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
        elapsed = time.perf_counter() - start
    assert f"({n_items} from the cache)" in done.stdout, done.stdout[-500:]
    return {"items": n_items, "seconds": round(elapsed, 3)}


def _slow_ollama(delay_s: float, slots: int) -> ThreadingHTTPServer:
    gate = threading.Semaphore(slots)
    verdict = json.dumps({"evidence": "", "faithfulness": 2, "relevance": 2, "note": "ok"})

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; with Nagle on, the second waits ~40 ms for a
        # delayed ACK, which would be charged to the harness.
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/api/version":
                self._send({"version": "0.13.0"})
            else:
                self._send({"models": [{"name": "bench:1", "model": "bench:1", "digest": "d" * 64,
                                        "size": 1, "modified_at": "2026-01-01T00:00:00Z"}]})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            with gate:  # N slots, like OLLAMA_NUM_PARALLEL; the rest wait, as in Ollama's queue
                time.sleep(delay_s)
            self._send({"message": {"role": "assistant", "content": verdict}, "done": True,
                        "done_reason": "stop", "prompt_eval_count": 100, "eval_count": 20})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def concurrency(delay_s: float = 0.2, slots: int = 4, n_items: int = 80) -> dict[str, Any]:
    from judge.backends.ollama import OllamaBackend

    server = _slow_ollama(delay_s, slots)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = load_config(write_dataset(Path(tmp), n_items))
            inputs = load_inputs(config)
            items = build_items(inputs.golden, inputs.run, 5)
            host = f"http://127.0.0.1:{server.server_address[1]}"
            backend = OllamaBackend(OllamaConfig(host=host, model="bench:1"))
            cache = VerdictCache(Path(tmp) / "c.sqlite3")
            start = time.perf_counter()
            judge_items(items, backend, load_prompt(PROMPT), cache, concurrency=slots)
            elapsed = time.perf_counter() - start
            cache.close()
    finally:
        server.shutdown()
    achieved = n_items / elapsed
    ideal = slots / delay_s
    return {"delay_s": delay_s, "slots": slots, "items": n_items, "items_per_s": round(achieved, 2),
            "ideal_items_per_s": ideal, "share_of_ideal": round(achieved / ideal, 3)}


def embedded(config: Config | None = None) -> dict[str, Any]:
    """Harness vs bare llama-cpp-python on the sample set (about 4 minutes each)."""
    from llama_cpp.llama_grammar import LlamaGrammar

    from judge.backends.embedded import EmbeddedBackend, gemma_turns
    from judge.verdict import verdict_schema

    config = config or load_config(REPO / "judge.toml")
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    prompt = load_prompt(config.judge.prompt)
    backend = EmbeddedBackend(config.judge.embedded)
    with tempfile.TemporaryDirectory() as tmp:
        cache = VerdictCache(Path(tmp) / "c.sqlite3")
        start = time.perf_counter()
        judge_items(items, backend, prompt, cache)
        harness_s = time.perf_counter() - start
        cache.close()
    # The same work without the harness: same model instance, prompts, grammar and settings.
    grammar = LlamaGrammar.from_json_schema(json.dumps(verdict_schema()), verbose=False)
    texts = [prompt.render(i.question.question, i.context, i.record.answer) for i in items]
    start = time.perf_counter()
    for text in texts:
        tokens = backend.llm.tokenize(gemma_turns(text).encode("utf-8"), special=True)
        backend.llm.create_completion(prompt=tokens, max_tokens=config.judge.embedded.max_tokens,
                                      temperature=0.0, seed=config.judge.embedded.seed,
                                      grammar=grammar, stop=["<end_of_turn>"])
    bare_s = time.perf_counter() - start
    n = len(items)
    return {"items": n, "harness_items_per_min": round(n / harness_s * 60, 2),
            "bare_items_per_min": round(n / bare_s * 60, 2),
            "harness_overhead": round(harness_s / bare_s - 1, 4)}


if __name__ == "__main__":
    shutil.rmtree(REPO / ".bench-tmp", ignore_errors=True)
    print(overhead(), cached_rerun(), concurrency())
