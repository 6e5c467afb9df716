"""For CI systems and scripts: the gate as JUnit XML, and a JSON summary of a run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judge.formatting import terminal_text
from judge.record.model import Record
from judge.results.decision import Decision

#: What XML 1.0 cannot carry at all, even escaped: the C0 controls but tab and line breaks,
#: lone surrogates, and the noncharacters U+FFFE and U+FFFF (a type name may hold one: TOML
#: allows them).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: object) -> str:
    """Data as the JUnit file shows it: ``terminal_text`` (no escape sequence reaches a CI
    log), and what XML cannot carry shown as its escape (``\\uffff``), so the file is
    well-formed whatever a name holds."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m[0]):04x}", terminal_text(text))


def junit_xml(report: Record, fail_on_regression: bool, require_baseline: bool) -> str:
    """One test case per gate check; a check fails the suite only where the flags say it does
    (a regression with ``fail_on_regression``, a missing baseline with ``require_baseline``);
    otherwise a failed check is reported as skipped, with its message.

    ElementTree escapes < & > but writes control characters as they are, which XML 1.0 does
    not allow (a CI server would reject the file): data in it is shown as ``xml_text``.
    """
    # Imported here: a run without --junit never loads it (about 9 ms of start-up).
    from xml.etree import ElementTree as ET

    suite = _suite(report)
    gate = report.gate
    failures = skipped = 0
    for check in gate.checks:
        name, message = xml_text(check.name), xml_text(check.message)
        case = ET.SubElement(suite, "testcase", classname="judge.gate", name=name)
        if check.moves:
            # Every move that is not noise, with its numbers, whether the check passed or not.
            properties = ET.SubElement(case, "properties")
            for move in check.moves:
                ET.SubElement(
                    properties,
                    "property",
                    name=xml_text(f"{move.direction} {move.section} {move.type} {move.metric}"),
                    value=xml_text(move.describe(first=0)),
                )
        ET.SubElement(case, "system-out").text = message
        if check.passed:
            continue
        # A crossed bar always fails (``--bars`` and the nightly ask for them); the rest as the
        # flags say.
        enforced = (
            True
            if check.kind == "bar"
            else fail_on_regression
            if check.kind == "regression"
            else require_baseline
        )
        if enforced:
            failures += 1
            ET.SubElement(case, "failure", message=message, type=check.kind).text = message
        else:
            skipped += 1
            ET.SubElement(case, "skipped", message=f"not enforced: {message}")
    suite.set("tests", str(len(gate.checks)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    ET.indent(suite)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )


def _suite(report: Record) -> Any:
    """The JUnit suite element, with the answers below the baseline or the season since a date
    (never a failure) as its properties, ``below <section> <metric> <question>``."""
    from xml.etree import ElementTree as ET

    suite = ET.Element(
        "testsuite",
        name=f"judge gate · {xml_text(report.manifest.folder)}",
        timestamp=report.manifest.started_at,
        time=f"{report.manifest.judge_seconds:.3f}",
    )
    if report.gate.lasting:
        below = ET.SubElement(suite, "properties")
        for x in report.gate.lasting:
            name = xml_text(f"below {x.section} {x.metric} {x.question_id}")
            ET.SubElement(below, "property", name=name, value=xml_text(x.describe()))
    return suite


def summary_json(report: Record, decision: Decision, folder: str) -> dict[str, Any]:
    """What a script needs to act on a run without parsing its text: the verdict and exit code
    are the run's ``decision``, the same the console printed."""
    gate = report.gate
    return {
        "exit_code": decision.exit_code,
        "verdict": decision.verdict,
        "folder": folder,
        "judge": report.manifest.judge.describe(),
        "status_counts": report.manifest.status_counts,
        "adapter_failed": sorted(f.question_id for f in report.adapter_failed),
        "unjudged": list(gate.unjudged),
        "regressions": [c.to_json() for c in gate.regressions],
        "listed": [c.to_json() for c in gate.listed],
        "lasting": [x._asdict() for x in gate.lasting],
        "not_compared": gate.missing,
        "diagnoses": {
            d.type: {
                "counts": d.counts,
                "total": d.total,
                "fix_first": d.fix_first,
                "sentence": d.sentence,
            }
            for d in report.diagnoses
        },
        "checks": [c._asdict() | {"moves": [m.to_json() for m in c.moves]} for c in gate.checks],
        "tables": {"judge": report.judge.to_json(), "retrieval": report.retrieval.to_json()},
    }


def ci_files(
    report: Record,
    decision: Decision,
    folder: str,
    paths: tuple[Path | None, Path | None],
) -> dict[Path, str]:
    """The files a run's ``--junit`` and ``--json`` asked for (``paths``, None when not asked),
    path → text: the gate as JUnit XML (``junit_xml``) and the summary (``summary_json``,
    indented, ending in a newline)."""
    junit, summary = paths
    files: dict[Path, str] = {}
    if junit is not None:
        files[junit] = junit_xml(report, decision.fail_on_regression, decision.require_baseline)
    if summary is not None:
        text = json.dumps(summary_json(report, decision, folder), ensure_ascii=False, indent=2)
        files[summary] = text + "\n"
    return files
