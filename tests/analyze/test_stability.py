"""Stability over time (analyze/stability.py): planted series with known stalls, flat series,
too-short runs, the TPC-E window arithmetic against numbers worked out by hand, real ``-P 1``
outputs and real aggregate logs of pgbench 18 (the parser's fixtures), and runs imported with
the real ``kb import`` (its main, kbtest.run_kb)."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kbtest import run_kb
from pgbench_kb.analyze import build_knowledge
from pgbench_kb.analyze.load import SKIP
from pgbench_kb.analyze.runseries import (
    SERVER_STATS_UNREAD,
    Series,
    read_series,
    run_facts,
    series_from_aggregate_logs,
    series_from_parsed_progress,
    series_from_progress,
)
from pgbench_kb.analyze.stability import (
    analyse_series,
    checkpoint_alignment,
    find_stalls,
    group_summaries,
    interval_spread,
    run_stability,
    stability,
    tpcc_p90_test,
)
from pgbench_kb.analyze.sustained import sustained_rule, sustained_rules, window_throughputs
from pgbench_kb.errors import RunFileError
from pgbench_kb.parse import parse_text
from pgbench_kb.runs.runfile import dump_run, load_yaml_file, read_run_text

FIXTURES = Path(__file__).resolve().parents[1] / "parse" / "fixtures"
KB = str(Path(sys.executable).parent / "kb")
WHEN = "provenance.recorded_at=2026-11-20T10:00:00Z"
#: What a measured run imported by hand must carry besides its output (CONTRIBUTING.md).
MEASURED = (
    *("--set", "postgres.version=18.6"),
    *("--set", "postgres.settings={}"),
    *("--set", "storage.data.filesystem=ext4"),
    *("--set", "provenance.contributor=Test Contributor"),
)


def series(tps: list[float | None], every: float = 1.0, latency: list | None = None) -> Series:
    """A series of intervals of ``every`` seconds starting at 0."""
    return Series(
        source="progress",
        start_s=0.0,
        ends_s=tuple(every * (i + 1) for i in range(len(tps))),
        tps=tuple(tps),
        latency_ms=tuple(latency) if latency is not None else None,
    )


def fixture_series(name: str) -> tuple[Series, dict[str, Any]]:
    parsed = parse_text((FIXTURES / name).read_text(encoding="utf-8"), source=name)
    if parsed["kind"] == "aggregate_log":
        made = series_from_aggregate_logs([parsed])
    else:
        made = series_from_parsed_progress(parsed["progress"])
    assert made is not None
    return made, parsed


# ---------------------------------------------------------------------------------------------
# Stalls.


def test_planted_stalls_are_found_merged_and_edges_kept_apart() -> None:
    values = [1000.0] * 20
    values[0] = 200.0  # ramp-up: an edge dip, not a stall
    values[5], values[6] = 400.0, 300.0  # one stall of two intervals
    values[12] = 499.0  # just below half the median: a stall
    values[15] = 500.0  # exactly half: not a stall
    values[19] = 100.0  # cut-short last interval: an edge dip
    found = find_stalls(series(values, every=5.0))
    assert found["threshold_tps"] == 500.0
    assert found["edge_dips"] == ["first", "last"]
    assert found["stalls"] == [
        {
            "start_s": 25.0,
            "end_s": 35.0,
            "intervals": 2,
            "min_tps": 300.0,
            "min_pct_of_median": 30.0,
        },
        {
            "start_s": 60.0,
            "end_s": 65.0,
            "intervals": 1,
            "min_tps": 499.0,
            "min_pct_of_median": 49.9,
        },
    ]


def test_stall_running_into_the_last_interval_stops_before_it() -> None:
    found = find_stalls(series([1000, 1000, 1000, 1000, 100, 100, 100]))
    assert found["stalls"] == [
        {"start_s": 4.0, "end_s": 6.0, "intervals": 2, "min_tps": 100.0, "min_pct_of_median": 10.0}
    ]
    assert found["edge_dips"] == ["last"]


def test_flat_series_has_no_stall_and_no_spread() -> None:
    flat = series([2500.0] * 30, every=2.0)
    result = analyse_series(flat, 2500.0, None)
    assert result["stall_count"] == 0 and result["stalls"] == [] and result["edge_dips"] == []
    assert result["tps"] == {
        "intervals": 30,
        "median": 2500.0,
        "mean": 2500.0,
        "min": 2500.0,
        "max": 2500.0,
        "stddev": 0.0,
        "cv_pct": 0.0,
    }


def test_unknown_intervals_are_not_stalls_and_not_in_the_spread() -> None:
    found = find_stalls(series([1000, None, 1000, None, 1000]))
    assert found["stalls"] == [] and found["edge_dips"] == []
    assert interval_spread([1000, None, 1000])["intervals"] == 2


def test_series_of_zero_throughput_has_no_stall() -> None:
    assert find_stalls(series([0.0, 0.0, 0.0, 0.0]))["stalls"] == []


def test_spread_is_sample_statistics() -> None:
    spread = interval_spread([10.0, 20.0, 30.0, 40.0])
    assert spread["median"] == 25.0 and spread["mean"] == 25.0
    assert spread["stddev"] == pytest.approx(math.sqrt(500 / 3), abs=1e-6)
    assert spread["cv_pct"] == pytest.approx(100 * math.sqrt(500 / 3) / 25, abs=1e-6)
    assert interval_spread([7.0])["stddev"] is None
    assert interval_spread([None]) is None


# ---------------------------------------------------------------------------------------------
# Checkpoints: only what the counters support.


@pytest.mark.parametrize(
    ("stats", "stalls", "count", "assessment"),
    [
        (None, 2, None, "no_counters"),
        ({"checkpoints_timed": None, "checkpoints_requested": None}, 0, None, "no_counters"),
        ({"checkpoints_timed": 3, "checkpoints_requested": 1}, 0, 4, "no_stalls"),
        ({"checkpoints_timed": 0, "checkpoints_requested": 0}, 2, 0, "stalls_without_checkpoints"),
        (
            {"checkpoints_timed": 2, "checkpoints_requested": None},
            2,
            2,
            "stalls_not_more_than_checkpoints",
        ),
        (
            {"checkpoints_timed": 1, "checkpoints_requested": 0},
            3,
            1,
            "more_stalls_than_checkpoints",
        ),
    ],
)
def test_checkpoint_alignment(
    stats: dict[str, Any] | None, stalls: int, count: int | None, assessment: str
) -> None:
    result = checkpoint_alignment(stats, stalls)
    assert (result["count"], result["assessment"]) == (count, assessment)
    if count is not None:
        assert result["note"].startswith(f"checkpoints during the run: {count};")


def test_checkpoint_note_never_claims_timing() -> None:
    note = checkpoint_alignment({"checkpoints_timed": 2, "checkpoints_requested": 0}, 1)["note"]
    assert note == (
        "checkpoints during the run: 2; 1 stall, consistent with one per checkpoint at most "
        "(the data has no checkpoint times to confirm it)"
    )


def _stalled_twice() -> Series:
    """Stalls at 25–35 s and at 60–65 s (``test_planted_stalls…``'s series)."""
    values = [1000.0] * 20
    values[5], values[6], values[12] = 400.0, 300.0, 499.0
    return series(values, every=5.0)


def test_stalls_are_read_against_recorded_checkpoint_times() -> None:
    """Issue #21: with checkpoint times (the server's log), each stall says whether a
    checkpoint was running in it; the sentence says at the same time, never caused by."""
    stats = {"checkpoints_timed": 2, "checkpoints_requested": 0}
    during_first = [
        {"started_s": 30.0, "reason": "time", "completed_s": 57.0},
        {"started_s": 66.0, "reason": "time", "completed_s": None},
    ]
    result = analyse_series(_stalled_twice(), 1000.0, stats, during_first)
    assert [st["during_checkpoint"] for st in result["stalls"]] == [True, False]
    checkpoints = result["checkpoints"]
    assert checkpoints["assessment"] == "some_stalls_outside_checkpoints"
    assert checkpoints["times_from"] == "results.checkpoints"
    assert checkpoints["note"] == (
        "checkpoints during the run: 2 (their times from the server's log); 2 stalls, 1 of "
        "them while no checkpoint ran, so checkpoints alone do not explain them"
    )
    assert (
        "checkpoints during the run: 2 (their times from the server's log); 1 of the 2 "
        "stalls while a checkpoint ran" in result["text"]
    )
    # A checkpoint begun before pgbench (no start) covers the first stall; one still running
    # at the end (no completion) covers the second.
    both = [
        {"started_s": None, "reason": None, "completed_s": 26.0},
        {"started_s": 64.9, "reason": "wal", "completed_s": None},
    ]
    result = analyse_series(_stalled_twice(), 1000.0, stats, both)
    assert result["checkpoints"]["assessment"] == "all_stalls_during_checkpoints"
    assert "does not by itself make the checkpoint the cause" in result["checkpoints"]["note"]
    none = analyse_series(_stalled_twice(), 1000.0, stats, [])
    assert none["checkpoints"]["assessment"] == "stalls_without_checkpoints"
    assert [st["during_checkpoint"] for st in none["stalls"]] == [False, False]


def test_checkpoint_times_are_not_read_against_an_aggregate_log() -> None:
    """An aggregate log's times start at its first interval, not at pgbench's start."""
    made = Series(source="aggregate_log", start_s=0.0, ends_s=(1.0, 2.0, 3.0), tps=(5, 1, 5))
    result = analyse_series(made, None, None, [{"started_s": 1.0, "completed_s": 2.0}])
    assert "times_from" not in result["checkpoints"]


# ---------------------------------------------------------------------------------------------
# TPC-E sustained throughput: exact window arithmetic (worked out by hand).


def test_ten_minute_windows_golden() -> None:
    # 21 one-minute intervals at 100 tps, the 11th (600-660 s) at 50 tps.
    values = [100.0] * 21
    values[10] = 50.0
    rule = sustained_rule(
        series(values, every=60.0), 100.0, window_s=600, slide_s=60, tolerance_pct=20
    )
    # Windows start at 0, 60, … 660 (12 of them); the ten starting 60 … 600 hold the dip:
    # (9 × 100 + 50) / 10 = 95 tps, 5% below.
    assert rule == {
        "window_s": 600,
        "slide_s": 60,
        "tolerance_pct": 20,
        "windows": 12,
        "windows_unknown": 0,
        "failing": 0,
        "min_tps": 95.0,
        "max_tps": 100.0,
        "worst": {"start_s": 60.0, "end_s": 660.0, "tps": 95.0, "deviation_pct": -5.0},
        "verdict": "holds",
    }
    tps = [w["tps"] for w in window_throughputs(series(values, every=60.0), 600, 60)]
    assert tps == pytest.approx([100.0] + [95.0] * 10 + [100.0])


def test_ten_minute_window_cuts_an_interval_pro_rata() -> None:
    # -P 90: intervals of 90 s at 1, 2, 3 … tps. The first window (0-600 s) holds six whole
    # intervals (90 × (1+…+6) = 1890 transactions) and 60 s of the seventh (60 × 7 = 420):
    # 2310 / 600 = 3.85 tps. The second (60-660 s) holds 30 s of the first (30), the second to
    # the seventh whole (90 × (2+…+7) = 2430) and 30 s of the eighth (240): 2700 / 600 = 4.5.
    # The third (120-720 s): 60 s of the second (120) and the third to the eighth whole
    # (90 × (3+…+8) = 2970): 3090 / 600 = 5.15. A fourth would end after the series.
    made = series([float(i + 1) for i in range(8)], every=90.0)
    windows = window_throughputs(made, 600, 60)
    assert [(w["start_s"], w["end_s"]) for w in windows] == [
        (0.0, 600.0),
        (60.0, 660.0),
        (120.0, 720.0),
    ]
    assert [w["tps"] for w in windows] == pytest.approx([3.85, 4.5, 5.15])


def test_one_hour_windows_golden_fail_by_four_percent() -> None:
    # 70 one-minute intervals at 1000 tps; 3900-4080 s at 200 tps (three intervals).
    values = [1000.0] * 70
    values[65] = values[66] = values[67] = 200.0
    rules = sustained_rules(series(values, every=60.0), 1000.0)
    hour = rules["1h"]
    # Windows at 0 and 600 s; the second holds the dip: (57 × 1000 + 3 × 200) / 60 = 960.
    assert (hour["windows"], hour["failing"], hour["verdict"]) == (2, 1, "fails")
    assert hour["worst"] == {"start_s": 600.0, "end_s": 4200.0, "tps": 960.0, "deviation_pct": -4.0}
    ten = rules["10min"]
    # 10-minute windows at 0, 60, … 3600 (61); the worst hold the whole dip:
    # (7 × 1000 + 3 × 200) / 10 = 760 tps, 24% below: those fail the ±20% rule.
    assert ten["windows"] == 61
    assert ten["min_tps"] == 760.0 and ten["worst"]["deviation_pct"] == -24.0
    # Windows starting 3480, 3540 and 3600 (the last that fits) hold all three dip minutes and
    # fail; those holding two ((8 × 1000 + 2 × 200) / 10 = 840, 16% below) hold.
    assert (ten["failing"], ten["verdict"]) == (3, "fails")


def test_too_short_to_judge_and_the_boundary() -> None:
    short = sustained_rules(series([500.0] * 599), 500.0)
    assert short["10min"]["verdict"] == "too_short_to_judge"
    assert short["1h"]["verdict"] == "too_short_to_judge"
    assert short["10min"]["windows"] == 0
    exact = sustained_rules(series([500.0] * 600), 500.0)
    assert (exact["10min"]["windows"], exact["10min"]["verdict"]) == (1, "holds")
    assert exact["1h"]["verdict"] == "too_short_to_judge"
    hour = sustained_rules(series([500.0] * 60, every=60.0), 500.0)
    assert (hour["1h"]["windows"], hour["1h"]["verdict"]) == (1, "holds")


def test_window_over_an_unknown_interval_is_not_judged() -> None:
    values: list[float | None] = [100.0] * 12
    values[3] = None
    rule = sustained_rule(
        series(values, every=60.0), 100.0, window_s=600, slide_s=60, tolerance_pct=20
    )
    # Windows at 0, 60, 120 all hold minute 4 (180-240 s).
    assert (rule["windows"], rule["windows_unknown"], rule["verdict"]) == (3, 3, "cannot_judge")


def test_without_reported_tps_the_series_mean_is_the_reference() -> None:
    result = analyse_series(series([90.0, 110.0] * 300), None, None)
    assert (result["reference_tps"], result["reference_from"]) == (100.0, "series mean")
    assert result["sustained"]["10min"]["verdict"] == "holds"


@settings(max_examples=60, deadline=None)
@given(
    level=st.floats(min_value=1, max_value=1e6),
    every=st.sampled_from([1.0, 2.0, 5.0, 7.0, 60.0, 90.0]),
    count=st.integers(min_value=1, max_value=800),
)
def test_constant_series_windows_equal_the_constant(level: float, every: float, count: int) -> None:
    made = series([level] * count, every=every)
    for w in window_throughputs(made, 600, 60):
        assert w["tps"] == pytest.approx(level, rel=1e-9)
    rule = sustained_rules(made, level)["10min"]
    assert rule["verdict"] == ("too_short_to_judge" if count * every < 600 else "holds")


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.floats(min_value=0, max_value=1e5), min_size=1, max_size=60),
    factor=st.floats(min_value=0.01, max_value=100),
)
def test_stalls_do_not_depend_on_the_unit(values: list[float], factor: float) -> None:
    a = find_stalls(series(values))
    b = find_stalls(series([v * factor for v in values]))
    assert [s["intervals"] for s in a["stalls"]] == [s["intervals"] for s in b["stalls"]]
    assert a["edge_dips"] == b["edge_dips"]


