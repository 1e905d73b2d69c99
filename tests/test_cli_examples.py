"""Every `kb COMMAND --help` example runs as written (issue 8: `kb import --help`'s example
failed as written). Each example line is run by bash in a copy of the repository, with the files
it names put there from the test fixtures, and must exit 0."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kbtest import REFERENCE_OUTPUTS, REPO, VENV_BIN, copy_day_one, run_kb
from pgbench_kb.cli import COMMANDS

#: The files the examples name, as a user would have them: from the parser's fixtures.
EXAMPLE_FILES = {
    "pgbench-output.txt": REFERENCE_OUTPUTS / "pg18-tpcb-P1-r.txt",
    "out.txt": REFERENCE_OUTPUTS / "pg18-tpcb-P1-r.txt",
    "pgbench_log.1234": REFERENCE_OUTPUTS / "pg18-real-per-thread-logs-merged" / "pgbench_log.5158",
    "pgbench_log.1234.1": REFERENCE_OUTPUTS
    / "pg18-real-per-thread-logs-merged"
    / "pgbench_log.5158.1",
}
#: What the examples read of the repository (the site's sources for `hugo`).
COPIED = ("config.toml", "layouts", "static", "content", "data", "docs", "scripts")


def examples(name: str) -> list[str]:
    done = run_kb(name, "--help")
    assert done.returncode == 0, done.stderr
    text = done.stdout.split("example:", 1)[1]
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A copy of the repository (the shipped knowledge as committed, its published history
    alone: the examples must run, on any runs) with the example files, committed on main."""
    root = copy_day_one(tmp_path / "repo", transcribed_only=True)
    for name in COPIED:
        source = REPO / name
        if (root / name).exists():
            continue
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(source, root / name)
    for name, source in EXAMPLE_FILES.items():
        shutil.copyfile(source, root / name)
    # A repository with one commit on main, for `kb diff main`.
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
        subprocess.run(git, cwd=root, check=True, capture_output=True)
    return root


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_every_help_example_runs_as_written(name: str, sandbox: Path) -> None:
    lines = examples(name)
    assert lines and all(line.startswith("kb ") for line in lines), lines
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    for line in lines:
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {line}"],
            cwd=sandbox,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"`{line}` failed:\n{done.stdout[-2000:]}\n{done.stderr}"
        assert "Traceback" not in done.stderr
