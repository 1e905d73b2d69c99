"""kb import is all or nothing whatever signal arrives, its files follow the umask, and kb check
reports what an interrupted write could leave (issue 8; each test names its regression)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pgbench_kb.runs.check import check_paths, format_report
from pgbench_kb.runs.runfile import write_new_file, write_new_files
from test_import import MEASURED, OUTPUT, WHEN

# The real `kb import` (its CLI entry point) in a child process, with fsync slowed down so a
# signal reliably lands while the files are being written; it prints "writing" when the first
# file is about to be flushed.
CHILD = textwrap.dedent(
    """
    import os, sys, time
    real_fsync = os.fsync
    def slow_fsync(fd):
        print("writing", flush=True)
        time.sleep(0.4)
        real_fsync(fd)
    os.fsync = slow_fsync
    from pgbench_kb.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def _project(tmp_path: Path) -> Path:
    notes = tmp_path / "content" / "hardware"
    notes.mkdir(parents=True)
    (notes / "box.md").write_text(
        "---\nschema_version: 1\ntitle: Box\ndescription: A box.\nroles: [server]\n---\nA box.\n",
        encoding="utf-8",
    )
    (tmp_path / "data" / "runs").mkdir(parents=True)
    return tmp_path


def _data_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*") if p.is_file())


@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1]
)
def test_a_signal_during_the_writes_leaves_all_or_nothing(tmp_path: Path, signum: int) -> None:
    """Regression: SIGTERM during kb import left the raw copy without its run file, or a hidden
    .tmp file in data/, which kb check did not notice."""
    root = _project(tmp_path)
    args = ["import", "--root", str(root), str(OUTPUT), "--machine", "box", "--set", WHEN]
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *args, *MEASURED],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # The signal's usual action, as from a shell: a suite started under nohup (SIGHUP
        # ignored) would otherwise pass that on, and kb import rightly ignores it then.
        preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL),
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "writing\n"
    child.send_signal(signum)
    child.send_signal(signum)  # a second one while the first is pending changes nothing
    child.communicate(timeout=60)
    assert child.returncode != 0
    files = _data_files(root)
    hidden = [f for f in files if Path(f).name.startswith(".")]
    assert hidden == []
    assert len(files) == 2, files  # all: the raw copy and its run file (never one of them)
    report = check_paths([], root=root)
    assert report.errors == [], format_report(report)


def test_a_failed_write_removes_what_it_wrote(tmp_path: Path) -> None:
    """The other half of all-or-nothing: when the second file cannot be written, the first
    is removed again and no temporary file stays."""
    first, second = tmp_path / "a" / "one.txt", tmp_path / "b"
    second.write_text("a file where a folder is needed")
    with pytest.raises(Exception, match="cannot write"):
        write_new_files([(first, b"1"), (second / "two.txt", b"2")])
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["b"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_new_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    """Regression: run files, raw files and notes were created 0600 (the temporary file's
    mode), whatever the umask."""
    previous = os.umask(umask)
    try:
        write_new_file(tmp_path / "run.yaml", b"x")
    finally:
        os.umask(previous)
    assert (tmp_path / "run.yaml").stat().st_mode & 0o777 == mode


def test_kb_check_reports_stray_raw_and_temporary_files(tmp_path: Path) -> None:
    """Regression: a raw file no run refers to, or a hidden .tmp file an interrupted write left
    in data/, passed kb check unnoticed."""
    root = _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pgbench_kb", "import", "--root", str(root), str(OUTPUT),
         "--machine", "box", "--set", WHEN, *MEASURED],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    raw = next((root / "data" / "raw").rglob("*.txt"))
    stray = raw.with_name("20261120T100000Z-box-tpcb-like-s2-c4-00000000.txt")
    stray.write_bytes(raw.read_bytes())
    temp = root / "data" / "runs" / ".x.yaml.k2j3.tmp"
    temp.write_text("half")
    report = check_paths([], root=root)
    text = format_report(report).replace(str(root) + "/", "")
    assert text.splitlines() == [
        "data/runs/.x.yaml.k2j3.tmp: (file): a temporary file left by an interrupted kb import "
        "(nothing refers to it): remove it",
        f"{stray.relative_to(root).as_posix()}: (file): a raw file no run file refers to (left "
        "by an interrupted kb import, or its run file was removed): remove it, or import the "
        "run again",
        "checked 1 run file(s) and 1 hardware note(s): 2 error(s), 0 warning(s)",
    ]
    stray.unlink()
    temp.unlink()
    assert check_paths([], root=root).errors == []
