"""The pinned baseline: pin once, ratchet up only, gate against it."""

import json
from collections.abc import Callable

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import run_lexical, worse_run

Tiny = Callable[..., Config]


def test_baseline_pin_ratchet_and_gate(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    assert run_lexical(tiny(run=worse_run())) == 0
    assert main(["--config", toml, "baseline", "pin"]) == 0
    baseline = json.loads(config.reports.baseline.read_text(encoding="utf-8"))
    assert baseline["metrics"]["retrieval"]["factual"]["mrr"] == pytest.approx(0.2)
    # Pinning again would silently replace (possibly lower) it: refused without --replace.
    assert main(["--config", toml, "baseline", "pin"]) == 2
    assert "judge baseline ratchet" in capsys.readouterr().err
    # A better run ratchets it up ...
    assert run_lexical(tiny()) == 0
    assert main(["--config", toml, "baseline", "ratchet"]) == 0
    assert "factual mrr: 0.200 → 1.000" in capsys.readouterr().out
    # ... a worse run never lowers it, and now fails the gate against it.
    assert run_lexical(tiny(run=worse_run())) == 0
    assert main(["--config", toml, "baseline", "ratchet"]) == 0
    assert "0 metric(s) raised, none lowered" in capsys.readouterr().out
    assert (
        json.loads(config.reports.baseline.read_text(encoding="utf-8"))["metrics"]["retrieval"][
            "factual"
        ]["mrr"]
        == 1.0
    )
    assert run_lexical(tiny(run=worse_run()), "--fail-on-regression") == 1
    assert "retrieval vs baseline: " in capsys.readouterr().out
