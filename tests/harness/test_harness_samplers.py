"""The machine and the backends, second by second (issue #36, items 3 and 4): a real trial
records results.os_series and results.wait_events; SAMPLERS=off records neither; a double
Ctrl-C during a trial leaves no sampler behind. Plus the interpretation of raw samples whose
answer is known."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from benchkit import Bench, interrupt
from pgbench_kb.bench import samplers
from pgbench_kb.runs.schema import load_schema

pytestmark = pytest.mark.postgres


def _run(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_a_trial_records_the_os_series_and_the_wait_events(bench: Bench):
    done = bench.run(bench.tiny(workload="tpcb-like", seconds=4), timeout=150)
    assert done.returncode == 0, done.stderr
    (path,) = bench.run_files()
    results = _run(path)["results"]
    progress = results["progress"]["t_s"]

    (series,) = results["os_series"]
    assert series["host"] == "server"
    assert series["interval_s"] == 1
    # One value a second, labelled like pgbench's progress reports (at most one second apart
    # at either end: the sampler's clock is not pgbench's).
    assert series["t_s"] == sorted(set(series["t_s"]))
    assert len(series["t_s"]) >= len(progress) - 1
    assert set(series["t_s"]) <= set(range(1, int(max(progress)) + 2))
    cpu = series["cpu_pct"]
    for key in ("user", "system", "iowait", "steal", "idle"):
        assert len(cpu[key]) == len(series["t_s"]), key
        assert all(v is None or 0 <= v <= 100 for v in cpu[key]), (key, cpu[key])
    for i in range(len(series["t_s"])):
        total = sum(cpu[k][i] for k in ("user", "system", "iowait", "steal", "idle"))
        assert 99 <= total <= 101, total
    # pgbench and the server ran: the machine was not idle.
    assert max(cpu["user"][i] + cpu["system"][i] for i in range(len(series["t_s"]))) > 5
    assert series["devices"], "no device sampled"
    for device in series["devices"]:
        assert device["name"] and "/" not in device["name"]
        for key in ("reads", "writes", "read_kb", "write_kb", "await_ms"):
            assert len(device[key]) == len(series["t_s"]), key
            assert all(v is None or v >= 0 for v in device[key]), (key, device[key])

    waits = results["wait_events"]
    assert waits["unavailable"] is None
    assert waits["hz"] >= 10, waits
    assert waits["instants"] >= 10 * 3
    assert sum(e["count"] for e in waits["events"]) == waits["backend_samples"]
    # Two clients, so at most two backends at each instant: the sampler's own is not counted
    # (a third backend would show up as instants with three).
    assert waits["backend_samples"] <= 2 * waits["instants"]
    assert waits["backend_samples"] >= 2 * waits["instants"] * 0.9
    counts = [e["count"] for e in waits["events"]]
    assert counts == sorted(counts, reverse=True)
    kinds = {(e["type"], e["event"]) for e in waits["events"]}
    # TPC-B-like on two clients waits for its commits or its locks, or for pgbench.
    assert kinds & {("IO", "WalSync"), ("Lock", "transactionid"), ("Client", "ClientRead"),
                    ("LWLock", "WALWrite"), ("IO", "WalWrite")}, kinds  # fmt: skip


def test_samplers_off_records_neither(bench: Bench):
    done = bench.run(bench.tiny(workload="select-only", seconds=2), timeout=120, SAMPLERS="off")
    assert done.returncode == 0, done.stderr
    (path,) = bench.run_files()
    results = _run(path)["results"]
    assert results["os_series"] is None
    assert results["wait_events"] is None


def _sampler_pids(root: Path) -> set[int]:
    """Processes started by this bench (its TMPDIR in their environment) that are the
    samplers: the wait sampler's psql (PGAPPNAME) or a bash whose parent is the bench."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            environ = (entry / "environ").read_bytes().split(b"\0")
            if f"TMPDIR={root}".encode() in environ:
                found.add(int(entry.name))
    return found


def test_a_double_ctrl_c_during_a_trial_leaves_no_sampler(bench: Bench):
    proc = bench.start(bench.tiny(seconds=8))
    try:
        work = bench.wait_for_trial(1)
        # The samplers are running: the psql of the wait sampler among the bench's processes.
        deadline = time.monotonic() + 10
        psql = []
        while not psql and time.monotonic() < deadline:
            psql = [
                pid for pid in _sampler_pids(bench.tmpdir)
                if b"PGAPPNAME=pgbench-kb-sampler" in Path(f"/proc/{pid}/environ").read_bytes()
            ]  # fmt: skip
            time.sleep(0.05)
        assert psql, "no wait sampler was running during the trial"
        mine = _sampler_pids(bench.tmpdir)
        interrupt(proc, "INT")
        time.sleep(0.03)
        with contextlib.suppress(ProcessLookupError):
            interrupt(proc, "INT")
        _, stderr = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert not work.exists()
    deadline = time.monotonic() + 10
    while (_sampler_pids(bench.tmpdir) & mine) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _sampler_pids(bench.tmpdir) & mine
    ps = subprocess.run(["ps", "-o", "pid,ppid,cmd", "-p", ",".join(map(str, left)) or "1"],
                        capture_output=True, text=True).stdout  # fmt: skip
    assert not left, f"processes of the bench were left behind:\n{ps}"


