"""Fixtures for the kb check tests: a scratch project root with the test hardware note and raw
output (helpers are in checkkit.py; test modules never import conftest)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from checkkit import FIXTURE_ROOT


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root holding content/hardware/test-box.md and the raw output of the good run."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURE_ROOT, root)
    return root


@pytest.fixture
def contributed(project: Path) -> Path:
    """``project`` with the good run file in data/runs (its raw output referred to): a whole
    project root `kb check` finds no error in, for the attacks of test_pull_requests.py."""
    from checkkit import good_run, write

    write(project, good_run())
    return project
