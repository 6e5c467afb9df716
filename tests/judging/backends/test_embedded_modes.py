"""The cited and sentences prompt modes with the real Gemma 3 270M (slow: seconds an item).

Mechanics only: the base model is no judge. Its replies must parse into verdicts of the mode
asked, with every field there, or fail with a whole message; never a backend error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tenacity import wait_none

from judge.config import Config
from judge.judging.cache import VerdictCache
from judge.judging.evidence import answer_sentences, context_sentences
from judge.judging.items import build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from tests.conftest import REPO

pytestmark = pytest.mark.slow


def test_two_items_in_each_numbered_mode(
    embedded_backend: object, sample_config: Config, tmp_path: Path
) -> None:
    from judge.pipeline.inputs import load_inputs

    inputs = load_inputs(sample_config)
    items = {i.question.id: i for i in build_items(inputs.golden, inputs.run, 5)}
    # A faithful answer and one with an invented detail (q08: "30 generations").
    chosen = [items["q01"], items["q08"]]
    cache = VerdictCache(tmp_path / "c.sqlite3")
    for name, mode in (("judge.cited.v1.md", "cited"), ("judge.sentences.v1.md", "sentences")):
        prompt = load_prompt(REPO / "prompts" / name)
        outcome = judge_items(chosen, embedded_backend, prompt, cache, retry_wait=wait_none())  # type: ignore[arg-type]
        assert outcome.fingerprint.parts["mode"] == mode
        for item in chosen:
            verdict = outcome.verdicts[item.question.id]
            assert verdict.mode == mode
            assert verdict.status in ("ok", "parse_error"), verdict
            if verdict.status == "parse_error":
                # A whole message: what broke, not a cut-off fragment.
                assert verdict.error and verdict.raw_reply
                assert verdict.error.startswith(("breaks the schema: ", "not JSON: ", "reply cut"))
                continue
            assert verdict.faithfulness in (0, 1, 2) and verdict.relevance in (0, 1, 2)
            assert verdict.match is not None and verdict.match.kind in ("cited", "empty")
            numbered = context_sentences(item.context)
            if verdict.match.kind == "cited":
                cited = next(s for s in numbered if s.text == verdict.evidence)
                assert (verdict.match.chunk_id, verdict.match.start) == (
                    cited.chunk_id,
                    cited.start,
                )
            if mode == "cited":
                assert verdict.sentences is None
                # Both scores were written, so both have the model's distribution.
                assert set(verdict.score_probabilities or {}) == {"faithfulness", "relevance"}
            else:
                checks = verdict.sentences
                assert checks is not None
                assert [c.n for c in checks] == [s.n for s in answer_sentences(item.record.answer)]
                for check in checks:
                    assert item.record.answer[check.start : check.end] == check.text
                    assert check.verdict in ("supported", "unsupported", "no_claim")
                # Faithfulness was not written, so only relevance has probabilities.
                assert set(verdict.score_probabilities or {}) == {"relevance"}
    cache.close()
