"""Bench sessions as a level of variation (#19): a difference between two sessions is never
published as the effect of a factor, and the between-session variance is estimated and used
once the machine has measured it. Also the sample rules for percentiles, the confounds named in
words, and the ranking of findings."""

from __future__ import annotations

from typing import Any

import pytest
from planted import records

from pgbench_kb.analyze import knowledge_from_runs
from pgbench_kb.analyze.groups import build_groups
from pgbench_kb.analyze.latency import latency_comparisons
from pgbench_kb.analyze.pairs import find_comparisons
from pgbench_kb.analyze.sessions import BETWEEN_METHOD, estimate

BASE = {
    "benchmark.workload.name": "tpcb-like",
    "benchmark.scale": 50,
    "benchmark.clients": 8,
    "postgres.version": "18.1",
}
SETTING = {**BASE, "postgres.settings.wal_compression": "on"}
S1, S2, S3 = "20261201T100000Z-aaaa01", "20261202T100000Z-bbbb02", "20261203T100000Z-cccc03"

#: Five repeats with a 0.5% spread around each centre.
SPREAD = (1.0, 1.005, 0.995, 1.002, 0.998)


def runs(name: str, center: float, factors: dict[str, Any], session: str, **more: Any) -> list:
    return records(
        name,
        [center * s for s in SPREAD],
        factors,
        incidental={"repeat.session": session, **more},
    )


def setting_comparisons(knowledge: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c
        for c in knowledge["comparisons"]
        if c["factor"] == "postgres.settings.wal_compression" and c["metric"] == "tps"
    ]


def test_a_setting_measured_in_another_session_only_gets_no_verdict() -> None:
    """Baseline in session 1, the setting (which changes nothing) only in session 2, where the
    machine runs 50% faster: without a between-session variance the comparison is
    not_comparable, and nothing rests on it."""
    known = knowledge_from_runs(
        runs("base-s1", 1000, BASE, S1) + runs("setting-s2", 1500, SETTING, S2)
    )
    (c,) = setting_comparisons(known)
    assert c["change_pct"] == pytest.approx(50.0)
    assert c["verdict"] == "not_comparable"
    assert c["test"]["ci95_ratio"] is None
    assert c["sessions"]["shared"] is False and c["sessions"]["basis"] == "none"
    assert "different bench sessions" in c["sessions"]["why"]
    assert known["findings"] == []
    assert known["sessions"][0]["between"] is None


def test_a_pair_compared_inside_a_session_is_not_judged_across_sessions() -> None:
    """The baseline in two sessions (+50% in the second) and a setting that changes nothing,
    measured beside it in the second: the comparison inside that session is the evidence
    (within the noise); the same two configurations across the sessions get no verdict, even
    with a between-session variance at hand, and nothing rests on them."""
    two = runs("base-s1", 1000, BASE, S1) + runs("base-s2", 1500, BASE, S2)
    two += runs("setting-s2", 1500, SETTING, S2)
    for known in (knowledge_from_runs(two), knowledge_from_runs(two + runs("b3", 1200, BASE, S3))):
        found = setting_comparisons(known)
        same = next(c for c in found if c["sessions"]["shared"])
        assert same["verdict"] == "within_noise" and same["sessions"]["basis"] == "one session"
        cross = [c for c in found if not c["sessions"]["shared"]]
        assert cross
        for c in cross:
            assert c["verdict"] == "not_comparable" and c["test"]["ci95_ratio"] is None
            assert c["sessions"]["compared_inside"] is True
            assert "inside one session" in c["sessions"]["why"]
        assert not [f for f in known["findings"] if f["verdict"] in ("higher", "lower")]


