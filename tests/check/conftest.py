"""Shared set-up for the kb check tests: a scratch project root with the test hardware note and
raw output, into which a case file is copied where a contributor would put it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURE_ROOT = HERE / "root"
GOOD = HERE / "good"
BAD = HERE / "bad"


def stage(case: Path, root: Path) -> Path:
    """Copy ``case`` into ``root`` (runs under data/runs, notes under content/hardware)."""
    if case.suffix == ".md":
        dest = root / "content" / "hardware" / case.name
        shutil.copyfile(case, dest)
    elif case.is_dir():
        dest = root / "data" / "runs" / case.name
        shutil.copytree(case, dest)
    else:
        dest = root / "data" / "runs" / case.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(case, dest)
    return dest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root holding content/hardware/test-box.md and the raw output of the good run."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURE_ROOT, root)
    return root
