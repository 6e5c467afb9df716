"""The pinned baseline: per-question values, pinned once, ratcheted up only, gated against; a
baseline of the old format (per-type means) is refused with what to do."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from judge.errors import ConfigError
from judge.results.baseline import Baseline, Raised, ratchet_baseline, read_baseline, write_baseline
from judge.results.compare import QuestionValues
from tests.conftest import history_entry, run_lexical, worse_run
from tests.results.helpers import one_question_counts

Tiny = Callable[..., Config]


def test_baseline_pin_ratchet_and_gate(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    tiny = one_question_counts(tiny)
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    assert run_lexical(tiny(run=worse_run())) == 0
    assert main(["--config", toml, "baseline", "pin"]) == 0
    assert "(4 questions)" in capsys.readouterr().out
    baseline = json.loads(config.reports.baseline.read_text(encoding="utf-8"))
    assert baseline["format_version"] == 2
    assert baseline["values"]["retrieval"]["mrr"]["q1"] == pytest.approx(0.2)
    assert baseline["types"]["q1"] == "factual"
    # Pinning again would silently replace (possibly lower) it: refused without --replace.
    assert main(["--config", toml, "baseline", "pin"]) == 2
    assert "judge baseline ratchet" in capsys.readouterr().err
    # A better run ratchets it up ...
    assert run_lexical(tiny()) == 0
    assert main(["--config", toml, "baseline", "ratchet"]) == 0
    assert "retrieval ▲ factual mrr: 0.200 → 1.000 (+0.800)" in capsys.readouterr().out
    # ... a worse run never lowers it, and now fails the gate against it.
    assert run_lexical(tiny(run=worse_run())) == 0
    assert main(["--config", toml, "baseline", "ratchet"]) == 0
    assert "0 per-type metric(s) raised, none lowered" in capsys.readouterr().out
    pinned = json.loads(config.reports.baseline.read_text(encoding="utf-8"))
    assert pinned["values"]["retrieval"]["mrr"]["q1"] == 1.0
    assert len(pinned["pinned_from"]) == 3
    assert run_lexical(tiny(run=worse_run()), "--fail-on-regression") == 1
    out = capsys.readouterr().out
    assert "retrieval vs baseline: " in out
    assert "  ▼ factual mrr: 1.000 → 0.200 (-0.800 [-0.800, -0.800], 1 question)" in out


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


def test_ratchet_raises_a_type_only_where_its_mean_rises(tmp_path: Path) -> None:
    types = {"f1": "factual", "f2": "factual", "n1": "negative", "n2": "negative"}
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
    # factual: f1 up to 2, f2 has no value (its verdict failed): it keeps its pinned 1, so the
    # mean is (2 + 1) / 2 = 1.5 > 1, raised. negative: one up, one down: 1.0, not raised.
    run = _values({"f1": 2.0, "n1": 2.0, "n2": 0.0}, types)
    updated, raised = ratchet_baseline(path, history_entry("run2"), run)
    assert raised == [Raised("judge", "factual", "faithfulness", 1.0, 1.5)]
    assert updated.values["judge"]["faithfulness"] == {"f1": 2.0, "f2": 1.0, "n1": 1.0, "n2": 1.0}
    assert updated.pinned_from == ["run1", "run2"]
    # A judge measured another way is left as it was.
    _, raised = ratchet_baseline(
        path,
        history_entry("run3", judge_fingerprint="other"),
        _values(dict.fromkeys(types, 2.0), types),
    )
    assert raised == []
    with pytest.raises(ConfigError, match="another golden set"):
        ratchet_baseline(path, history_entry("run4", golden_hash="h"), run)
