"""Release series (analyze/releases.py) on the shipped tvondra/postgres-archaeology runs of one
series (star-1.sql, -M simple, 1 client: 20 releases × 3 repeats): rows in release order with
the median of the run files' tps, one step per neighbouring release and no other version
comparison, the steps across the author's invocations named and not judged, the 9.4 → 9.5
WAL setting change named, and the first → last change shown, not judged."""

from __future__ import annotations

import itertools
import shutil
import statistics
from pathlib import Path

import pytest

from pgbench_kb.analyze import knowledge_from_runs
from pgbench_kb.analyze.factors import release_order
from pgbench_kb.analyze.load import load_runs
from pgbench_kb.runs.runfile import read_run

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "data" / "runs" / "2024" / "10"
#: The steps between releases the author measured in two invocations (timestamped directories).
CROSSING = {("8.0.26", "8.2.23"), ("8.4.22", "9.0.23"), ("9.1.24", "9.2.24"), ("9.5.25", "9.6.24")}


@pytest.fixture(scope="module")
def series_runs(tmp_path_factory) -> tuple[dict, list[dict]]:
    root = tmp_path_factory.mktemp("releases")
    target = root / "data" / "runs" / "2024" / "10"
    target.mkdir(parents=True)
    chosen = []
    for path in sorted(SET.glob("*-c1-*.yaml")):
        data = read_run(path).data
        if data["benchmark"]["query_mode"] == "simple" and data["benchmark"]["clients"] == 1:
            shutil.copy(path, target / path.name)
            chosen.append(data)
    assert len(chosen) == 60
    return knowledge_from_runs(load_runs(root), []), chosen


def test_one_series_of_twenty_releases_in_release_order(series_runs) -> None:
    known, runs = series_runs
    (series,) = known["series"]
    versions = [row["version"] for row in series["rows"]]
    assert versions == sorted({r["postgres"]["version"] for r in runs}, key=release_order)
    assert versions[0] == "8.0.26" and versions[-1] == "18devel" and len(versions) == 20
    assert series["pgbench_versions"] == ["18devel"]
    assert series["held_equal"]["benchmark.workload.name"] == "star-1.sql"
    # Each row is the median of its release's three repeats, as the run files give them.
    for row in series["rows"]:
        tps = [r["results"]["tps"] for r in runs if r["postgres"]["version"] == row["version"]]
        assert row["n"] == 3 and row["center"] == statistics.median(tps)
        low, high = row["ci95"]
        assert low < statistics.geometric_mean(tps) < high


def test_releases_are_compared_step_by_step_only(series_runs) -> None:
    known, _ = series_runs
    (series,) = known["series"]
    versions = [c for c in known["comparisons"] if "postgres.version" in c["factor"]]
    assert len(versions) == 19 == len(series["steps"])
    assert {c["id"] for c in versions} == set(series["steps"])
    place = {row["group"]: n for n, row in enumerate(series["rows"])}
    for c in versions:
        # Old → new, neighbours in the series.
        assert place[c["b"]["group"]] - place[c["a"]["group"]] == 1


def test_steps_across_invocations_are_named_and_not_judged(series_runs) -> None:
    known, _ = series_runs
    (series,) = known["series"]
    rows = series["rows"]
    crossing = set()
    for before, row in itertools.pairwise(rows):
        step = row["step"]
        if step["crosses_sessions"]:
            crossing.add((before["version"], row["version"]))
            assert step["verdict"] == "not_comparable"
            assert "different bench sessions" in step["why"]
        else:
            assert step["verdict"] in ("higher", "lower", "within_noise")
            assert before["session"] == row["session"]
    assert crossing == CROSSING
    assert len(series["sessions"]) == 5
    overall = series["overall"]
    assert (overall["a"], overall["b"]) == ("8.0.26", "18devel")
    assert overall["crosses_sessions"] and overall["verdict"] == "not_comparable"
    first, last = rows[0]["center"], rows[-1]["center"]
    assert overall["change_pct"] == round((last / first - 1) * 100, 2)


def test_the_wal_setting_change_of_95_is_named_in_its_step(series_runs) -> None:
    known, _ = series_runs
    (series,) = known["series"]
    step = next(r["step"] for r in series["rows"] if r["version"] == "9.5.25")
    changes = {c["setting"]: (c["a"], c["b"]) for c in step["settings_change"]}
    assert changes == {
        "checkpoint_segments": (8192, None),
        "max_wal_size": (None, "128GB"),
        "min_wal_size": (None, "32GB"),
    }
    assert len(step["renamed"]) == 1 and "max_wal_size" in step["renamed"][0]
    later = next(r["step"] for r in series["rows"] if r["version"] == "9.6.24")
    assert later["settings_change"] == [] and later["renamed"] == []


@pytest.mark.parametrize(
    ("older", "newer"),
    [("9.6.24", "10.23"), ("17.0", "18devel"), ("18devel", "18beta1"), ("18rc1", "18.0"),
     ("8.4.22", "9.0.23")],
)  # fmt: skip
def test_release_order(older: str, newer: str) -> None:
    assert release_order(older) < release_order(newer)


def test_a_bare_number_is_no_release() -> None:
    assert release_order("8") is None and release_order("fast") is None
