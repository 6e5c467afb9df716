"""The README's times are docs/benchmarks.md's: each figure the README quotes is a row of the
benchmarks' table of README times (with the machine and load it was measured on), and the
README says nothing the table does not hold."""

from __future__ import annotations

import re

from tests.conftest import REPO

SECTION = "## The README's times (issue 33, 2026-12-03)"


def _quoted() -> list[str]:
    """The third column ("the README says") of the benchmarks' table of README times."""
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return [row.split(" | ")[2].strip() for row in rows[1:]]  # the header row left out


def test_every_time_in_the_readme_is_a_measured_figure_of_the_benchmarks() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    quoted = _quoted()
    assert len(quoted) >= 5
    for figure in (
        "about 15 minutes",
        "about 2.5 minutes",
        "about 13 minutes",
        "about 7.5 minutes",
    ):
        assert figure in quoted, figure
        assert figure in readme, figure
    assert "about 21 minutes at a load of 11–17" in readme
    # the setup paragraph's times: each a figure of the table (no "about 8 minutes" left)
    setup = readme.split("Needs Python 3.11+", 1)[1].split("What `make judge` prints", 1)[0]
    said = re.findall(r"about [0-9.]+ (?:minutes|seconds)(?: at a load of [0-9–]+)?", setup)
    measured = set(quoted) | {"about 3 seconds"}  # the cache
    assert said and set(said) <= measured, sorted(set(said) - measured)
