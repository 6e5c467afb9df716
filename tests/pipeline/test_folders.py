"""``judge.pipeline.folders``: saved report folders read back for ``show`` and ``diff``."""

from collections.abc import Callable

from judge.config import Config
from judge.pipeline.folders import diff_folders, folder_record
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


def test_a_folder_against_itself_differs_in_nothing(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    latest = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    record = folder_record(config, None)
    assert record.manifest.folder == latest
    assert len(record.questions) == 4
    diff = diff_folders(config, latest, "latest")
    assert (diff.old, diff.new, diff.differs, diff.flips) == (latest, latest, [], [])