def test_planted_session_shift_is_not_called_and_third_session_measures_it() -> None:
    """One configuration in two sessions (+50% in the second) and a setting that changes
    nothing, measured only in a session of its own: no higher/lower verdict on the setting.
    With a third session of the baseline, the between-session variance is estimated (2 degrees
    of freedom) and used in the interval of the cross-session comparison."""
    s4 = "20261204T100000Z-dddd04"
    two = runs("base-s1", 1000, BASE, S1) + runs("base-s2", 1500, BASE, S2)
    two += runs("setting-s4", 1500, SETTING, s4)
    known = knowledge_from_runs(two)
    found = setting_comparisons(known)
    assert len(found) == 2
    for cross in found:
        assert not cross["sessions"]["shared"]
        assert cross["test"]["method"] == BETWEEN_METHOD
        assert cross["sessions"]["between"]["df"] == 1
        assert "compared_inside" not in cross["sessions"]
        assert cross["verdict"] in ("within_noise", "not_comparable")
    assert not [f for f in known["findings"] if f["verdict"] in ("higher", "lower")]

    three = two + runs("base-s3", 1200, BASE, S3)
    known = knowledge_from_runs(three)
    (summary,) = known["sessions"]
    assert summary["between"]["df"] == 2
    assert summary["between"]["sessions"] == 3 and summary["between"]["configurations"] == 1
    cross = setting_comparisons(known)
    assert len(cross) == 3
    for c in cross:
        assert c["test"]["method"] == BETWEEN_METHOD
        assert c["sessions"]["between"]["df"] == 2
        assert c["verdict"] == "within_noise"
        low, high = c["test"]["ci95_ratio"]
        assert low < 1 < high


def test_between_session_variance_matches_the_one_way_estimate() -> None:
    """Two configurations, each in two sessions; the session means differ by a known amount
    and the within noise is removed from it (the estimate pools the configurations)."""
    import math

    shift = math.log(1.2)
    cells = [
        ("m", "x", "s1", [100.0, 100.0]),
        ("m", "x", "s2", [120.0, 120.0]),
        ("m", "y", "s1", [50.0, 50.0]),
        ("m", "y", "s3", [60.0, 60.0]),
    ]
    (between,) = estimate(cells).values()
    # var of two means d apart is d²/2; no within noise to remove
    assert between.variance == pytest.approx(shift**2 / 2)
    assert (between.df, between.configurations, between.sessions) == (2, 2, 4)


def test_cross_session_comparison_that_also_changes_run_length_is_not_comparable() -> None:
    """The between-session variance was measured with the design held constant: it does not
    cover a difference in run length."""
    known = knowledge_from_runs(
        runs("base-s1", 1000, BASE, S1, **{"benchmark.duration_s": 60})
        + runs("base-s2", 1010, BASE, S2, **{"benchmark.duration_s": 60})
        + runs("setting-s2", 2000, SETTING, S2, **{"benchmark.duration_s": 60})
        + runs("setting-s3", 2000, SETTING, S3, **{"benchmark.duration_s": 10})
    )
    longer = [
        c for c in setting_comparisons(known) if "setting-s3" in c["b"]["group"] + c["a"]["group"]
    ]
    assert longer and {c["verdict"] for c in longer} == {"not_comparable"}
    assert all("benchmark.duration_s" in c["sessions"]["why"] for c in longer)
    same = [c for c in setting_comparisons(known) if c["sessions"]["shared"]]
    assert [c["verdict"] for c in same] == ["higher"]


def test_sessions_of_another_design_are_not_pooled_into_the_between_session_variance() -> None:
    """A configuration measured with 10-second trials in one session and 60-second trials in
    another differs by more than the sessions: it does not count as measured in two sessions
    (the old busy campaign and the new one share configurations on the development machine)."""
    known = knowledge_from_runs(
        runs("base-s1", 1000, BASE, S1, **{"benchmark.duration_s": 10})
        + runs("base-s2", 1500, BASE, S2, **{"benchmark.duration_s": 60})
    )
    assert known["sessions"][0]["between"] is None
    same = knowledge_from_runs(
        runs("base-s1", 1000, BASE, S1, **{"benchmark.duration_s": 60})
        + runs("base-s2", 1500, BASE, S2, **{"benchmark.duration_s": 60})
    )
    assert same["sessions"][0]["between"]["configurations"] == 1


