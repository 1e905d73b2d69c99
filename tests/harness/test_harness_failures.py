"""Every way a bench can go wrong, with real processes: Ctrl-C and SIGTERM mid-trial, pgbench
failing, the server killed with SIGKILL, a busy port, a full disk, an unreachable server. Each
gives one clear message and a non-zero exit, stops the server, removes the temporary folder,
keeps finished runs and writes nothing for the unfinished trial."""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchkit import (
    Bench,
    alive,
    interrupt,
    is_root,
    postmaster_pid,
    processes_using,
    shared_tmp,
    wait_gone,
)

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize(("how", "status"), [("INT", 130), ("TERM", 143)])
def test_signal_mid_trial_keeps_finished_runs_only(bench: Bench, how: str, status: int):
    proc = bench.start(bench.tiny(seconds=3, repeats=2))
    try:
        work = bench.wait_for_trial(2)
        server = postmaster_pid(work)
        owner = pwd.getpwuid(os.stat(f"/proc/{server}").st_uid).pw_name
        interrupt(proc, how)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == status, stderr
    assert f"interrupted by SIG{how}" in stderr
    assert "kept 1 finished run file(s); the interrupted trial was not recorded" in stderr
    assert wait_gone(server), "the server is still running"
    assert not work.exists(), "the temporary folder is still there"
    assert not processes_using(work)
    (run,) = bench.run_files()
    assert stdout.splitlines()[0] == str(run)
    assert len([p for p in bench.raw_files() if p.name.endswith(".txt")]) == 1
    if is_root():
        assert owner == "pgbench-kb", "as root, the server must run as an unprivileged user"


def test_pgbench_failure_is_named_and_not_recorded(bench: Bench):
    (bench.root / "broken.sql").write_text("SELECT * FROM no_such_table;\n", encoding="utf-8")
    profile = bench.profile(
        "description: a script that fails\nscales: [1]\nclients: [1]\nduration_s: 2\n"
        "workloads:\n  - name: broken\n    scripts: [{file: broken.sql}]\n"
    )
    done = bench.run(profile)
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: pgbench failed (exit 2) in trial 1: ")
    assert 'relation "no_such_table" does not exist' in lines[0]
    assert "no run file written; the failed trial was not recorded" in done.stderr
    assert bench.run_files() == []
    assert not (bench.root / "data").exists()


def test_server_killed_mid_run(bench: Bench):
    proc = bench.start(bench.tiny(seconds=4))
    try:
        work = bench.wait_for_trial(1)
        server = postmaster_pid(work)
        os.kill(server, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert errors[0].startswith("error: the server died during trial 1 (pgbench exit 2)")
    assert bench.run_files() == []
    assert not work.exists()
    deadline = time.monotonic() + 10
    while processes_using(work) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_using(work), "server processes were left behind"


@contextlib.contextmanager
def _not_postgres_listener() -> Iterator[int]:
    """A TCP port held by a program that is not PostgreSQL (it hangs up on every client)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = sock.accept()
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        sock.close()


def test_busy_port(bench: Bench):
    """The throwaway server listens only on a private socket, so a port number already in use
    (by TCP, or by another PostgreSQL's socket in /tmp) cannot collide with it; a port that
    answers but is not PostgreSQL is a clear error for an existing server."""
    with _not_postgres_listener() as port:
        done = bench.run(bench.tiny(), KB_PGPORT=str(port), timeout=60)
        assert done.returncode == 0, done.stderr
        assert len(bench.run_files()) == 1

        done = bench.run(bench.tiny(), PGHOST="127.0.0.1", PGPORT=str(port), timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"error: cannot connect to the server at PGHOST=127.0.0.1 PGPORT={port}: "
    ), done.stderr
    assert len(bench.run_files()) == 1


def test_unreachable_existing_server(bench: Bench):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = bench.run(bench.tiny(), PGHOST="127.0.0.1", PGPORT=str(port), timeout=60)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"error: cannot connect to the server at PGHOST=127.0.0.1 PGPORT={port}: "
    )
    assert "Connection refused" in lines[0]
    assert bench.run_files() == []


@contextlib.contextmanager
def _tmpfs(size_mb: int) -> Iterator[Path]:
    if not is_root():
        pytest.skip("mounting a small tmpfs needs root: the full-disk test cannot run here")
    with shared_tmp("kb-full-disk-") as mountpoint:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(mountpoint)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): no full-disk test")
        try:
            yield mountpoint
        finally:
            subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def test_too_little_space_is_refused_before_starting(bench: Bench):
    with _tmpfs(64) as disk:
        done = bench.run(bench.tiny(), TMPDIR=str(disk))
        assert done.returncode == 1
        assert done.stderr.startswith("error: not enough free space for the throwaway server in ")
        assert "about 176 MB needed for scale 2, 6" in done.stderr
        assert list(disk.iterdir()) == []
    assert bench.run_files() == []


def test_disk_filling_up_during_a_trial(bench: Bench):
    with _tmpfs(200) as disk:
        bench.tmpdir = disk
        proc = bench.start(bench.tiny(seconds=6))
        try:
            work = bench.wait_for_trial(1)
            # Fill the disk under the running server.
            with contextlib.suppress(OSError), (disk / "filler").open("wb") as filler:
                chunk = b"\0" * (1 << 20)
                while True:
                    filler.write(chunk)
                    filler.flush()
            _, stderr = proc.communicate(timeout=60)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == 1
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, stderr
        assert "the disk holding the server's files is full" in errors[0]
        assert not work.exists()
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]
    assert bench.run_files() == []
    assert alive(os.getpid())
