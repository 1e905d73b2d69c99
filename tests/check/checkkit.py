"""Helpers for the kb check tests (fixtures are in conftest.py): where the cases live, and how a
case file is put where a contributor would put it."""

from __future__ import annotations

import shutil
from pathlib import Path

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
