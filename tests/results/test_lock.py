"""One run at a time per reports folder."""

from collections.abc import Callable

import pytest

from judge.config import Config
from judge.results.lock import run_lock
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


def test_a_second_run_is_refused_while_the_lock_is_held(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    with run_lock(config.reports.dir):
        assert run_lexical(config) == 2
    assert "another judge run (pid " in capsys.readouterr().err
    assert run_lexical(config) == 0  # released with its holder
