"""The pinned baseline: per-question values, pinned once, ratcheted up only, gated against; a
baseline of the old format (per-type means) is refused with what to do."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from judge.cli import main
from judge.config import Config
from judge.errors import ConfigError
from judge.results.baseline import (
    Baseline,
    Raised,
    ratchet_baseline,
    ratchet_values,
    read_baseline,
    write_baseline,
)
from judge.results.compare import GateRule, QuestionValues
from tests.conftest import history_entry, nonsense_run, run_lexical, worse_run
from tests.fakes import ScriptedBackend, nonsense_scores_zero
from tests.results.helpers import use_backend

Tiny = Callable[..., Config]


def test_baseline_pin_ratchet_and_gate(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_backend(monkeypatch, ScriptedBackend(nonsense_scores_zero))
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    run = ["--config", toml, "run"]
    assert main([*run]) == 0
    assert main(["--config", toml, "baseline", "pin"]) == 0
    assert "(4 questions)" in capsys.readouterr().out
    baseline = json.loads(config.reports.baseline.read_text(encoding="utf-8"))
    assert baseline["format_version"] == 2
    assert baseline["values"]["retrieval"]["mrr"]["q1"] == 1.0
    assert baseline["values"]["judge"]["faithfulness"]["q1"] == 2.0
    assert baseline["types"]["q1"] == "factual"
    # Pinning again would silently replace (possibly lower) it: refused without --replace.
    assert main(["--config", toml, "baseline", "pin"]) == 2
    assert "judge baseline ratchet" in capsys.readouterr().err
    # A better mean on one question per type is not a run shown better: nothing is raised
    # (the previous ratchet raised q1's mrr here, to whatever the luckiest night gave).
    tiny(run=worse_run())
    assert main(run) == 0
    assert main(["--config", toml, "baseline", "pin", "--replace"]) == 0
    tiny()
    assert main(run) == 0
    capsys.readouterr()
    assert main(["--config", toml, "baseline", "ratchet"]) == 0
    out = capsys.readouterr().out
    assert "0 per-type metric(s) raised where the run is shown better" in out
    pinned = json.loads(config.reports.baseline.read_text(encoding="utf-8"))
    assert pinned["values"]["retrieval"]["mrr"]["q1"] == pytest.approx(0.2)
    assert len(pinned["pinned_from"]) == 2
    # A collapse against the baseline fails the gate, whatever the set's size.
    tiny(run=nonsense_run())
    assert main([*run, "--fail-on-regression"]) == 1
    out = capsys.readouterr().out
    assert "judge vs baseline: " in out
    assert "  ▼▼ all faithfulness: 2.000 → 0.000 (-2.000 [-2.000, -2.000], 4 questions" in out


def _twelve(values: list[float]) -> QuestionValues:
    types = {f"f{i:02d}": "factual" for i in range(12)}
    return QuestionValues(
        types, {"retrieval": {}, "judge": {"faithfulness": dict(zip(types, values, strict=True))}}
    )


def test_the_ratchet_rises_only_where_a_run_is_shown_better() -> None:
    pinned = _twelve([1.0] * 12)
    # Eleven of twelve rise a point: p = 2^-11, shown: raised to the run's values.
    values, raised = ratchet_values(pinned, _twelve([2.0] * 11 + [1.0]), GateRule())
    assert raised == [Raised("judge", "factual", "faithfulness", 1.0, pytest.approx(23 / 12))]
    assert values["judge"]["faithfulness"]["f00"] == 2.0
    # Four rise (p = 1/16): a higher mean, not a better run: nothing raised.
    values, raised = ratchet_values(pinned, _twelve([2.0] * 4 + [1.0] * 8), GateRule())
    assert (
        raised == [] and values["judge"]["faithfulness"] == pinned.values["judge"]["faithfulness"]
    )


def test_a_ratchet_after_quiet_noisy_nights_does_not_raise_the_bar() -> None:
    # Twenty nights of the same system, each score moved a point with probability 0.1, the
    # ratchet run after each: the previous rule kept the highest noisy mean of the season
    # (false alarms against it climbed from 10 % to 36-38 % a night by nights 20-30).
    rng = np.random.default_rng(8)
    truth = [2.0] * 8 + [1.0] * 4
    pinned = _twelve(truth)
    for _ in range(20):
        night = [(1.0 if v != 1.0 else 2.0) if rng.random() < 0.1 else v for v in truth]
        values, raised = ratchet_values(pinned, _twelve(night), GateRule())
        assert raised == []
        pinned = QuestionValues(pinned.types, values)
    assert list(pinned.values["judge"]["faithfulness"].values()) == truth


def test_a_baseline_of_the_old_format_says_to_re_pin(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert config.source is not None
    old = {
        "format_version": 1,
        "golden_hash": "g",
        "retrieval_fingerprint": "rf",
        "judge_fingerprint": "jf",
        "metrics": {"retrieval": {"factual": {"mrr": 1.0}}, "judge": {}},
        "pinned_from": ["20261128T000000Z-aaaaaaaa"],
    }
    config.reports.baseline.write_text(json.dumps(old), encoding="utf-8")
    expected = (
        f"error: {config.reports.baseline}: a baseline of format 1 (per-type means); runs are "
        "now compared question by question: re-pin it with 'judge baseline pin --replace'"
    )
    # Refused before anything is judged: no report folder, no verdict cache.
    assert run_lexical(config) == 2
    assert capsys.readouterr().err.strip() == expected
    assert not config.judge.cache_path.exists()
    # ratchet says the same; pin --replace is the way out.
    config.reports.baseline.unlink()
    assert run_lexical(config) == 0
    config.reports.baseline.write_text(json.dumps(old), encoding="utf-8")
    capsys.readouterr()
    assert main(["--config", str(config.source), "baseline", "ratchet"]) == 2
    assert capsys.readouterr().err.strip() == expected
    assert main(["--config", str(config.source), "baseline", "pin", "--replace"]) == 0
    assert read_baseline(config.reports.baseline) is not None
    assert run_lexical(config) == 0


def _values(values: dict[str, float], types: dict[str, str]) -> QuestionValues:
    return QuestionValues(types, {"retrieval": {}, "judge": {"faithfulness": values}})


def test_ratchet_raises_a_type_only_where_the_run_is_shown_better(tmp_path: Path) -> None:
    factual = {f"f{i:02d}": "factual" for i in range(1, 13)}
    types = factual | {"n1": "negative", "n2": "negative"}
    path = tmp_path / "judge-baseline.json"
    write_baseline(
        path,
        Baseline(
            golden_hash="g",
            retrieval_fingerprint="rf",
            judge_fingerprint="jf",
            types=types,
            values={"retrieval": {}, "judge": {"faithfulness": dict.fromkeys(types, 1.0)}},
            pinned_from=["run1"],
        ),
    )
    # factual: eleven up to 2 (p = 2^-11: shown), f12 has no value (its verdict failed): it
    # keeps its pinned 1, so the type's pinned mean goes from 1 to 23/12. negative: both up a
    # point, a higher mean but two changes (p = 1/4): not raised.
    run = _values(dict.fromkeys(list(factual)[:11], 2.0) | {"n1": 2.0, "n2": 2.0}, types)
    updated, raised = ratchet_baseline(path, history_entry("run2"), run, GateRule())
    assert raised == [Raised("judge", "factual", "faithfulness", 1.0, pytest.approx(23 / 12))]
    assert updated.values["judge"]["faithfulness"] == (
        dict.fromkeys(list(factual)[:11], 2.0) | {"f12": 1.0, "n1": 1.0, "n2": 1.0}
    )
    assert updated.pinned_from == ["run1", "run2"]
    # A judge measured another way is left as it was.
    _, raised = ratchet_baseline(
        path,
        history_entry("run3", judge_fingerprint="other"),
        _values(dict.fromkeys(types, 2.0), types),
        GateRule(),
    )
    assert raised == []
    with pytest.raises(ConfigError, match="another golden set"):
        ratchet_baseline(path, history_entry("run4", golden_hash="h"), run, GateRule())