# ---------------------------------------------------------------------------------------------
# TPC-C weak latency test.


def test_tpcc_p90_test() -> None:
    assert tpcc_p90_test({"latency_avg_ms": 2.0, "latency_percentiles_ms": {"p90": 3.1}}) == {
        "p90_ms": 3.1,
        "avg_ms": 2.0,
        "p90_above_avg": True,
    }
    failing = tpcc_p90_test({"latency_avg_ms": 5.0, "latency_percentiles_ms": {"p90": 4.0}})
    assert failing is not None and failing["p90_above_avg"] is False
    assert tpcc_p90_test({"latency_avg_ms": 5.0, "latency_percentiles_ms": None}) is None
    assert tpcc_p90_test({"latency_avg_ms": None, "latency_percentiles_ms": {"p90": 1}}) is None


# ---------------------------------------------------------------------------------------------
# Series from run files.


@pytest.mark.parametrize(
    ("tps", "expected"),
    [
        ([1, 2.5], (1.0, 2.5)),
        ([1.0, None, 3], (1.0, None, 3.0)),
        ([1.0, math.nan, math.inf], (1.0, None, None)),
        ([1e308, 1e308], (1e308, 1e308)),
        ([-math.inf, math.inf], (None, None)),
    ],
)
def test_progress_values_null_or_not_finite_are_unknown(tps: list, expected: tuple) -> None:
    made = series_from_progress({"interval_s": 1, "t_s": list(range(1, len(tps) + 1)), "tps": tps})
    assert made is not None and made.tps == expected


