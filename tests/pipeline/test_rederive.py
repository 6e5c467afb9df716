"""``judge report``'s rebuild (``judge.pipeline.rederive``): the record rebuilt from the folder's
run and the cache gives back the folder the run wrote, and rendering from the record alone
(the common case) imports none of the rebuild (issue 35: a tenth of ``judge report``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from judge.config import Config
from judge.pipeline.rederive import rebuild
from judge.record.store import ReportsDir
from tests.conftest import REPO, run_lexical

Tiny = Callable[..., Config]


def test_a_rebuild_gives_back_the_record_the_run_wrote(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    reports = ReportsDir(config.reports.dir)
    folder = reports.folder(None)
    written = folder.record()
    warnings: list[str] = []
    again = rebuild(config, reports, folder, folder.manifest, warnings.append)
    assert warnings == []
    assert ReportsDir(config.reports.dir).folder(again.name).record().model_dump(
        mode="json"
    ) == written.model_dump(mode="json")


def test_rendering_from_the_record_imports_none_of_the_rebuild() -> None:
    code = (
        "import sys, judge.pipeline.report; "
        "print(sorted(m for m in ('judge.pipeline.rederive', 'judge.pipeline.build', "
        "'judge.judging.cache', 'judge.record.build') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip() == "[]"