def test_a_between_session_estimate_serves_only_comparisons_of_its_own_design() -> None:
    """Minute-long trials of the baseline in two sessions give an estimate; a setting measured
    with 10-second trials in another session than its own baseline is not judged with it."""
    short = {"benchmark.duration_s": 10}
    known = knowledge_from_runs(
        runs("base-s1", 1000, BASE, S1, **{"benchmark.duration_s": 60})
        + runs("base-s2", 1010, BASE, S2, **{"benchmark.duration_s": 60})
        + runs("short-base-s1", 900, BASE, S1, **short)
        + runs("short-setting-s3", 2000, SETTING, S3, **short)
    )
    (summary,) = known["sessions"]
    assert summary["between"]["configurations"] == 1
    assert [d["how_run"] for d in summary["by_design"]] == [{"benchmark.duration_s": 60}]
    short_cross = [
        c for c in setting_comparisons(known)
        if "short-base-s1" in c["a"]["group"] + c["b"]["group"]
        and "short-setting-s3" in c["a"]["group"] + c["b"]["group"]
    ]  # fmt: skip
    assert [c["verdict"] for c in short_cross] == ["not_comparable"]
    assert "with runs made as these were" in short_cross[0]["sessions"]["why"]


def test_interactions_stay_inside_one_session() -> None:
    """A 2×2 square whose two effects come from two sessions is not an interaction: the
    'difference of effects' could be the sessions'."""
    other = {**BASE, "benchmark.clients": 16}
    square = (
        runs("a1", 1000, BASE, S1)
        + runs("b1", 1300, SETTING, S1)
        + runs("a2", 1000, other, S2)
        + runs("b2", 700, {**SETTING, "benchmark.clients": 16}, S2)
    )
    assert knowledge_from_runs(square)["interactions"] == []
    same = (
        [r for r in square if not r.id.startswith(("a2", "b2"))]
        + runs("a2", 1000, other, S1)
        + runs("b2", 700, {**SETTING, "benchmark.clients": 16}, S1)
    )
    (found,) = knowledge_from_runs(same)["interactions"]
    assert found["kind"] == "sign"


def _with_percentiles(group: list, count: int) -> list:
    for run in group:
        run.series = {
            "results": {
                "latency_percentiles_ms": {"p50": 2.0, "p95": 5.0, "p99": 9.0},
                "latency_percentiles_from": {"latencies": count, "sampling_rate": 0.05},
            }
        }
    return group


@pytest.mark.parametrize(
    ("count", "metrics"),
    [
        (150, {"latency_p50_ms"}),
        (200, {"latency_p50_ms", "latency_p95_ms"}),
        (999, {"latency_p50_ms", "latency_p95_ms"}),
        (1000, {"latency_p50_ms", "latency_p95_ms", "latency_p99_ms"}),
    ],
)
def test_percentiles_are_compared_only_above_the_sample_rules(count: int, metrics: set) -> None:
    """No p95 comparison below 200 logged latencies per run, no p99 below 1,000."""
    group_runs = _with_percentiles(runs("a", 1000, BASE, S1), count)
    group_runs += _with_percentiles(runs("b", 1100, SETTING, S1), count)
    groups = build_groups(group_runs)
    found = latency_comparisons(find_comparisons(groups), groups)
    assert {c["metric"] for c in found} == metrics


def test_a_percentile_below_the_rule_in_one_run_leaves_the_group_out() -> None:
    group_runs = _with_percentiles(runs("a", 1000, BASE, S1), 5000)
    low = _with_percentiles(runs("b", 1100, SETTING, S1), 5000)
    low[0].series["results"]["latency_percentiles_from"]["latencies"] = 900
    groups = build_groups(group_runs + low)
    found = latency_comparisons(find_comparisons(groups), groups)
    p99 = next(c for c in found if c["metric"] == "latency_p99_ms")
    assert p99["b"]["n"] == 4  # the run with 900 latencies gives no p99
