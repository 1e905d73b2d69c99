"""kb compare on a planted data set (tests/analyze/planted.py): known effects are found with
their size and verdict, a noise-sized difference is called noise, the confound is listed, the
interaction is reported with its four numbers, and nothing else is compared. Then properties
of comparisons: swapping sides inverts them, a difference in an incidental field is always
listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planted import EXPECTED, records, write_planted

from kbtest import run_kb
from pgbench_kb.analyze import build_knowledge, knowledge_from_runs
from pgbench_kb.analyze.groups import build_groups
from pgbench_kb.analyze.load import RunRecord
from pgbench_kb.analyze.pairs import compare


@pytest.fixture(scope="module")
def planted_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_planted(tmp_path_factory.mktemp("planted"))


@pytest.fixture(scope="module")
def knowledge(planted_root: Path) -> dict:
    return build_knowledge(planted_root)


def _name(group_id: str) -> str:
    return group_id.split("plant-")[-1].removesuffix("-r1")


@pytest.mark.parametrize(
    ("a", "b", "factor", "ratio", "verdict", "caveats"), EXPECTED, ids=[e[1] for e in EXPECTED]
)
def test_planted_effect_is_found(knowledge, a, b, factor, ratio, verdict, caveats):
    found = [
        c
        for c in knowledge["comparisons"]
        if (_name(c["a"]["group"]), _name(c["b"]["group"])) == (a, b) and c["metric"] == "tps"
    ]
    assert len(found) == 1, [(c["a"]["group"], c["b"]["group"]) for c in knowledge["comparisons"]]
    c = found[0]
    assert c["factor"].split("+")[0] == factor
    assert c["ratio"] == pytest.approx(ratio, abs=1e-4)
    assert c["verdict"] == verdict
    assert [d["field"] for d in c["differs_also"]] == caveats


def test_nothing_but_the_planted_comparisons(knowledge):
    pairs = {(_name(c["a"]["group"]), _name(c["b"]["group"])) for c in knowledge["comparisons"]}
    assert pairs == {(a, b) for a, b, *_ in EXPECTED}


def test_machine_comparison_says_so(knowledge):
    c = next(c for c in knowledge["comparisons"] if c["kind"] == "machine")
    assert c["machine"] == "synth-laptop vs synth-xeon-ssd"
    assert c["factor_family"] == "machine"
    assert c["a"]["value"] == "synth-laptop" and c["b"]["value"] == "synth-xeon-ssd"


def test_interaction_with_four_numbers(knowledge):
    (i,) = knowledge["interactions"]
    assert (i["factor"], i["with"]) == (
        "postgres.settings.commit_delay",
        "postgres.settings.fsync",
    )
    assert i["kind"] == "sign" and i["verdict"] == "differs"
    assert sorted(cell["center"] for cell in i["cells"]) == [1000, 1200, 1800, 2000]
    assert i["ratio_of_ratios"] == pytest.approx(0.9 / 1.2, abs=1e-4)
    low, high = i["test"]["ci95_ratio"]
    assert low < 0.75 < high < 1
    assert i["text"] == (
        "On synth-xeon-ssd, the effect of commit_delay (server default → 1000) depends on fsync: "
        "with on, tps rose 20.0% (1,000 → 1,200); with off, tps fell 10.0% (2,000 → 1,800)."
        # the caveats of the comparisons under it (#19): one side runs with fsync off
        " Warning: fsync = off can lose or corrupt data in a crash: an unsafe reference point,"
        " not a setting to run."
    )


def test_findings_skip_noise_and_mark_unknown_spread(knowledge):
    texts = [f["text"] for f in knowledge["findings"]]
    assert not [t for t in texts if "synchronous_commit" in t]
    (one_off,) = [t for t in texts if "work_mem" in t]
    assert "single runs, so the noise is unknown" in one_off or "noise is unknown" in one_off
    (confound,) = [t for t in texts if "wal_compression" in t]
    assert confound.endswith("Caveat: duration (-T) also differs (60 vs 300).")


def test_cli_filters_by_factor_and_machine(planted_root):
    done = run_kb("compare", "--root", str(planted_root), "--json", "--factor", "postgres.settings")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["format"] == "pgbench-kb/comparisons/1"
    assert data["comparisons"] and all(
        c["factor"].startswith("postgres.settings.") for c in data["comparisons"]
    )
    assert len(data["interactions"]) == 1
    done = run_kb("compare", "--root", str(planted_root), "--machine", "synth-laptop")
    assert done.returncode == 0, done.stderr
    assert "synth-laptop vs synth-xeon-ssd" in done.stdout
    assert "1 comparison(s)" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--machine", "synth-laptp"],
            "error: --machine: no runs on machine 'synth-laptp' (did you mean synth-laptop?)\n",
        ),
        (
            ["--factor", "postgres.settings.comit_delay"],
            "error: --factor: 'postgres.settings.comit_delay' is not a factor of any run "
            "(did you mean postgres.settings.commit_delay",
        ),
    ],
)
def test_cli_unknown_machine_or_factor_is_one_line(planted_root, args, message):
    done = run_kb("compare", "--root", str(planted_root), *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1


def test_cli_root_without_runs_is_one_line(tmp_path):
    done = run_kb("compare", "--root", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert done.stderr == (
        f"error: --root: {tmp_path.as_posix()}/nowhere/data/runs is not a folder "
        "(give the project root, the folder that holds data/runs/)\n"
    )


def test_cli_bad_run_file_is_one_line(tmp_path):
    root = write_planted(tmp_path)
    bad = next((root / "data" / "runs").rglob("plant-base-r2.yaml"))
    bad.write_text(bad.read_text().replace("  tps: ", "  tps: fast #", 1), encoding="utf-8")
    done = run_kb("compare", "--root", str(root))
    assert done.returncode == 1
    assert done.stderr.startswith("error: data/runs/2025/06/plant-base-r2.yaml")
    assert "results.tps" in done.stderr and done.stderr.count("\n") == 1


def test_repeat_group_mixing_configurations_is_an_error(tmp_path):
    root = write_planted(tmp_path)
    path = next((root / "data" / "runs").rglob("plant-cd-r2.yaml"))
    path.write_text(path.read_text().replace("group: plant-cd", "group: plant-base"))
    done = run_kb("compare", "--root", str(root))
    assert done.returncode == 1
    assert "repeat.group 'plant-base' mixes configurations" in done.stderr
    assert "postgres.settings.commit_delay" in done.stderr


# --- properties on hand-made records --------------------------------------------------------

INCIDENTAL = {
    "benchmark.transactions_per_client": st.sampled_from([None, 500, 1000]),
    "benchmark.duration_s": st.sampled_from([None, 60, 300]),
    "benchmark.pgbench_version": st.sampled_from([None, "16.4", "17.2"]),
    "provenance.recorded_at": st.sampled_from(["2025-01-01", "2025-02-03"]),
}


def record(name: str, tps: list[float], factors: dict, incidental: dict) -> list[RunRecord]:
    return records(name, tps, factors, incidental=incidental)


def test_aborted_runs_and_runs_without_tps_stay_out_of_groups():
    runs = record("a", [100.0, 101.0, 99.0], {"benchmark.clients": 8}, {})
    runs[1].aborted = True
    runs[2].tps = None
    knowledge = knowledge_from_runs(runs)
    (group,) = knowledge["groups"]
    assert group["runs"] == ["a-r1"] and group["n"] == 1
    assert [e["run"] for e in knowledge["excluded_runs"]] == ["a-r2", "a-r3"]
    assert "aborted" in knowledge["excluded_runs"][0]["reason"]


values = st.lists(st.floats(min_value=10, max_value=1e5), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(values, values, st.fixed_dictionaries(INCIDENTAL), st.fixed_dictionaries(INCIDENTAL))
def test_a_confound_is_always_listed(tps_a, tps_b, inc_a, inc_b):
    runs = record("a", tps_a, {"benchmark.clients": 8}, inc_a)
    runs += record("b", tps_b, {"benchmark.clients": 16}, inc_b)
    (c,) = knowledge_from_runs(runs)["comparisons"]
    differ = sorted(f for f in INCIDENTAL if inc_a[f] != inc_b[f])
    assert [d["field"] for d in c["differs_also"]] == differ
    for d in c["differs_also"]:
        side_a = c["a"]["group"].endswith("-a")
        assert {d["a"], d["b"]} == {inc_a[d["field"]], inc_b[d["field"]]}
        assert (d["a"] == inc_a[d["field"]]) == side_a or inc_a[d["field"]] == inc_b[d["field"]]


@settings(max_examples=150, deadline=None)
@given(values, values)
def test_swapping_sides_inverts_the_ratio(tps_a, tps_b):
    runs = record("a", tps_a, {"benchmark.clients": 8}, {})
    runs += record("b", tps_b, {"benchmark.clients": 16}, {})
    a, b = build_groups(runs)
    fields = frozenset({"benchmark.clients"})
    forward, backward = compare(a, b, fields, None), compare(b, a, fields, None)
    # The ratios are published to 4 decimals; unrounded they are exact inverses.
    assert forward["ratio"] == round(b.center / a.center, 4)
    assert backward["ratio"] == round(a.center / b.center, 4)
    assert forward["change_pct"] == round((forward["ratio"] - 1) * 100, 2)
    assert (forward["a"], forward["b"]) == (backward["b"], backward["a"])
    flip = {"higher": "lower", "lower": "higher"}
    assert backward["verdict"] == flip.get(forward["verdict"], forward["verdict"])


def test_groups_from_different_bench_sessions_carry_the_session_as_a_caveat() -> None:
    """Regression: two measured groups from different benches (40 minutes and a different
    machine load apart) were compared with nothing said; the bench session now shows in
    ``differs_also``, as every incidental difference does."""
    from planted import planted_runs

    from pgbench_kb.analyze.load import bench_session, record_of

    assert bench_session({"group": "db1-20261122T001500Z-a41c07-3fa2b9c1"}) == (
        "20261122T001500Z-a41c07"
    )
    assert bench_session({"group": "kb-dev-20261123T132654Z-694b2bc5"}) == "20261123T132654Z"
    assert bench_session({"group": "plant-base"}) is None
    sessions = {"base": "20261123T130317Z", "sb-64gb": "20261123T134240Z"}
    runs = []
    for run in planted_runs():
        name = run["id"].removeprefix("plant-").rsplit("-r", 1)[0]
        if name in sessions and run["repeat"]:
            run["repeat"]["group"] = f"box-{sessions[name]}-0badcafe"
        runs.append(record_of(run, run["id"]))
    knowledge = knowledge_from_runs(runs)
    (shared,) = [
        c
        for c in knowledge["comparisons"]
        if c["factor"] == "postgres.settings.shared_buffers" and c["metric"] == "tps"
    ]
    assert {"field": "repeat.session", "a": sessions["base"], "b": sessions["sb-64gb"]} in (
        shared["differs_also"]
    )


def test_interaction_figures_never_use_exponents() -> None:
    """Regression: a square's sentence wrote centres of 10,000 tps and more with an exponent
    ("tps rose 6.2% (1.142e+04 → 1.213e+04)" on the kb-dev runs); they read as the findings'
    figures do."""
    from pgbench_kb.analyze.interactions import _effect_text

    effect = {"change_pct": 6.21, "a": {"center": 11424.66842}, "b": {"center": 12134.010612}}
    assert _effect_text(effect) == "tps rose 6.2% (11,425 → 12,134)"


def test_the_json_of_many_comparisons_encoded_in_two_halves_is_json_dumps(knowledge, monkeypatch):
    """``kb compare --json`` encodes a long list of comparisons in two halves at once, the
    second in a forked process: the text is the one ``json.dumps`` writes, whatever the
    number of comparisons (odd, even, too few to split) and whatever text they hold."""
    from pgbench_kb.analyze import render

    monkeypatch.setattr(render, "SPLIT_JSON_FROM", 2)
    tricky = {"id": 'quote " and ], "\u00e9', "ratio": float("nan"), "runs": [], "x": {"y": [1]}}
    for comparisons in (
        knowledge["comparisons"],
        knowledge["comparisons"][:3],
        [*knowledge["comparisons"], tricky],
        [tricky],
        [],
    ):
        value = {**knowledge, "comparisons": comparisons}
        assert render.as_json(value) == json.dumps(value)
    assert len(knowledge["comparisons"]) >= 2  # handed over at least once
