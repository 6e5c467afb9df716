"""``judge.pipeline.check``: the inputs validated once, every problem in one error."""

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from judge.audit.types import AuditResult
from judge.config import Config
from judge.errors import InputError
from judge.pipeline.check import MIN_LABELS_FOR_ERROR, check, measured_error
from judge.pipeline.inputs import Inputs

Tiny = Callable[..., Config]


def test_check_counts_what_the_command_shows(tiny: Tiny) -> None:
    seen: list[Inputs] = []
    checked = check(tiny(), on_inputs=seen.append)
    assert [i.run_source for i in seen] == [checked.inputs.run_source]  # called once
    assert checked.per_type == {"factual": 1, "procedural": 1, "negative": 1, "out_of_scope": 1}
    assert checked.unlabelled == []
    assert checked.documents == 3  # pricing, setup and one more doc in the tiny corpus
    assert checked.labellers == 0
    assert len(checked.inputs.run.records) == 4


def test_check_collects_every_problem_after_showing_the_inputs(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny().with_overrides(judge={"prompt": tmp_path / "no-such-prompt.md"})
    seen: list[Inputs] = []
    with pytest.raises(InputError) as raised:
        check(config, on_inputs=seen.append)
    assert len(seen) == 1  # the warnings come before the error
    assert len(raised.value.problems) == 1
    assert "no-such-prompt.md" in raised.value.problems[0]


def test_check_refuses_a_bad_prompt_before_it_asks_the_adapter(
    tiny_adapter: Callable[..., Config], tmp_path: Path
) -> None:
    asked = tmp_path / "asked.txt"
    code = (
        "from pathlib import Path\n"
        "def answer(question):\n"
        f"    Path({str(asked)!r}).write_text('asked')\n"
        "    return {'answer': 'x', 'retrieved': []}\n"
    )
    config = tiny_adapter("asks_first", code).with_overrides(
        judge={"prompt": tmp_path / "no-such-prompt.md"}
    )
    with pytest.raises(InputError) as raised:
        check(config)
    assert ["no-such-prompt.md" in p for p in raised.value.problems] == [True]
    assert not asked.exists()  # the adapter was never asked


def test_the_lexical_judge_needs_no_prompt_file(
    tiny: Callable[..., Config], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A judge.toml naming a prompt it does not carry (a copied judge.toml): the lexical judge
    reads no prompt, so check and run go on with the shipped one and say so; a judge that
    reads prompts still stops, naming the file."""
    from judge.pipeline.evaluate import evaluate

    config = tiny().with_overrides(judge={"prompt": tmp_path / "prompts" / "judge.v1.md"})
    with pytest.raises(InputError):
        check(config)  # the configured judge (auto) reads its prompt
    lexical = config.with_overrides(judge={"backend": "lexical"})
    checked = check(lexical)
    assert checked.inputs.run.records
    assert "prompt file not found; the judge reads no prompt, so the shipped judge.v1.md" in (
        caplog.text
    )
    assert check(config, backend="lexical").inputs.run.records
    result = evaluate(config, backend="lexical", progress=False)
    assert result.report.verdicts


def _audit(n: int, faithfulness: float | None, relevance: float | None) -> AuditResult:
    """The part of an audit ``measured_error`` reads: the judge's labels scored and its exact
    agreement per axis over all types."""
    per_axis = {
        "faithfulness": {"all": SimpleNamespace(exact=faithfulness)},
        "relevance": {"all": SimpleNamespace(exact=relevance)},
    }
    return cast(AuditResult, SimpleNamespace(judge=SimpleNamespace(n=n, per_axis=per_axis)))


def test_the_verdict_error_is_the_audits_when_it_scored_enough_labels() -> None:
    error, labels = measured_error(_audit(40, 0.9, 0.7)) or (None, None)
    assert error == pytest.approx(0.2) and labels == 40
    assert measured_error(_audit(MIN_LABELS_FOR_ERROR - 1, 0.9, 0.7)) is None  # too few
    assert measured_error(_audit(40, None, None)) is None  # nothing measured
    assert measured_error(None) is None  # no audit: the default
    only = measured_error(_audit(40, 0.8, None))
    assert only is not None and only[0] == pytest.approx(0.2)


def test_check_warns_at_the_measured_error_and_says_where_it_came_from(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the tiny set (one question a type) at the default 10 % error sits at the 1-in-10 line
    assert check(tiny()).gating is None
    monkeypatch.setattr("judge.pipeline.check.measured_error", lambda _audit: (0.2, 40))
    warning = check(tiny()).gating
    assert warning is not None
    assert warning.startswith("with 1 question a type and 20 % verdict error, about ")
    assert warning.endswith("; the verdict error is the latest run's audit's, on 40 labels")