def test_progress_with_unix_timestamps_is_made_relative() -> None:
    made = series_from_progress(
        {"interval_s": 1, "t_s": [1795306639.31, 1795306640.31], "tps": [4812.7, 5354.1]}
    )
    assert made is not None
    assert made.ends_s == pytest.approx((1.0, 2.0))


@pytest.mark.parametrize(
    "progress",
    [None, {}, {"t_s": [1, 2], "tps": [1]}, {"t_s": [2, 1], "tps": [1, 1]}, {"t_s": [], "tps": []}],
)
def test_unusable_progress_is_no_series(progress: dict[str, Any] | None) -> None:
    assert series_from_progress(progress) is None


def test_aggregate_logs_of_two_threads_sum_interval_by_interval() -> None:
    a = {"interval_s": 1, "start_epoch_s": 100, "transactions_per_interval": [10, 20, 30]}
    b = {"interval_s": 1, "start_epoch_s": 101, "transactions_per_interval": [5, 5, 5]}
    made = series_from_aggregate_logs([a, b])
    assert made is not None
    assert made.tps == (10.0, 25.0, 35.0, 5.0)
    assert made.ends_s == (1.0, 2.0, 3.0, 4.0)


def test_aggregate_interval_of_five_seconds_is_tps() -> None:
    log = {"interval_s": 5, "start_epoch_s": 0, "transactions_per_interval": [500, 1000]}
    made = series_from_aggregate_logs([log])
    assert made is not None and made.tps == (100.0, 200.0) and made.ends_s == (5.0, 10.0)


