"""The storage fingerprint and the emulated commit flush latency (issues #36 item 2 and #30
item 1): a real trial records storage.flush and the server's and pgbench's CPU apart; a trial
under flush_ms runs its server under strace and pg_test_fsync, under the same injection,
reaches the target; without strace the bench stops before anything starts; a profile with a
bad flush_ms is refused at its line."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from benchkit import KB, Bench, interrupt, postmaster_pid, processes_using, wait_gone


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _strace_pids() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "strace":
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.postgres
def test_a_trial_records_the_storage_fingerprint_and_the_cpu_apart(bench: Bench):
    done = bench.run(bench.tiny(seconds=2), timeout=150)
    assert done.returncode == 0, done.stderr
    assert "measuring the flush latency" in done.stderr
    (run_path,) = bench.run_files()
    run = _load(run_path)
    flush = run["storage"]["flush"]
    assert flush["tool"] == "pg_test_fsync"
    assert flush["wal_sync_method"] == "fdatasync"  # Linux's default
    assert flush["emulated"] is None and flush["unavailable"] is None
    for label in ("wal", "data"):
        folder = flush[label]
        assert folder["path"].startswith(str(bench.tmpdir))
        assert folder["device"]
        assert 0 < folder["sync_method_ms"] < 1000
        assert 0 < folder["write_flush_8k_ms"] < 1000
        assert 1 <= folder["ops"] <= 200
    assert flush["wal"]["path"].endswith("pg_wal")
    # No test file is left in the cluster's folders.
    assert not list(bench.tmpdir.rglob("kb-flush-*"))
    load = run["machine_load"]
    assert load["server_cpu_s"] > 0 and load["client_cpu_s"] > 0
    # The two are parts of the bench's own CPU (which also holds the progress watcher).
    assert load["server_cpu_s"] + load["client_cpu_s"] <= load["bench_cpu_s"] + 0.02
    # The drafted hardware note gives the figure.
    note = (bench.root / "content" / "hardware" / "harness-test.md").read_text()
    assert "The bench harness measured the WAL flush" in note


@pytest.mark.postgres
def test_an_emulated_flush_latency_reaches_its_target_and_leaves_no_tracer(bench: Bench):
    # 20 ms: far above this disk's flush (about 0.25 ms), so the busy machine's noise is small
    # against it.
    profile = bench.profile(
        "description: One trial under an emulated 20 ms flush.\n"
        "scales: [2]\nclients: [2]\nworkloads: [tpcb-like]\nduration_s: 2\n"
        "log_sampling_rate: 0.05\nflush_ms: 20\n"
    )
    before = set(_strace_pids())
    done = bench.run(profile, timeout=150)
    assert done.returncode == 0, done.stderr
    assert "flush 20: checking the emulated latency" in done.stderr
    (run_path,) = bench.run_files()
    run = _load(run_path)
    emulated = run["storage"]["flush"]["emulated"]
    assert emulated["method"] == "strace-inject"
    assert emulated["target_ms"] == 20.0 and emulated["traced_only"] is False
    native = run["storage"]["flush"]["wal"]["write_flush_8k_ms"]
    assert emulated["added_us"] == round((20 - native) * 1000)
    # Generous: a busy machine's flush wanders by milliseconds.
    assert 14 <= emulated["measured_ms"] <= 40, emulated
    assert 14 <= emulated["measured_write_flush_8k_ms"] <= 40, emulated
    # Every commit waited for a 20 ms flush: 2 clients cannot pass 100 commits a second.
    assert run["results"]["tps"] < 110
    assert set(_strace_pids()) <= before, "strace was left running"
    assert not processes_using(bench.tmpdir)


@pytest.mark.postgres
def test_ctrl_c_twice_stops_the_traced_server_and_its_tracer(bench: Bench):
    profile = bench.profile(
        "description: One trial under an emulated 10 ms flush.\n"
        "scales: [2]\nclients: [2]\nworkloads: [tpcb-like]\nduration_s: 20\n"
        "log_sampling_rate: 0.05\nflush_ms: 10\n"
    )
    proc = bench.start(profile)
    try:
        work = bench.wait_for_trial(1, timeout=120)
        server = postmaster_pid(work)
        status = Path(f"/proc/{server}/status").read_text()
        tracer = int(status.split("TracerPid:")[1].split()[0])
        assert tracer > 0, "the server is not traced"
        assert Path(f"/proc/{tracer}/comm").read_text().strip() == "strace"
        interrupt(proc, "INT")
        time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            interrupt(proc, "INT")
        _, stderr = proc.communicate(timeout=90)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert "interrupted by SIGINT" in stderr
    assert wait_gone(server), "the server is still running"
    assert wait_gone(tracer), "strace is still running"
    assert not work.exists()
    assert not processes_using(work)
    assert bench.run_files() == []


def _path_without(program: str, folder: Path) -> str:
    """A PATH of symbolic links to every program on today's PATH but ``program``."""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            link = folder / name
            if name != program and not link.exists() and not link.is_symlink():
                link.symlink_to(os.path.join(directory, name))
    return str(folder)


