"""``judge.pipeline.align``: ``judge align`` on the shipped sample with fake judges of known
quality: one that exemplars make better is adopted (a new prompt file, the old one untouched,
the flips listed), one they do not change is refused with the guard named."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.audit.align import EXEMPLARS_HEADING
from judge.config import Config, load_config
from judge.errors import ConfigError
from judge.hashing import text_sha256
from judge.inputs.labels import load_labels
from judge.judging.backends.base import JudgeRequest
from judge.judging.verdict import Reply
from judge.pipeline.align import AlignSettings, adopted_prompt, align, aligned_lines
from tests.fakes import ScriptedBackend

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "golden" / "sample"


def _human() -> dict[str, tuple[int, int]]:
    """The first labeller's scores (by name) of each labelled answer, by answer hash."""
    lines = (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = {json.loads(line)["id"] for line in lines}
    labels = sorted(
        load_labels(SAMPLE / "labels.jsonl", questions).current, key=lambda x: x.labeller
    )
    found: dict[str, tuple[int, int]] = {}
    for label in labels:
        found.setdefault(label.answer_sha256, (label.faithfulness, label.relevance))
    return found


HUMAN = _human()


def judge_of(right_share: Callable[[bool], float]) -> ScriptedBackend:
    """A judge right on a fixed share of the answers (``right_share(exemplars shown)``),
    one point off on both axes elsewhere; which answers is fixed by their hash."""

    def script(request: JudgeRequest) -> Reply:
        human = HUMAN.get(text_sha256(request.answer), (2, 2))
        share = right_share(EXEMPLARS_HEADING in request.prompt)
        right = zlib.crc32(request.answer.encode()) % 100 < share * 100
        scores = human if right else tuple((s + 1) % 3 for s in human)
        quote = request.context[0].text.split("。")[0] + "。" if request.context else ""
        payload = {"evidence": quote, "faithfulness": scores[0], "relevance": scores[1], "note": ""}
        return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")

    return ScriptedBackend(script)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    prompt = tmp_path / "prompts" / "judge.v1.md"
    prompt.parent.mkdir()
    prompt.write_bytes((REPO / "prompts" / "judge.v1.md").read_bytes())
    return load_config(REPO / "judge.toml").with_overrides(
        judge={"cache_path": tmp_path / "cache.sqlite3", "prompt": prompt},
        reports={"dir": tmp_path / "reports"},
    )


SETTINGS = AlignSettings(ks=(2,), folds=3, budget_tokens=6000, resamples=300)


def test_a_judge_that_exemplars_make_better_is_adopted(config: Config) -> None:
    old = config.judge.prompt.read_bytes()
    aligned = align(config, SETTINGS, backend=judge_of(lambda shown: 0.95 if shown else 0.4))
    assert aligned.decision.adopted is not None
    assert aligned.decision.guard.startswith("adopt k=2")
    assert aligned.written == config.judge.prompt.with_name("judge.v2.md")
    assert config.judge.prompt.read_bytes() == old  # never edited
    text = aligned.written.read_text(encoding="utf-8")
    assert EXEMPLARS_HEADING in text
    assert len(aligned.exemplars) == 2
    assert aligned.flips  # the adopted prompt changes verdicts of the run
    lines = aligned_lines(aligned)
    assert "k=2: exemplars shown per fold: 2, 2, 2" in lines
    assert aligned.shown == {"k=2": [2, 2, 2]}
    assert any(line.startswith("k=2: exact agreement (both axes)") for line in lines)
    assert any(f"wrote {aligned.written}" in line for line in lines)
    assert any(line.startswith("  q") and "→" in line for line in lines)
    assert aligned.report is not None and aligned.report.parent.name == "align"
    assert "adopt k=2" in aligned.report.read_text(encoding="utf-8")
    # A second adoption writes the next version, never over the first.
    again = align(config, SETTINGS, backend=judge_of(lambda shown: 0.95 if shown else 0.4))
    assert again.written == config.judge.prompt.with_name("judge.v3.md")


def test_a_judge_that_exemplars_do_not_change_is_refused(config: Config) -> None:
    backend = judge_of(lambda shown: 0.6)
    aligned = align(config, SETTINGS._replace(ks=(2, 4)), backend=backend)
    assert aligned.decision.adopted is None
    assert "guard 1 (primary) decided" in aligned.decision.guard
    assert aligned.written is None and aligned.flips == []
    assert sorted(p.name for p in config.judge.prompt.parent.iterdir()) == ["judge.v1.md"]
    assert [c.variant for c in aligned.comparisons] == ["k=2", "k=4"]
    assert all(c.labels == aligned.labels == 42 for c in aligned.comparisons)
    assert aligned.examples == 30
    # Every reply went through the cache: a second run asks nothing.
    asked = len(backend.calls)
    align(config, SETTINGS._replace(ks=(2, 4)), backend=backend)
    assert len(backend.calls) == asked


def test_held_out_items_never_see_their_own_label(config: Config) -> None:
    backend = judge_of(lambda shown: 0.6)
    align(config, SETTINGS, backend=backend)
    for request in backend.calls:
        if EXEMPLARS_HEADING in request.prompt:
            shown = request.prompt.split("End of the examples.")[0]
            assert json.dumps(request.answer, ensure_ascii=False) not in shown


def test_a_budget_that_fits_fewer_exemplars_says_so(config: Config) -> None:
    settings = SETTINGS._replace(budget_tokens=1200)
    aligned = align(config, settings, backend=judge_of(lambda shown: 0.6))
    assert all(count < 2 for count in aligned.shown["k=2"])
    assert any(
        line.endswith("(the token budget allowed no more)") for line in aligned_lines(aligned)
    )


def test_a_dry_run_writes_no_prompt(config: Config) -> None:
    settings = SETTINGS._replace(write=False)
    aligned = align(config, settings, backend=judge_of(lambda shown: 0.95 if shown else 0.4))
    assert aligned.decision.adopted is not None and aligned.written is None
    assert sorted(p.name for p in config.judge.prompt.parent.iterdir()) == ["judge.v1.md"]
    assert any("not written (--dry-run)" in line for line in aligned_lines(aligned))


def test_no_labels_of_the_run_is_one_located_line(config: Config, tmp_path: Path) -> None:
    empty = tmp_path / "labels.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="judge align needs labels for at least 2 answers"):
        align(
            config.with_overrides(data={"labels": empty}), SETTINGS, backend=judge_of(lambda s: 1)
        )


def test_an_interrupted_judging_decides_nothing(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judge.errors import Interrupted
    from judge.judging.judge import Judge, TaskOutcome

    real = Judge.run

    def interrupted(self: Judge, *args: object, **kwargs: object) -> TaskOutcome[object]:
        outcome = real(self, *args, **kwargs)  # type: ignore[arg-type]
        return outcome._replace(interrupted=True)

    monkeypatch.setattr(Judge, "run", interrupted)
    with pytest.raises(Interrupted, match="before the guard decided"):
        align(config, SETTINGS, backend=judge_of(lambda shown: 0.95 if shown else 0.4))
    assert sorted(p.name for p in config.judge.prompt.parent.iterdir()) == ["judge.v1.md"]


def test_an_adoption_is_kept_for_the_views_of_a_run_with_its_prompt(config: Config) -> None:
    aligned = align(config, SETTINGS, backend=judge_of(lambda shown: 0.95 if shown else 0.4))
    assert aligned.written is not None and aligned.report is not None
    reports = config.reports.dir
    adopted = adopted_prompt(reports, "judge.v2.md")
    assert adopted is not None
    chosen = aligned.decision.adopted
    assert chosen is not None
    assert (adopted.prompt, adopted.previous, adopted.variant) == (
        "judge.v2.md",
        "judge.v1.md",
        "k=2",
    )
    assert (adopted.value, adopted.previous_value) == (chosen.value, chosen.current)
    assert adopted.value_ci == chosen.value_ci and adopted.previous_ci == chosen.current_ci
    assert (adopted.labels, adopted.answers) == (chosen.labels, chosen.items)
    assert adopted.report == aligned.report.name
    assert adopted_prompt(reports, "judge.v1.md") is None  # not written by judge align


def test_a_refusal_or_an_unreadable_file_adopts_nothing(config: Config) -> None:
    aligned = align(config, SETTINGS, backend=judge_of(lambda shown: 0.6))
    assert aligned.report is not None
    kept = json.loads(aligned.report.with_suffix(".json").read_text(encoding="utf-8"))
    assert kept == {"adopted": None}
    (aligned.report.parent / "zz.json").write_text("not json", encoding="utf-8")
    assert adopted_prompt(config.reports.dir, "judge.v2.md") is None
    assert adopted_prompt(config.reports.dir / "nowhere", "judge.v2.md") is None
