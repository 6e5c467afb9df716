"""The review page's tests share one headless Chromium per test module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.report import review_screens


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's ``chromium`` driven by Playwright; missing, a skip here and a failure in CI
    (``.ci/run`` installs it)."""
    if review_screens.CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing; .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with review_screens.chromium(sync_api) as launched:
        yield launched