# ---------------------------------------------------------------------------------------------
# the interpretation, on raw samples with a known answer


def _trial(tmp_path: Path, os_raw: str = "", waits_raw: str = "", **info: str) -> dict:
    (tmp_path / "os.raw").write_text(os_raw)
    (tmp_path / "waits.raw").write_text(waits_raw)
    base = {
        "samplers": "on", "wait_sampler": "on", "sampler_devices": "vda",
        "pgbench_started_ms": "1000000", "pgbench_ended_ms": "1003000",
    }  # fmt: skip
    base.update(info)
    return base


def _sample(t: float, cpu: list[int], disk: list[int]) -> str:
    return (
        f"t\t{t}\ncpu\tcpu  {' '.join(map(str, cpu))} 0 0\n"
        f"disk\tvda {' '.join(map(str, disk))} 0 0 0 0 0 0 0 0 0\n"
    )


def test_os_series_rates_and_alignment(tmp_path: Path):
    # Samples at pgbench's start + 0.2, 1.2, 2.2, 3.2 s and a last one 0.1 s later (not a second).
    raw = (
        _sample(1000.2, [0] * 8, [0] * 8)
        # user 50, nice 10, system 20, idle 10, iowait 5, irq 0, softirq 5, steal 0 (of 100)
        + _sample(1001.2, [50, 10, 20, 10, 5, 0, 5, 0], [10, 0, 80, 30, 30, 0, 160, 10])
        + _sample(1002.2, [100, 20, 40, 10, 10, 0, 10, 10], [10, 0, 80, 30, 30, 0, 160, 10])
        + _sample(1003.2, [150, 30, 60, 20, 15, 0, 15, 10], [20, 0, 80, 40, 30, 0, 160, 10])
        + _sample(1003.3, [151, 30, 60, 20, 15, 0, 15, 10], [20, 0, 80, 40, 30, 0, 160, 10])
    )
    info = _trial(tmp_path, raw)
    (series,) = samplers.os_series(tmp_path, info)
    assert series["t_s"] == [1, 2, 3]
    assert series["cpu_pct"]["user"] == [60.0, 60.0, 60.0]
    assert series["cpu_pct"]["system"] == [25.0, 25.0, 25.0]
    assert series["cpu_pct"]["iowait"] == [5.0, 5.0, 5.0]
    assert series["cpu_pct"]["idle"] == [10.0, 0.0, 10.0]
    assert series["cpu_pct"]["steal"] == [0.0, 10.0, 0.0]
    (vda,) = series["devices"]
    assert vda["reads"] == [10.0, 0.0, 10.0]
    assert vda["writes"] == [30.0, 0.0, 0.0]
    assert vda["read_kb"] == [40.0, 0.0, 0.0]
    assert vda["write_kb"] == [80.0, 0.0, 0.0]
    # (30 ms reading + 10 ms writing) / 40 I/Os; no I/O: null; 10 ms / 10 reads
    assert vda["await_ms"] == [1.0, None, 1.0]
    assert samplers.os_series(tmp_path, {**info, "samplers": "off"}) is None
    assert samplers.os_series(tmp_path, {**info, "client_is_server": "no"})[0]["host"] == "client"


def test_wait_events_counts_within_pgbench_run(tmp_path: Path):
    waits = (
        "backend\t4242\n"
        "w\t999.99\t2\tClient/ClientRead,Client/ClientRead\n"  # before pgbench: left out
        "w\t1000.5\t2\tIO/WalSync,-/-\n"
        "w\t1001.0\t2\tIO/WalSync,Lock/transactionid\n"
        "w\t1002.0\t0\t\n"
        "w\t1003.5\t1\tIO/WalSync\n"  # after pgbench: left out
    )
    info = _trial(tmp_path, waits_raw=waits)
    result = samplers.wait_events(tmp_path, info, 170000)
    assert result == {
        "hz": 1.0,
        "instants": 3,
        "backend_samples": 4,
        "events": [
            {"type": "IO", "event": "WalSync", "count": 2},
            {"type": None, "event": None, "count": 1},
            {"type": "Lock", "event": "transactionid", "count": 1},
        ],
        "unavailable": None,
    }
    old = samplers.wait_events(tmp_path, {**info, "wait_sampler": "unavailable-version"}, 90500)
    assert old["unavailable"] == "PostgreSQL 9.5 has no wait events (they came in 9.6)"
    assert old["events"] is None
    (tmp_path / "waits.raw").write_text("")
    (tmp_path / "waits.err").write_text("psql: error: connection refused\n")
    none = samplers.wait_events(tmp_path, info, 170000)
    assert none["unavailable"] == (
        "the wait sampler recorded no instant during pgbench: psql: error: connection refused"
    )
    assert samplers.wait_events(tmp_path, {**info, "samplers": "off"}, 170000) is None


def test_the_schema_takes_what_the_samplers_write(tmp_path: Path):
    import jsonschema

    schema = load_schema("run")
    results = schema["properties"]["results"]["properties"]
    raw = _sample(1000.2, [0] * 8, [0] * 8) + _sample(1001.2, [1] * 8, [1] * 8)
    info = _trial(tmp_path, raw, "w\t1000.5\t1\t-/-\n")
    jsonschema.validate(samplers.os_series(tmp_path, info), results["os_series"])
    jsonschema.validate(samplers.wait_events(tmp_path, info, 170000), results["wait_events"])
