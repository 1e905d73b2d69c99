"""Fixtures shared by every test folder (helpers are in kbtest.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kbtest import CHROMIUM_ARGS, CHROMIUM_CANDIDATES, REPO, SITE_SOURCES


@pytest.fixture
def project_root(tmp_path: Path) -> Path:
    """A throwaway project root: the site sources of this checkout, empty data/."""
    root = tmp_path / "kb"
    root.mkdir()
    for name in SITE_SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name)
        else:
            shutil.copy2(source, root / name)
    (root / "data" / "runs").mkdir(parents=True)
    return root


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium. Missing: a failure under CI=true, a loud skip elsewhere."""
    for candidate in CHROMIUM_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    reason = (
        "Chromium is not installed (apt-get install chromium): browser tests cannot run. "
        ".ci/run installs it on a fresh machine."
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def browser(chromium_path: str):
    """A real headless Chromium driven by Playwright (Debian's binary, not a download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()