@pytest.mark.postgres
def test_without_strace_an_emulating_bench_stops_before_the_first_trial(bench: Bench):
    profile = bench.profile(
        "description: Needs strace.\nscales: [2]\nclients: [2]\nworkloads: [tpcb-like]\n"
        "duration_s: 2\nflush_ms: [native, 2]\n"
    )
    links = bench.root.parent / f"{bench.root.name}-bin"
    links.mkdir()
    try:
        path = _path_without("strace", links)
        assert shutil.which("strace", path=path) is None
        done = bench.run(profile, timeout=60, PATH=path)
    finally:
        shutil.rmtree(links, ignore_errors=True)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "strace, which is not installed" in errors[0]
    assert "apt-get install strace" in errors[0]
    assert "initialising" not in done.stderr and "measuring" not in done.stderr
    assert not bench.run_files()


def test_a_bad_flush_ms_is_refused_at_its_line(tmp_path: Path):
    profile = tmp_path / "flush.yaml"
    profile.write_text(
        "description: Bad.\nscales: [2]\nclients: [2]\nworkloads: [tpcb-like]\n"
        "duration_s: 2\nflush_ms: [native, 0]\n",
        encoding="utf-8",
    )
    done = subprocess.run([str(KB), "plan", str(profile)], capture_output=True, text=True)
    assert done.returncode != 0
    assert done.stderr.startswith(f"error: {profile}:6: flush_ms"), done.stderr
    assert "Traceback" not in done.stderr


def test_the_plan_shows_each_flush_level(tmp_path: Path):
    profile = tmp_path / "flush.yaml"
    profile.write_text(
        "description: Levels.\nscales: [2]\nclients: [2]\nworkloads: [tpcb-like]\n"
        "duration_s: 2\nseed: 1\nflush_ms: [native, native-traced, 0.5, 2]\n",
        encoding="utf-8",
    )
    done = subprocess.run([str(KB), "plan", str(profile)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "flush native: the device's own commit flush, no tracer" in done.stdout
    assert "flush 0.5 ms: emulated" in done.stdout
    assert "defaults, flush 2 ms" in done.stdout
    assert "4 trials in 1 session(s), 3 server restarts" in done.stdout


# ---------------------------------------------------------------------------------------------
# the interpretation, on outputs with a known answer

PG_TEST_FSYNC = """\
5 seconds per test
O_DIRECT supported on this platform for open_datasync and open_sync.

Compare file sync methods using one 8kB write:
(in "wal_sync_method" preference order, except fdatasync is Linux's default)
        open_datasync                      3976.006 ops/sec     252 usecs/op
        fdatasync                          4012.345 ops/sec     249 usecs/op
        fsync                              3000.000 ops/sec     333 usecs/op
        fsync_writethrough                              n/a
        open_sync

Compare file sync methods using two 8kB writes:
(in "wal_sync_method" preference order, except fdatasync is Linux's default)
        open_datasync                      1000.000 ops/sec    1000 usecs/op
        fdatasync                          2000.000 ops/sec     500 usecs/op
"""


def test_pg_test_fsync_is_read_for_the_method_with_one_write():
    from pgbench_kb.bench import flush

    assert flush.sync_method_ms(PG_TEST_FSYNC, "fdatasync") == 0.249  # not the two-write 0.5
    assert flush.sync_method_ms(PG_TEST_FSYNC, "fsync") == 0.333
    # Stopped before it timed open_sync, or a method it cannot test here: not guessed.
    assert flush.sync_method_ms(PG_TEST_FSYNC, "open_sync") is None
    assert flush.sync_method_ms(PG_TEST_FSYNC, "fsync_writethrough") is None
    assert flush.sync_method_ms("", "fdatasync") is None


def test_the_added_delay_is_the_target_minus_the_probes_median(tmp_path: Path):
    from pgbench_kb.bench import flush

    (tmp_path / "info.tsv").write_text("wal_sync_method\tfdatasync\n")
    (tmp_path / "wal.pg_test_fsync.txt").write_text(PG_TEST_FSYNC)
    # One slow flush moves a mean, not the median (0.25).
    (tmp_path / "wal.probe.txt").write_text("0.2\n0.25\n0.3\n40\n0.24\n")
    assert flush.added_us(tmp_path, 2) == 1750
    with pytest.raises(ValueError, match=r"already at or above the target of 0\.1 ms"):
        flush.added_us(tmp_path, 0.1)
    (tmp_path / "wal.probe.txt").unlink()
    assert flush.added_us(tmp_path, 2) == 1751  # pg_test_fsync's 0.249 when no probe
