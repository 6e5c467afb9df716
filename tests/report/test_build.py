"""What a prompt edit shows in the report: flipped verdicts and agreement before and after."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from judge.hashing import text_sha256
from judge.judging.backends import JudgeRequest
from judge.judging.verdict import Reply
from judge.pipeline import evaluate
from judge.report.summary import console_summary
from tests.conftest import REPO, RUN
from tests.fakes import ScriptedBackend, good_reply

Tiny = Callable[..., Config]


def test_a_prompt_edit_does_not_change_the_lexical_baseline(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "judge.v2.md"
    prompt.write_text(
        (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    config = tiny()
    assert config.source is not None
    args = ["--config", str(config.source), "run", "--backend", "lexical", "--prompt", str(prompt)]
    assert main(args) == 0
    prompt.write_text(
        prompt.read_text(encoding="utf-8") + "\nOne more rubric line.\n", encoding="utf-8"
    )
    assert main(args) == 0
    out = capsys.readouterr().out
    # The baseline ignores the prompt: same fingerprint, everything from the cache, and its
    # metrics are compared like any run's.
    assert "(4 from the cache)" in out
    assert "judge vs " in out and "prompt edit since" not in out


def test_prompt_edit_lists_flipped_verdicts_and_agreement(tiny: Tiny, tmp_path: Path) -> None:
    """A judge whose verdict on q2 depends on a rubric line: editing the prompt flips q2."""

    def script(request: JudgeRequest) -> Reply:
        if "lose a faithfulness point" in request.prompt and request.question.startswith(
            "バックアップから"
        ):
            quote = request.context[0].text.split("。")[0] + "。"
            payload = {"evidence": quote, "faithfulness": 1, "relevance": 2, "note": "order"}
            return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")
        return good_reply(request)

    labels = tmp_path / "labels.jsonl"
    answer = RUN[2]["answer"]
    labels.write_text(
        json.dumps(
            {
                "question_id": "q2",
                "answer_sha256": text_sha256(answer),
                "faithfulness": 1,
                "relevance": 2,
                "labeller": "ana",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    prompt = tmp_path / "judge.v2.md"
    config = tiny(extra_toml=f'labels = "{labels}"\n').with_overrides(judge={"prompt": prompt})
    original = (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8")
    prompt.write_text(original, encoding="utf-8")
    first = evaluate(config, backend=ScriptedBackend(script))
    assert first.report.prompt_edit is None  # nothing before it
    prompt.write_text(
        original + "\nSteps in the wrong order lose a faithfulness point.\n", encoding="utf-8"
    )
    result = evaluate(config, backend=ScriptedBackend(script))
    edit = result.report.prompt_edit
    assert edit is not None
    assert edit.previous_folder == first.folder.name
    assert [flip.describe() for flip in edit.flips] == ["q2: F2 R2 (ok) → F1 R2 (ok)"]
    assert (edit.labelled, edit.agreement_before, edit.agreement_after) == (1, 0.0, 1.0)
    out = "\n".join(console_summary(result.report, config, result.folder.path))
    assert "verdicts changed" in out and "  q2: F2 R2 (ok) → F1 R2 (ok)" in out
    assert "agreement with 1 human labels (both scores): 0.0% → 100.0%" in out
    assert (config.reports.dir / "latest").read_text(encoding="utf-8").strip() == (
        result.folder.name
    )
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "## Since the prompt edit" in report_md
    assert "| q2 | F2 R2 | F1 R2 |" in report_md
    assert "0.0% → 100.0%" in report_md