# ---------------------------------------------------------------------------------------------
# Real pgbench outputs and logs (parser fixtures).


def test_real_P1_output_of_pgbench_18() -> None:
    made, parsed = fixture_series("pg18-tpcb-P1-r.txt")
    result = analyse_series(made, parsed["tps"], None)
    assert result["tps"]["intervals"] == 6
    assert result["tps"]["min"] == 3998.6 and result["tps"]["max"] == 4594.2
    assert result["tps"]["median"] == pytest.approx((4456.0 + 4559.2) / 2)
    assert result["stall_count"] == 0 and result["edge_dips"] == []
    assert result["latency_ms"] == {"median": pytest.approx((0.896 + 0.876) / 2), "max": 0.999}
    assert result["reference_tps"] == 4399.842018
    assert {r["verdict"] for r in result["sustained"].values()} == {"too_short_to_judge"}


@pytest.mark.parametrize(
    "name",
    ["pg15-real-tpcb-P1-r.txt", "pg18-real-tpcb-P1-r-partitions.txt", "pg9.4-latency-colon-P5.txt"],
)
def test_real_progress_outputs_are_steady(name: str) -> None:
    made, parsed = fixture_series(name)
    result = analyse_series(made, parsed["tps"], None)
    assert result["stall_count"] == 0
    assert result["tps"]["cv_pct"] < 5


