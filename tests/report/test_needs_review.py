"""One definition of "needs review": the console, report.md, report.json and review.html count
the same questions on the shipped sample (the run record's ``needs_review``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.report.summary import console_summary


def test_every_view_counts_the_same_questions_as_needing_review(
    sample_config: Config, tmp_path: Path
) -> None:
    config = sample_config.with_overrides(
        judge={"cache_path": tmp_path / "cache.sqlite"}, reports={"dir": tmp_path / "reports"}
    )
    result = evaluate(config, backend="lexical")
    record = result.report
    expected = [row.question_id for row in record.needs_review]
    # The sample's human labels disagree with the lexical baseline on some answers: something
    # to count, so that equal counts say something.
    assert expected

    console = console_summary(record, result.folder.path)
    (head,) = [line for line in console if "verdicts need a look" in line]
    assert head.strip().startswith(f"{len(expected)} verdicts need a look")

    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    section = report_md.split("## Needs review", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- \*\*(.+?)\*\*:", section, flags=re.MULTILINE)
    assert listed == expected

    report_json = json.loads((result.folder.path / "report.json").read_text(encoding="utf-8"))
    assert list(report_json["needs_review"]) == expected

    page = (result.folder.path / "review.html").read_text(encoding="utf-8")
    data = json.loads(
        page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[
            0
        ]
    )
    assert [i["question_id"] for i in data["items"] if i["needs_review"]] == expected
