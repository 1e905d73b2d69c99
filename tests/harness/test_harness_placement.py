"""Where the bench puts the server's files, and who it credits (issue 35): the WAL on a
directory of its own (--wal-dir, WAL_DIR=, the profile's wal_dir:), said at the start and
recorded as storage.wal with its own path; the contributor named before anything runs."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import yaml

from benchkit import Bench, shared_tmp

pytestmark = pytest.mark.postgres


def _run(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_wal_on_a_second_directory_is_recorded_as_its_own_volume(bench: Bench) -> None:
    """Regression (issue 35): the throwaway server kept data and WAL together under TMPDIR and
    the WAL could not be placed elsewhere; storage.wal now names the WAL's own directory."""
    with shared_tmp("kb-harness-wal-") as wal:
        done = bench.run(bench.tiny(), "--wal-dir", str(wal), CONTRIBUTOR="Wal Tester")
        assert done.returncode == 0, done.stderr
        assert not list(wal.iterdir()), "the bench left its WAL folder behind"
    assert "credited as: Wal Tester (as you declared; change with" in done.stderr
    assert f"; WAL: {wal}/pgbench-kb-wal." in done.stderr
    (path,) = bench.run_files()
    run = _run(path)
    data, wal_volume = run["storage"]["data"], run["storage"]["wal"]
    assert wal_volume["path"].startswith(f"{wal}/pgbench-kb-wal.")
    assert not wal_volume["path"].startswith(data["path"])
    assert wal_volume["device"] and wal_volume["filesystem"]
    assert wal_volume["placement"] in {"with-data", "own-disk", "tmpfs"}
    assert run["provenance"]["contributor"] == "Wal Tester"


def test_profile_wal_dir_and_its_errors(bench: Bench) -> None:
    """A profile's wal_dir that is no directory stops the bench before anything starts."""
    profile = bench.profile(bench.tiny().read_text(encoding="utf-8") + "wal_dir: nowhere\n")
    done = bench.run(profile)
    assert done.returncode == 1
    assert f"error: the profile's wal_dir: {profile.parent / 'nowhere'} is not a directory" in (
        done.stderr
    )
    assert not bench.run_files()


def test_data_on_tmpfs_is_warned_about(bench: Bench) -> None:
    """Regression (issue 35): on a tmpfs /tmp the bench measured memory without a word."""
    if not Path("/dev/shm").is_dir() or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable tmpfs at /dev/shm")
    shm = Path("/dev/shm") / f"kb-harness-{os.getpid()}"
    shm.mkdir(mode=0o755)
    try:
        done = bench.run(bench.tiny(seconds=1), TMPDIR=str(shm))
        assert done.returncode == 0, done.stderr
        assert "warning: the data directory is on tmpfs (memory)" in done.stderr
    finally:
        for leftover in sorted(shm.rglob("*"), reverse=True):
            leftover.rmdir() if leftover.is_dir() else leftover.unlink()
        shm.rmdir()


def test_kill_9_the_watchdog_removes_the_wal_folder(bench: Bench) -> None:
    """The WAL folder a bench made in WAL_DIR goes with its temporary folder after kill -9."""
    with shared_tmp("kb-harness-wal-") as wal:
        proc = bench.start(bench.tiny(seconds=20), WAL_DIR=str(wal))
        try:
            work = bench.wait_for_trial(1)
            assert list(wal.glob("pgbench-kb-wal.*")), "no WAL folder while the trial runs"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            deadline = time.monotonic() + 20
            while (work.exists() or list(wal.iterdir())) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not list(wal.iterdir()), "the watchdog left the WAL folder"
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=10)
