"""Errors through the real CLI stay one line: named errors instead of tracebacks, and control
characters escaped (regressions named in each test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

KB = str(Path(sys.executable).parent / "kb")


def kb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KB, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_plan_known_settings_missing_or_a_folder_is_one_line(tmp_path: Path) -> None:
    """Regression: kb plan --known-settings /nonexist (or a folder) printed a traceback."""
    missing = tmp_path / "nonexist"
    done = kb("plan", "smoke", "--known-settings", str(missing))
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"error: {missing}: --known-settings: cannot read: No such file or directory (give the "
        "file `postgres --describe-config` wrote)\n",
    )
    done = kb("plan", "smoke", "--known-settings", str(tmp_path))
    assert done.stderr == (
        f"error: {tmp_path}: --known-settings: cannot read: Is a directory (give the file "
        "`postgres --describe-config` wrote)\n"
    )


def test_error_line_with_a_newline_in_the_path_stays_one_line(tmp_path: Path) -> None:
    """Regression: a path with a newline or an escape sequence split the error line."""
    evil = tmp_path / "out\n\x1b[2Jput.txt"
    done = kb("import", str(evil), "--root", str(tmp_path), "--machine", "m")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "\x1b" not in done.stderr
    assert "\\x1b[2Jput.txt: cannot read" in done.stderr
