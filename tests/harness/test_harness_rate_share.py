"""Rates given as a share of the maximum (profile ``rates: ["70%"]``, issue #30's checkpoints
under a steady load): one unthrottled calibration run per session and configuration, under the
profile's first settings set, whose tps every rated trial of that session takes its share of,
whatever its own settings set; the run files say so; the plan says it; a bad share is refused
at its line."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
import yaml

from benchkit import KB, Bench

PROFILE = (
    "description: Half the maximum, two settings sets.\nscales: [1]\nclients: [1]\n"
    "workloads: [select-only]\nduration_s: 2\nwarmup_s: 1\nrates: ['50%']\n"
    "latency_limit_ms: 100\nrate_calibration_s: 2\nrepeats: 1\nseed: 5\n"
    "settings_sets:\n  first: {}\n  second:\n    checkpoint_completion_target: 0.1\n"
)


@pytest.mark.postgres
def test_every_rated_trial_runs_at_its_share_of_the_session_s_calibration(bench: Bench):
    done = bench.run(bench.profile(PROFILE, "share"), timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("measuring the maximum for the rates given as a share") == 1
    runs = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in bench.run_files()]
    assert len(runs) == 2
    bases = [r["repeat"]["design"]["rate"] for r in runs]
    assert {b["calibration_settings"] for b in bases} == {"first"}
    assert len({b["max_tps"] for b in bases}) == 1  # one calibration for the session
    max_tps = bases[0]["max_tps"]
    assert max_tps > 0 and bases[0]["percent_of_max"] == 50 and bases[0]["calibration_s"] == 2
    assert {r["postgres"]["settings_profile"] for r in runs} == {"first", "second"}
    for run in runs:
        assert run["benchmark"]["rate_limit_tps"] == math.floor(max_tps * 0.5 * 10) / 10
        assert "--rate=auto" not in run["benchmark"]["command"]
    checked = subprocess.run(
        [str(KB), "check", "--root", str(bench.root), *map(str, bench.run_files())],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_plan_says_what_the_share_is_taken_of(tmp_path: Path):
    profile = tmp_path / "share.yaml"
    profile.write_text(PROFILE, encoding="utf-8")
    done = subprocess.run([str(KB), "plan", str(profile)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (
        "rate 50% of the maximum: --rate=auto is that share of the tps of an unthrottled 2 s "
        "run, made in each session before the first trial that needs it, one per scale, "
        "workload, mode and clients, under settings first"
    ) in done.stdout
    assert "--rate=auto --latency-limit=100" in done.stdout


@pytest.mark.parametrize("share", ["0%", "150%", "100.5%", "70 %", "half"])
def test_a_share_that_is_not_a_percentage_is_refused_at_its_line(tmp_path: Path, share: str):
    profile = tmp_path / "share.yaml"
    profile.write_text(PROFILE.replace("'50%'", f"'{share}'"), encoding="utf-8")
    done = subprocess.run([str(KB), "plan", str(profile)], capture_output=True, text=True)
    assert done.returncode != 0
    assert done.stderr.startswith(f"error: {profile}:7: rates.0: "), done.stderr
    assert "is not a share from 1% to 100%" in done.stderr
    assert "Traceback" not in done.stderr
