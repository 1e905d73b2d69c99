"""Profile validation: every problem is one line `error: path:line: field: message (hint)`,
and bench.sh stops on it before starting anything. Also: the shipped profiles are valid and
expand as documented."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from benchkit import KB, Bench, embedded_bin

pytestmark = pytest.mark.postgres

BASE = "description: x\nscales: [2]\nclients: [2]\nworkloads: [tpcb-like]\nduration_s: 2\n"

CASES = [
    (
        BASE.replace("clients: [2]", "clients: [2, 0]"),
        "3: clients.1: 0 is below the minimum 1",
    ),
    (
        BASE.replace("[tpcb-like]", "[tpcb-like, select-everything]"),
        "4: workloads.1: 'select-everything' is not one of: tpcb-like, simple-update, select-only",
    ),
    (
        BASE.replace("workloads:", "workload:"),
        "4: workload: unknown key (did you mean 'workloads'?)",
    ),
    (
        BASE + "transactions: 100\n",
        "6: transactions: give only one of duration_s (pgbench -T) and transactions "
        "(pgbench -t) (remove one of them)",
    ),
    (
        BASE + "latency_limit_ms: 10\n",
        "6: latency_limit_ms: pgbench applies a latency limit only to rate-limited runs "
        "(give every entry of rates a number, or remove latency_limit_ms)",
    ),
    (
        BASE + "query_modes: [simple, fast]\n",
        "6: query_modes.1: 'fast' is not one of: simple, extended, prepared",
    ),
    (
        BASE.replace("duration_s: 2\n", ""),
        "1: duration_s: missing (add 'duration_s:' (pgbench -T) or 'transactions:' (pgbench -t))",
    ),
    (
        BASE + "settings:\n  port: 6000\n",
        "7: settings.port: 'port' is set by the harness (the server listens only on a private "
        "socket) (remove it from the profile)",
    ),
    (
        BASE.replace("[tpcb-like]", "\n  - name: mixed\n    scripts:\n      - {file: no.sql}"),
        "7: workloads.0.scripts.0.file: no such script file 'no.sql' (looked in {folder}) "
        "(paths are relative to the profile's folder)",
    ),
    (
        "description: x\nscales: [1\n",
        "3: YAML syntax error: did not find expected ',' or ']' (fix the YAML at that line)",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_profile_error_is_exact(tmp_path: Path, text: str, expected: str):
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([str(KB), "plan", str(path)], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f"error: {path}:{expected.replace('{folder}', str(tmp_path))}\n"


def test_misspelt_setting_stops_bench_before_anything_runs(bench: Bench):
    profile = bench.profile(BASE + "settings_sets:\n  small:\n    shared_bufers: 16MB\n")
    done = bench.run(profile)
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {profile}:8: settings_sets.small.shared_bufers: unknown server setting "
        "'shared_bufers' (did you mean 'shared_buffers'?)\n"
    )
    assert done.stdout == ""
    assert bench.run_files() == []
    assert not (bench.root / "data").exists()


def test_unknown_profile_name_lists_shipped_profiles(bench: Bench):
    done = bench.run("no-such-profile")
    assert done.returncode == 1
    assert "no such profile 'no-such-profile'" in done.stderr
    assert "shipped profiles: default, durability, memory, scaling, smoke" in done.stderr


@pytest.mark.parametrize("name", ["smoke", "default", "scaling", "durability", "memory"])
def test_shipped_profile_is_valid_for_this_server(tmp_path: Path, name: str):
    known = tmp_path / "known.tsv"
    with known.open("w") as handle:
        subprocess.run([str(embedded_bin() / "postgres"), "--describe-config"], stdout=handle)
    done = subprocess.run(
        [str(KB), "plan", "--known-settings", str(known), "--cores", "2", name],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"\d+ trials in \d+ session\(s\), \d+ server restarts, about", done.stdout)


def test_plan_for_bash_interleaves_repeats_and_restarts_per_set():
    from pgbench_kb.bench.profile import expand, load_profile, render_plan

    trials = expand(load_profile("durability"), cores=2, seed=1)
    # every round runs each of the five sets once, in its own shuffled order
    for repeat in (1, 2, 3):
        sets = [t.settings_name for t in trials if t.repeat == repeat]
        assert sorted(sets) == [
            "baseline",
            "commit-delay",
            "fsync-off",
            "full-page-writes-off",
            "synchronous-commit-off",
        ]
    assert [t.repeat for t in trials] == [1] * 5 + [2] * 5 + [3] * 5
    assert len({t.group for t in trials}) == 5
    assert all("--progress=1" in t.pgbench_args for t in trials)
    off = next(t for t in trials if t.settings_name == "synchronous-commit-off")
    assert "synchronous_commit=off" in off.settings
    # the plan for bash carries session, sessions, position, seed and the latencies to log,
    # the server build, the flush level and the rate share with its calibration (empty here)
    line = render_plan(load_profile("durability"), cores=2).split("\n")[0].split("\x1e")
    assert len(line) == 28
    assert line[15:17] == ["1", "1"] and line[17] == "1"
    assert line[20:27] == ["", "", "", "", "", "", ""]  # build, flush, rate share (none)


def test_threads_divide_clients_up_to_the_cores():
    from pgbench_kb.bench.profile import threads_for

    assert [threads_for(c, 2) for c in (1, 2, 3, 4, 32)] == [1, 2, 1, 2, 2]
    assert [threads_for(c, 8) for c in (6, 12, 7)] == [6, 6, 7]
