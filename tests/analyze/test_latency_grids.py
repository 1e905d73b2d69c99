"""Latency comparisons and interactions beyond 2×2 on the extended planted set
(tests/analyze/planted.py ``EXTENDED``): a planted latency effect is found and read as better,
a noise-sized one is within the noise, latency findings only say what tps does not, swapping
sides inverts latency ratios, and a 2×3 interaction is found with all its numbers while a
noise-sized one is not."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planted import EXTENDED, records, write_planted

from kbtest import assert_golden
from pgbench_kb.analyze import build_knowledge
from pgbench_kb.analyze.groups import build_groups
from pgbench_kb.analyze.latency import latency_comparisons
from pgbench_kb.analyze.load import RunRecord
from pgbench_kb.analyze.pairs import compare
from pgbench_kb.analyze.render import render_table

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return build_knowledge(write_planted(tmp_path_factory.mktemp("extended"), EXTENDED))


def _between(knowledge: dict, a: str, b: str, metric: str) -> dict:
    (found,) = [
        c
        for c in knowledge["comparisons"]
        if c["metric"] == metric
        and {c["a"]["group"], c["b"]["group"]}
        == {f"synth-xeon-ssd-plant-{a}", f"synth-xeon-ssd-plant-{b}"}
    ]
    return found


def test_planted_latency_effect_is_found_and_lower_latency_is_better(knowledge):
    c = _between(knowledge, "base", "sync-off", "latency_avg_ms")
    assert c["a"]["group"].endswith("plant-base")
    assert (c["ratio"], c["verdict"], c["outcome"], c["better_when"]) == (
        0.8,
        "lower",
        "better",
        "lower",
    )
    assert c["tps_comparison"] == _between(knowledge, "base", "sync-off", "tps")["id"]
    assert c["a"]["center"] == pytest.approx(8.0) and c["a"]["n"] == 5
    p99 = _between(knowledge, "base", "sync-off", "latency_p99_ms")
    assert (p99["ratio"], p99["verdict"], p99["outcome"]) == (1.5, "higher", "worse")


def test_noise_sized_latency_change_is_within_noise(knowledge):
    c = _between(knowledge, "base", "cd", "latency_avg_ms")
    assert c["ratio"] == pytest.approx(1.01) and c["verdict"] == "within_noise"
    assert c["outcome"] == "within_noise"


def test_higher_latency_is_never_called_better(knowledge):
    for c in knowledge["comparisons"]:
        if c["metric"] == "tps":
            assert c["better_when"] == "higher"
            assert c["outcome"] == {"higher": "better", "lower": "worse"}.get(
                c["verdict"], c["verdict"]
            )
        else:
            assert c["better_when"] == "lower"
            assert c["outcome"] == {"higher": "worse", "lower": "better"}.get(
                c["verdict"], c["verdict"]
            )


def test_latency_findings_only_add_what_tps_does_not_say(knowledge):
    latency = [f for f in knowledge["findings"] if f["kind"] == "latency"]
    # Only sync-off: elsewhere latency mirrors tps (clients / tps) or is within the noise.
    (one,) = latency
    assert one["metrics"] == [
        "latency_avg_ms",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_p99_ms",
    ]
    assert "average latency 20.0% lower, so better (8 → 6.4 ms" in one["text"]
    assert "p99 latency 50.0% higher, so worse (20 → 30 ms" in one["text"]
    assert one["text"].endswith("; tps is within the noise.")
    texts = [f["text"] for f in knowledge["findings"]]
    assert len(texts) == len(set(texts))


def _records(name: str, clients: int, pairs: list[tuple[float, float]]) -> list[RunRecord]:
    tps, latency = [p[0] for p in pairs], [p[1] for p in pairs]
    return records(name, tps, {"benchmark.clients": clients}, latency=latency)


pairs = st.lists(
    st.tuples(st.floats(min_value=10, max_value=1e5), st.floats(min_value=0.01, max_value=1e3)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(pairs, pairs)
def test_swapping_sides_inverts_the_latency_ratio(runs_a, runs_b):
    a, b = build_groups(_records("a", 8, runs_a) + _records("b", 16, runs_b))
    fields = frozenset({"benchmark.clients"})
    (forward,) = latency_comparisons([compare(a, b, fields, None)], [a, b])
    (backward,) = latency_comparisons([compare(b, a, fields, None)], [a, b])
    ratio = forward["b"]["center"] / forward["a"]["center"]
    # Each ratio is rounded to 4 decimals from its own division: a half-way case (61.71875)
    # may round either way, so the two agree to the last decimal kept.
    assert forward["ratio"] == pytest.approx(ratio, abs=1e-4)
    assert backward["ratio"] == pytest.approx(1 / ratio, abs=1e-4)
    assert (forward["a"]["center"], forward["b"]["center"]) == (
        backward["b"]["center"],
        backward["a"]["center"],
    )
    flip = {"higher": "lower", "lower": "higher", "better": "worse", "worse": "better"}
    assert backward["verdict"] == flip.get(forward["verdict"], forward["verdict"])
    assert backward["outcome"] == flip.get(forward["outcome"], forward["outcome"])


def test_a_three_by_two_interaction_is_found_with_all_its_numbers(knowledge):
    (grid,) = [i for i in knowledge["interactions"] if i["shape"] != "2x2"]
    assert (grid["factor"], grid["with"], grid["shape"]) == (
        "postgres.settings.synchronous_commit",
        "postgres.settings.wal_level",
        "2x3",
    )
    assert grid["kind"] == "size" and grid["verdict"] == "differs"
    assert grid["levels"]["postgres.settings.wal_level"] == [None, "logical", "replica"]
    assert [e["ratio"] for e in grid["effects"]] == [1.02, 1.6, 1.02]
    assert [e["verdict"] for e in grid["effects"]] == ["within_noise", "higher", "within_noise"]
    assert len(grid["cells"]) == 6 and len(grid["contrasts"]) == 3
    assert [c["verdict"] for c in grid["contrasts"]] == ["differs", "within_noise", "differs"]
    assert grid["test"]["confidence"] == pytest.approx(1 - 0.05 / 3, abs=1e-6)
    low, high = grid["test"]["ci_ratio"]
    assert low < grid["ratio_of_ratios"] < high < 1
    assert grid["text"] == (
        "On synth-xeon-ssd, the effect of synchronous_commit depends on wal_level (2×3 "
        "groups): synchronous_commit on → off: with server default, tps rose 2.0% (1,000 → "
        "1,020) (within noise); with logical, tps rose 60.0% (900 → 1,440); with replica, tps "
        "rose 2.0% (950 → 969) (within noise); the effect differs beyond the noise between "
        "logical and replica (ratio of the ratios 0.637, 98.33% interval 0.608–0.669, widened "
        "for 3 contrasts); 2 of 3 contrasts are outside the noise."
    )
    assert grid["text"] in [f["text"] for f in knowledge["findings"]]


def test_a_noise_sized_three_by_two_interaction_is_not_reported(tmp_path):
    flat = tuple(
        dataclasses.replace(p, center=918.0) if p.group == "wl-logical-off" else p for p in EXTENDED
    )
    knowledge = build_knowledge(write_planted(tmp_path, flat))
    assert [i for i in knowledge["interactions"] if i["shape"] != "2x2"] == []


def test_table_with_latency_lines_matches_golden(knowledge):
    text = render_table(knowledge)
    path = GOLDEN / "extended.txt"
    assert_golden(path, text)
    assert "latency avg (ms)" in text and "lower: better" in text


def test_latency_comparisons_are_kb_compares_and_stay_off_the_sites_call(tmp_path):
    """The site's pages show every comparison as tps: until they show latency, derive's call
    (``knowledge_from_runs`` without ``latency=True``) gets tps comparisons only."""
    from planted import planted_runs

    from pgbench_kb.analyze import knowledge_from_runs
    from pgbench_kb.analyze.load import record_of

    runs = [record_of(run, run["id"]) for run in planted_runs(EXTENDED)]
    site = knowledge_from_runs(runs)
    assert {c["metric"] for c in site["comparisons"]} == {"tps"}
    assert not [f for f in site["findings"] if f["kind"] == "latency"]
    full = knowledge_from_runs(runs, latency=True)
    assert {c["metric"] for c in full["comparisons"]} > {"tps"}
    assert [c for c in full["comparisons"] if c["metric"] == "tps"] == site["comparisons"]


def test_a_grid_of_single_runs_is_reported_only_for_a_change_of_sign(tmp_path):
    """Without spread in a cell no contrast can be tested: a change of sign is reported as
    ``spread_unknown``; a same-sign difference of any size is not."""

    def grid(logical_off: float) -> list[dict]:
        groups = tuple(
            dataclasses.replace(
                p, n=1, center=logical_off if p.group == "wl-logical-off" else p.center
            )
            if p.group.startswith("wl-")
            else p
            for p in EXTENDED
        )
        root = write_planted(tmp_path / str(logical_off), groups)
        return [i for i in build_knowledge(root)["interactions"] if i["shape"] != "2x2"]

    (flip,) = grid(800.0)
    assert (flip["kind"], flip["verdict"]) == ("sign", "spread_unknown")
    assert {c["verdict"] for c in flip["contrasts"]} == {"spread_unknown"}
    assert flip["test"]["ci95_ratio"] is None
    assert flip["text"].endswith(
        "the effect changes sign (single runs, so its size is not tested)."
    )
    assert grid(1440.0) == []
