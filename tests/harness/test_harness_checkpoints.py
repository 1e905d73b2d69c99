"""When checkpoints ran: a real trial whose script issues a CHECKPOINT records it, with its time
into the run, from the server's own log (issue #21: progress charts mark checkpoints); the log
lines of every version read the same; kb check catches a list edited out of time order."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from benchkit import KB, Bench
from pgbench_kb.bench.serverlog import checkpoints
from pgbench_kb.runs.check.checkpoint_order import rules_checkpoints

# 2026-11-27 02:00:00.000 UTC as Unix milliseconds: the trial's start in the samples below.
START_MS = 1_795_744_800_000


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.postgres
def test_a_checkpoint_during_a_trial_is_recorded_with_its_time(bench: Bench):
    """The only client sleeps 1.5 s, then asks for a CHECKPOINT: the run file holds one that
    started about 1.5 s into the run, as an immediate (requested) one, completed, with what it
    wrote; the server's counters agree; the log settings the harness set are not recorded as
    the configuration measured."""
    (bench.root / "checkpoint.sql").write_text("\\sleep 1500 ms\nCHECKPOINT;\n", encoding="utf-8")
    profile = bench.profile(
        "description: a checkpoint 1.5 s into a 2-second trial\n"
        "scales: [1]\nclients: [1]\nduration_s: 2\n"
        "workloads:\n  - name: checkpointer\n    scripts:\n      - {file: checkpoint.sql}\n"
    )
    done = bench.run(profile, timeout=90)
    assert done.returncode == 0, done.stderr
    (run_path,) = bench.run_files()
    run = _load(run_path)
    found = run["results"]["checkpoints"]
    assert len(found) >= 1, found
    first = found[0]
    assert first["reason"].startswith("immediate"), first
    assert 1.3 <= first["started_s"] <= 2.2, first
    assert first["completed_s"] >= first["started_s"]
    assert first["buffers_written"] >= 0
    assert first["total_s"] >= 0
    assert run["server_stats"]["checkpoints_requested"] >= 1
    # PostgreSQL 18 counts the buffers backends wrote themselves in pg_stat_io only.
    assert isinstance(run["server_stats"]["buffers_written_backend"], int)
    settings = run["postgres"]["settings"]
    assert not {"log_checkpoints", "log_timezone", "log_line_prefix"} & set(settings)
    checked = bench_check(bench)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def bench_check(bench: Bench) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KB), "check", "--root", str(bench.root)], capture_output=True, text=True, timeout=60
    )


def test_log_lines_of_old_and_new_servers_read_alike():
    """8.3–14 end the complete line after total=; 15+ add distance, estimate, lsn. A checkpoint
    begun before pgbench has no start; one still running at the end has no completion; other
    lines (a different prefix, an autovacuum note) are not checkpoints."""
    log = "\n".join(
        [
            "2026-11-27 01:59:59.100 UTC [7] LOG:  checkpoint complete: wrote 12 buffers (0.1%); "
            "0 WAL file(s) added, 0 removed, 0 recycled; write=0.500 s, sync=0.010 s, "
            "total=0.900 s; sync files=3, longest=0.005 s, average=0.003 s",
            "2026-11-27 02:00:30.250 UTC [7] LOG:  checkpoint starting: time",
            "2026-11-27 02:00:57.000 UTC [7] LOG:  checkpoint complete: wrote 2410 buffers "
            "(14.7%), wrote 3 SLRU buffers; 0 WAL file(s) added, 0 removed, 1 recycled; "
            "write=26.700 s, sync=0.004 s, total=26.750 s; sync files=9, longest=0.002 s, "
            "average=0.001 s; distance=20480 kB, estimate=20480 kB; lsn=0/5000060, "
            "redo lsn=0/5000028",
            '2026-11-27 02:01:00.000 UTC [9] LOG:  automatic vacuum of table "x"',
            "2026-11-27 02:01:10 CET [7] LOG:  checkpoint starting: time",
            "2026-11-27 02:01:40.5 UTC [7] LOG:  checkpoint starting: wal",
        ]
    )
    assert checkpoints(log, START_MS) == [
        {"started_s": None, "reason": None, "completed_s": -0.9, "buffers_written": 12,
         "write_s": 0.5, "sync_s": 0.01, "total_s": 0.9},
        {"started_s": 30.25, "reason": "time", "completed_s": 57.0, "buffers_written": 2410,
         "write_s": 26.7, "sync_s": 0.004, "total_s": 26.75},
        {"started_s": 100.5, "reason": "wal", "completed_s": None, "buffers_written": None,
         "write_s": None, "sync_s": None, "total_s": None},
    ]  # fmt: skip
    assert checkpoints("", START_MS) == []


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        ([{"started_s": 5.0, "reason": "time", "completed_s": 4.0}], "completes before it starts"),
        (
            [
                {"started_s": 1.0, "reason": "time", "completed_s": None},
                {"started_s": 9.0, "reason": "time", "completed_s": 10.0},
            ],
            "only the last checkpoint can be unfinished",
        ),
        (
            [
                {"started_s": 1.0, "reason": "time", "completed_s": 2.0},
                {"started_s": None, "reason": None, "completed_s": 10.0},
            ],
            "only the first checkpoint can have begun before pgbench",
        ),
        ([{"started_s": 1.0, "reason": None, "completed_s": 2.0}], "a reason goes with"),
    ],
)
def test_check_refuses_checkpoints_out_of_time_order(found, expected):
    run = {"origin": "measured", "results": {"checkpoints": found}}
    issues = rules_checkpoints(run)
    assert [i for i in issues if expected in i.message], issues
    good = [{"started_s": 1.0, "reason": "wal", "completed_s": 2.0}]
    assert rules_checkpoints({"origin": "measured", "results": {"checkpoints": good}}) == []
