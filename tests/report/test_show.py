"""`judge show` (one item as the judge saw it) and `judge diff` (two runs), on real runs."""

from collections.abc import Callable

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import run_lexical, worse_run
from tests.results.helpers import one_question_counts

Tiny = Callable[..., Config]


def test_show_and_diff(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    tiny = one_question_counts(tiny)
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    assert run_lexical(config) == 0
    first = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    assert run_lexical(tiny(run=worse_run())) == 0
    second = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    capsys.readouterr()
    assert main(["--config", toml, "show", "q2"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("q2 · procedural · tune · faithfulness")
    assert "⟦" in shown and "⟧" in shown  # the quote, marked without colours off a terminal
    assert main(["--config", toml, "diff", first, second]) == 0
    diff = capsys.readouterr().out
    assert "note: the RAG output differs between the two runs" in diff
    assert (
        "compared question by question (margin 0.05 on 0-1 metrics, 0.1 on 0-2 scores; at least "
        "1 question)"
    ) in diff
    assert "\nretrieval: 6 regressed, 0 improved, 0 listed (too few questions to call)" in diff
    assert (
        "  ▼ factual mrr: 1.000 → 0.200 (-0.800 [-0.800, -0.800], 1 question); moved: q1 1→0.200"
    ) in diff
    assert main(["--config", toml, "show", "q9"]) == 2
