"""Pull requests built as real git commits in a temporary repository, for the tests of
``kb review``: a small base (the site sources, the day-one hardware notes, answers and
claims, no runs), a newcomer's honest pull request and a hostile one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from kbtest import REFERENCE_OUTPUTS, REPO, SITE_SOURCES, run_kb

NEWCOMER_NOTE = """---
schema_version: 1
title: Ada's test box
roles: [server]
description: A desktop with one NVMe drive, used for the first runs.
---
A desktop with one NVMe drive.
"""
#: tps of the newcomer's three repeats (the reference output's, then two near it).
REPEATS = ("124.885813", "126.102233", "123.407719")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def base_repository(root: Path) -> Path:
    """A repository whose ``main`` holds the site sources, the data files but the runs, and
    some code (so changed code is known as such)."""
    root.mkdir()
    for name in SITE_SOURCES:
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, root / name)
    for name in ("answers.yaml", "claims.yaml"):
        (root / "data").mkdir(exist_ok=True)
        shutil.copy2(REPO / "data" / name, root / "data" / name)
    (root / "data" / "runs").mkdir()
    (root / "data" / "runs" / ".gitkeep").write_text("", encoding="utf-8")
    (root / "scripts" / "pgbench_kb" / "review").mkdir(parents=True)
    shutil.copy2(REPO / "scripts/pgbench_kb/review/diff.py", root / "scripts/pgbench_kb/review")
    (root / ".github" / "workflows").mkdir(parents=True)
    shutil.copy2(REPO / ".github/workflows/check.yml", root / ".github/workflows/check.yml")
    shutil.copy2(REPO / "Makefile", root / "Makefile")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def add_newcomer_runs(root: Path, contributor: str = "Ada Newcomer") -> list[Path]:
    """A new machine's note and three repeats of one configuration, imported with kb import
    (its raw outputs under data/raw/)."""
    (root / "content" / "hardware" / "ada-box.md").write_text(NEWCOMER_NOTE, encoding="utf-8")
    reference = (REFERENCE_OUTPUTS / "wiki-8.0-raid5-4x10k.txt").read_text(encoding="utf-8")
    made = []
    for index, tps in enumerate(REPEATS, start=1):
        output = root.parent / f"{root.name}-out-{index}.txt"
        output.write_text(
            reference.replace("124.885813", tps).replace("124.728272", tps[:-2] + "00"),
            encoding="utf-8",
        )
        done = run_kb(
            "import", str(output), "--root", str(root), "--machine", "ada-box",
            "--set", f"provenance.recorded_at=2026-11-0{index}T10:00:00Z",
            "--set", f"provenance.contributor={contributor}",
            "--set", "postgres.version=17.2",
            "--set", "postgres.settings={}",
            "--set", "storage.data.array.media=ssd",
            "--set", "repeat.group=ada-box-tpcb-c100",
            "--set", f"repeat.index={index}",
            "--set", "repeat.of=3",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        made.append(Path(done.stdout.strip()))
    return made
