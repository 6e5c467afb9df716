"""Prompt tokens the embedded judge evaluates per item: the sample set judged by the embedded
Gemma as ``judge run --backend embedded`` does, with llama-cpp-python's ``create_completion``
wrapped to count, before each call, how many of the prompt's tokens the previous call left in
the model's context (llama.cpp reuses that prefix and evaluates only the rest).

The rubric and instructions come first in every shipped prompt, so consecutive items of one task
share them: what is evaluated per item is the item's own material (question, reference, context,
answer) and the closing line. ``python bench/prefix_bench.py`` prints, per prompt length class,
the tokens given and the tokens evaluated; ``make bench`` quotes the totals.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def run() -> dict[str, Any]:
    import llama_cpp

    from judge.cli import main as judge_main

    calls: list[tuple[int, int]] = []
    real = llama_cpp.Llama.create_completion

    def counted(self: Any, prompt: Any, *args: Any, **kwargs: Any) -> Any:
        tokens = list(prompt)
        before = [int(t) for t in self._input_ids.tolist()]
        # llama-cpp-python's generate() reuses the longest common prefix of the tokens in the
        # context and the prompt but its last token (which it evaluates again for the logits).
        reused = llama_cpp.Llama.longest_token_prefix(before, tokens[:-1])
        calls.append((len(tokens), reused))
        return real(self, prompt, *args, **kwargs)

    llama_cpp.Llama.create_completion = counted  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            toml = Path(tmp) / "judge.toml"
            text = (REPO / "judge.toml").read_text(encoding="utf-8")
            text = text.replace('"golden/', f'"{REPO}/golden/')
            text = text.replace('cache_path = ".judge-cache/', f'cache_path = "{tmp}/')
            text = text.replace('dir = "reports"', f'dir = "{tmp}/reports"')
            toml.write_text(text, encoding="utf-8")
            code = judge_main(["--config", str(toml), "run", "--backend", "embedded"])
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        llama_cpp.Llama.create_completion = real  # type: ignore[method-assign]
    given = [n for n, _ in calls]
    evaluated = [n - reused for n, reused in calls]
    return {
        "exit_code": code,
        "calls": len(calls),
        "prompt_tokens_median": statistics.median(given) if given else None,
        "evaluated_tokens_median": statistics.median(evaluated) if evaluated else None,
        "prompt_tokens_total": sum(given),
        "evaluated_tokens_total": sum(evaluated),
        "first_call": calls[0] if calls else None,
    }


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    print(json.dumps(run(), indent=1))