def test_progress_with_stalled_seconds() -> None:
    made, parsed = fixture_series("pg13-progress-nan.txt")
    result = analyse_series(made, parsed["tps"], None)
    assert result["stalls"] == [
        {"start_s": 1.0, "end_s": 3.0, "intervals": 2, "min_tps": 0.0, "min_pct_of_median": 0.0}
    ]


def test_real_aggregate_log_of_pgbench_18() -> None:
    made, _parsed = fixture_series("pg18-aggregate-1s.log")
    assert made.tps == (1598.0, 3525.0, 3592.0, 3670.0, 3639.0)
    result = analyse_series(made, None, {"checkpoints_timed": 0, "checkpoints_requested": 0})
    # The first second is short (the log starts mid-second): an edge dip, not a stall.
    assert result["edge_dips"] == ["first"] and result["stall_count"] == 0
    assert result["tps"]["median"] == 3592.0
    assert result["reference_from"] == "series mean"
    assert result["reference_tps"] == pytest.approx(16024 / 5)
    assert result["checkpoints"]["note"] == "checkpoints during the run: 0; no stall"


# ---------------------------------------------------------------------------------------------
# Runs imported with the real kb import, read back from their raw files.


@pytest.fixture
def root(tmp_path: Path) -> Path:
    notes = tmp_path / "content" / "hardware"
    notes.mkdir(parents=True)
    (notes / "box.md").write_text(
        "---\nschema_version: 1\ntitle: Box\ndescription: A box.\nroles: [server]\n---\nA box.\n",
        encoding="utf-8",
    )
    return tmp_path


def kb_import(root: Path, output: Path, *logs: Path) -> dict[str, Any]:
    flags = ["--machine", "box", "--set", WHEN, *MEASURED]
    flags += ["--log", *map(str, logs)] if logs else []
    done = run_kb("import", "--root", str(root), str(output), *flags)
    assert done.returncode == 0, done.stderr
    return load_yaml_file(Path(done.stdout.strip())).data


def test_imported_run_with_aggregate_logs_of_two_threads(root: Path) -> None:
    folder = FIXTURES / "pg18-real-run-aggregate-log"
    run = kb_import(root, folder / "stdout.txt", *sorted(folder.glob("pgbench_log.*")))
    assert [r["kind"] for r in run["raw"]] == ["output", "aggregate_log", "aggregate_log"]
    found = read_series(run, root)
    assert [s.source for s in found] == ["aggregate_log"]
    # Thread logs (4073, 8962, 9053) and (4092, 9004, 9087) summed second by second.
    assert found[0].tps == (8165.0, 17966.0, 18140.0)
    entries = stability([run], root, {run["id"]: "g1"})
    assert len(entries) == 1
    entry = entries[0]
    assert (entry["run"], entry["group"], entry["machine"]) == (run["id"], "g1", "box")
    assert entry["series"][0]["reference_tps"] == 18086.912437
    assert entry["series"][0]["edge_dips"] == ["first"]


