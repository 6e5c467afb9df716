"""``judge.pipeline.check``: the inputs validated once, every problem in one error."""

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.pipeline.check import check
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
