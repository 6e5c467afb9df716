"""The files of a report folder: `judge report` renders them again from the folder."""

import json
from collections.abc import Callable

from judge.cli import main
from judge.config import Config
from tests.conftest import run_lexical, worse_run

Tiny = Callable[..., Config]


def test_report_rerenders_a_damaged_report(tiny: Tiny) -> None:
    config = tiny()
    assert config.source is not None
    toml = str(config.source)
    assert run_lexical(config) == 0
    assert run_lexical(tiny(run=worse_run())) == 0  # a folder with a comparison in its report
    second = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    report_md = config.reports.dir / second / "report.md"
    before = json.loads((config.reports.dir / second / "report.json").read_text(encoding="utf-8"))
    report_md.write_text("damaged", encoding="utf-8")
    assert main(["--config", toml, "report", second]) == 0
    assert report_md.read_text(encoding="utf-8").startswith(f"# Report {second}")
    # The same comparisons, intervals included: each bootstrap is seeded by what it compares.
    after = json.loads((config.reports.dir / second / "report.json").read_text(encoding="utf-8"))
    assert after["comparisons"] == before["comparisons"]
    assert any(c["moved"] for comp in after["comparisons"] for c in comp["changes"])