def test_imported_P1_run_keeps_its_series_inline(root: Path) -> None:
    run = kb_import(root, FIXTURES / "pg18-tpcb-P1-r.txt")
    found = read_series(run, root)
    assert [s.source for s in found] == ["progress"]
    assert found[0].tps == (4216.9, 3998.6, 4594.2, 4559.2, 4573.1, 4456.0)
    entry = run_stability(run, found, "g")
    assert entry is not None and entry["duration_s"] == 6
    assert entry["series"][0]["checkpoints"]["assessment"] == "no_counters"


def test_run_without_series_or_percentiles_has_no_entry(root: Path) -> None:
    run = {"id": "r", "results": {"progress": None, "tps": 5.0}, "raw": []}
    assert stability([run], root) == []


def test_progress_kept_in_the_raw_output_is_read_from_there(root: Path) -> None:
    text = (FIXTURES / "pg18-tpcb-P1-r.txt").read_bytes()
    (root / "data" / "raw").mkdir(parents=True)
    (root / "data" / "raw" / "out.txt").write_bytes(text)
    run = {
        "id": "r",
        "results": {"tps": 4399.842018, "progress": {"raw_path": "data/raw/out.txt"}},
        "raw": [{"path": "data/raw/out.txt", "kind": "output", "sha256": "x"}],
    }
    found = read_series(run, root)
    assert len(found) == 1 and found[0].tps[0] == 4216.9


def test_missing_aggregate_log_is_one_error_naming_the_run_and_field(root: Path) -> None:
    """A run whose raw log is gone: a RunFileError naming the file, the run and raw[1].path."""
    run = {
        "id": "run-x",
        "results": {},
        "raw": [
            {"path": "data/raw/o.txt", "kind": "output"},
            {"path": "data/raw/gone.log0.gz", "kind": "aggregate_log"},
        ],
    }
    with pytest.raises(RunFileError) as caught:
        read_series(run, root)
    assert caught.value.field == "raw[1].path"
    assert "gone.log0.gz" in str(caught.value)


def test_damaged_aggregate_log_is_one_error(root: Path) -> None:
    (root / "data" / "raw").mkdir(parents=True)
    (root / "data" / "raw" / "bad.log0.gz").write_bytes(b"\x1f\x8b not gzip at all")
    run = {"id": "run-y", "raw": [{"path": "data/raw/bad.log0.gz", "kind": "aggregate_log"}]}
    with pytest.raises(RunFileError) as caught:
        read_series(run, root)
    assert caught.value.field == "raw[0].path" and "run run-y" in str(caught.value)


def test_unparsable_aggregate_log_is_one_error(root: Path) -> None:
    (root / "data" / "raw").mkdir(parents=True)
    (root / "data" / "raw" / "bad.log0.gz").write_bytes(gzip.compress(b"hello\n"))
    run = {"id": "run-z", "raw": [{"path": "data/raw/bad.log0.gz", "kind": "aggregate_log"}]}
    with pytest.raises(RunFileError) as caught:
        read_series(run, root)
    assert caught.value.field == "raw[0].path"


def test_raw_path_outside_the_project_is_refused(root: Path) -> None:
    run = {"id": "r", "raw": [{"path": "../../etc/passwd", "kind": "aggregate_log"}]}
    with pytest.raises(RunFileError, match="leaves the project"):
        read_series(run, root)


# ---------------------------------------------------------------------------------------------
# Per group.


def test_group_summaries_count_stalls_and_verdicts() -> None:
    steady = run_stability({"id": "a", "results": {"tps": 100.0}}, [series([100.0] * 600)], "g")
    stalled = run_stability(
        {"id": "b", "results": {"tps": 100.0}},
        [series([100.0] * 100 + [10.0] * 10 + [100.0] * 100)],
        "g",
    )
    other = run_stability({"id": "c", "results": {"tps": 1.0}}, [series([1.0] * 3)], "h")
    summaries = group_summaries([steady, stalled, other])
    assert [s["group"] for s in summaries] == ["g", "h"]
    g = summaries[0]
    assert (g["runs"], g["series"], g["stalls"], g["runs_with_stalls"]) == (["a", "b"], 2, 1, 1)
    assert g["sustained"]["10min"] == {"holds": 1, "too_short_to_judge": 1}
    assert g["sustained"]["1h"] == {"too_short_to_judge": 2}


def test_kb_compare_names_the_run_file_field_and_raw_file_of_a_missing_log(root: Path) -> None:
    """The real ``kb compare`` on a run whose aggregate log is gone: one line, exit 1."""
    folder = FIXTURES / "pg18-real-run-aggregate-log"
    run = kb_import(root, folder / "stdout.txt", *sorted(folder.glob("pgbench_log.*")))
    gone = run["raw"][2]["path"]
    (root / gone).unlink()
    done = subprocess.run(
        [KB, "compare", "--root", str(root)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"error: data/runs/2026/11/{run['id']}.yaml: raw[2].path: {gone}: cannot read: "
        "No such file or directory (run kb check, which names what is missing or changed)\n"
    )


@pytest.mark.postgres
def test_run_measured_by_the_harness_has_a_P1_series_and_checkpoint_counters(
    project_root: Path,
) -> None:
    """End to end with the real embedded PostgreSQL and pgbench (smoke profile: -P 1, 3 s):
    the measured run's series and the server's checkpoint counters reach the knowledge."""
    repo = Path(__file__).resolve().parents[2]
    # The smoke profile under another name: a smoke run is no result and joins no group
    # (issue 35), and this test needs its group.
    tiny = project_root / "tiny.yaml"
    shutil.copy2(repo / "scripts" / "profiles" / "smoke.yaml", tiny)
    command = [str(repo / "scripts" / "bench.sh"), "--profile", str(tiny), "--root"]
    bench = subprocess.run(
        [*command, str(project_root), "--machine", "stability-test"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert bench.returncode == 0, bench.stderr
    # This test is about the series and the counters, not the machine's quietness: on a shared
    # machine the trial may be marked disturbed (machine_load), which keeps it out of groups.
    (measured,) = (project_root / "data" / "runs").rglob("*.yaml")
    data = load_yaml_file(measured).data
    data.pop("machine_load", None)
    measured.write_text(dump_run(data), encoding="utf-8")
    knowledge = build_knowledge(project_root)
    (entry,) = knowledge["stability"]
    (group,) = knowledge["groups"]
    assert (entry["group"], entry["machine"], entry["duration_s"]) == (
        group["id"],
        "stability-test",
        3,
    )
    (analysis,) = entry["series"]
    assert analysis["source"] == "progress"
    (run_file,) = (project_root / "data" / "runs").rglob("*.yaml")
    progress = load_yaml_file(run_file).data["results"]["progress"]
    # pgbench -T 3 -P 1 prints two or three reports (the last may coincide with the end).
    assert analysis["tps"]["intervals"] == len(progress["tps"]) >= 2
    assert analysis["tps"]["min"] > 0
    assert analysis["reference_from"] == "results.tps"
    assert analysis["reference_tps"] == group["center"]
    checkpoints = analysis["checkpoints"]
    assert isinstance(checkpoints["count"], int)
    # A harness run records when its checkpoints ran: the stalls are read against their times.
    assert checkpoints["times_from"] == "results.checkpoints"
    assert checkpoints["note"].startswith(
        f"checkpoints during the run: {checkpoints['count']} (their times from the server's log);"
    )
    assert {r["verdict"] for r in analysis["sustained"].values()} == {"too_short_to_judge"}


@pytest.mark.parametrize(
    ("name", "value", "field"),
    [
        ("t_s", [1, "two", 3], "results.progress.t_s"),
        ("tps", [100.0, "fast", 90.0], "results.progress.tps"),
        ("latency_ms", "slow", "results.progress.latency_ms"),
        ("interval_s", "1s", "results.progress.interval_s"),
        ("checkpoints_timed", "3", "server_stats.checkpoints_timed"),
        ("checkpoints_requested", 1.5, "server_stats.checkpoints_requested"),
    ],
)
def test_malformed_progress_is_one_error_naming_run_file_and_field(
    root: Path, name: str, value: Any, field: str
) -> None:
    """Regression: text in a run file's progress lists crashed build_knowledge with a
    TypeError traceback; now kb compare fails with one line naming the file and the field."""
    run = kb_import(root, FIXTURES / "pg18-tpcb-P1-r.txt")
    if name.startswith("checkpoints"):
        run["server_stats"] = {**(run["server_stats"] or {}), name: value}
    else:
        run["results"]["progress"][name] = value
    path = next((root / "data" / "runs").rglob("*.yaml"))
    path.write_text(dump_run(run), encoding="utf-8")
    done = subprocess.run(
        [KB, "compare", "--root", str(root)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    rel = path.relative_to(root).as_posix()
    assert done.stderr.startswith(f"error: {rel}: {field}: expected "), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


# ---------------------------------------------------------------------------------------------
# Sentences (golden).


def test_series_text_of_a_real_P1_output_golden() -> None:
    """Regression (issue 35): a 6 s series no longer speaks of 10-minute TPC-E windows."""
    made, parsed = fixture_series("pg18-tpcb-P1-r.txt")
    stats = {"checkpoints_timed": 1, "checkpoints_requested": 0}
    assert analyse_series(made, parsed["tps"], stats)["text"] == (
        "Progress reports, 6 intervals over 6 s: median 4,508 tps, CV 5.5%, 3,999 to 4,594; "
        "no stall; checkpoints during the run: 1."
    )


def test_series_text_with_a_stall_golden() -> None:
    made, parsed = fixture_series("pg13-progress-nan.txt")
    assert analyse_series(made, parsed["tps"], None)["text"] == (
        "Progress reports, 4 intervals over 4 s: median 601.5 tps, CV 117.0%, 0 to 1,513; "
        "1 stall below half the median (longest 2 s)."
    )


def test_series_text_of_a_long_run_golden() -> None:
    values = [1000.0] * 70
    values[65] = values[66] = values[67] = 200.0
    stats = {"checkpoints_timed": 14, "checkpoints_requested": 0}
    text = analyse_series(series(values, every=60.0), 1000.0, stats)["text"]
    # Mean (67 × 1000 + 3 × 200) / 70 = 965.7; sample stddev 163.2: CV 16.9%.
    assert text == (
        "Progress reports, 70 intervals over 4200 s: median 1,000 tps, CV 16.9%, 200 to 1,000; "
        "1 stall below half the median (longest 180 s); checkpoints during the run: 14; "
        "TPC-E sustained throughput: 10-minute windows ±20% fails, 1-hour windows ±2% fails."
    )


def test_counters_the_reader_skips_are_schema_fields_and_not_the_checkpoint_counters() -> None:
    schema = json.loads(
        (
            Path(__file__).resolve().parents[2] / "scripts/pgbench_kb/runs/schemas/run.schema.json"
        ).read_text(encoding="utf-8")
    )
    fields = set(schema["properties"]["server_stats"]["properties"])
    assert set(SERVER_STATS_UNREAD) <= fields
    assert fields - set(SERVER_STATS_UNREAD) == {"checkpoints_timed", "checkpoints_requested"}


# ---------------------------------------------------------------------------------------------
# The analysis reads run files with ``runfile.read_run``, leaving out what it never reads
# (``analyze.load.SKIP``); what stability and curves take from them must be what the full
# loader gives. (This replaced a second scanner of the progress block: issue #34.)


def _same_facts(text: str) -> bool:
    got = read_run_text(text, "x", skip=SKIP).data
    full = read_run_text(text, "x", fast=False).data
    return run_facts(got) == run_facts(full)


def test_facts_match_the_full_loader_on_synthetic_and_imported_runs(root: Path) -> None:
    out = root / "synth"
    done = subprocess.run(
        [KB, "synth", "--out", str(out), "--count", "30", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    run = kb_import(root, FIXTURES / "pg15-real-progress-timestamp.txt")
    paths = [*sorted((out / "runs").rglob("*.yaml")), *(root / "data" / "runs").rglob("*.yaml")]
    assert len(paths) == 31
    for path in paths:
        assert _same_facts(path.read_text(encoding="utf-8")), path
    assert run["results"]["progress"]["t_s"] == [1795306639.31, 1795306640.31]


@pytest.mark.parametrize(
    "block",
    [
        "  progress:\n    t_s: [1, 2]\n    tps: [3, 4]\n",  # flow lists
        "  progress:\n    t_s:\n    - '1'\n",  # quoted
        "  progress:\n    raw_path: data/raw/x.txt\n",  # a path
        "  progress:\n    colour: red\n",  # unknown key
        "  progress: {}\n",
        "  progress: null\n",
    ],
)
def test_progress_in_any_form_reads_as_yaml_says(block: str) -> None:
    text = f"id: x\nresults:\n  tps: 1.0\n{block}raw: []\n"
    facts = run_facts(read_run_text(text, "x", skip=SKIP).data)
    full = yaml.safe_load(text)["results"]["progress"]
    assert (facts or {}).get("results", {}).get("progress") == (full or None)
    assert _same_facts(text)


def test_progress_outside_results_is_not_taken() -> None:
    text = "id: x\nresults:\n  tps: 1.0\nother:\n  progress:\n    t_s:\n    - 1\n"
    assert run_facts(read_run_text(text, "x", skip=SKIP).data) is None
