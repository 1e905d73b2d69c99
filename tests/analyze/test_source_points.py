"""The sources' points issue 31 found missing, as checked claims (data/claims.yaml): the 2010
study's safe tuning path step by step (a ``path`` claim) and its TPC-C half (transcribed as
runs marked as not pgbench), the talk's latency standard deviation (compared where the runs
have no tail percentiles), and the points no run can check, each with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kbtest import shipped_root
from pgbench_kb.analyze import build_knowledge
from pgbench_kb.analyze.claims import check_claim

TPCC = "tpc-c (a commercial tool, not pgbench)"


@pytest.fixture(scope="module")
def known() -> dict:
    return build_knowledge(shipped_root())


@pytest.fixture(scope="module")
def claims(known) -> dict[str, dict]:
    return {c["id"]: c for c in known["claims"]}


def test_the_safe_tuning_path_shows_each_steps_share_and_the_whole(claims):
    c = claims["safe-tuning-path-five-fold"]
    assert c["verdict"] == "holds"
    by_version = {x["version"]: x for x in c["checks"]}
    assert sorted(by_version) == ["8.2.14", "8.4.2"]
    old, new = by_version["8.2.14"], by_version["8.4.2"]
    assert [s["tps"] for s in old["steps"]] == [409, 853, 1667, 2372, 2323]
    assert [s["tps"] for s in new["steps"]] == [462, 981, 1562, 2332, 2350]
    assert [s["step_pct"] for s in old["steps"]] == [None, 108.56, 95.43, 42.29, -2.07]
    assert [s["cumulative_pct"] for s in old["steps"]] == [0.0, 108.56, 307.58, 479.95, 467.97]
    assert new["change_pct"] == round((2350 / 462 - 1) * 100, 2)
    # fsync off (row 6) gives up durability: the path ends before it
    assert all(s["tps"] not in (2792, 2809) for x in c["checks"] for s in x["steps"])
    assert "409 → 2,323 tps (+468.0%)" in c["text"] and "462 → 2,350 tps (+408.7%)" in c["text"]
    assert "WAL on the second disk +95.4% (+307.6% in all)" in c["text"]
    # the 8.4.2 row the study calls unstable is a middle step: shown with the reason
    assert [s["set_aside"] is not None for s in new["steps"]] == [0, 0, 1, 0, 0]
    assert "(+238.1% in all; the study calls that row unstable)" in c["text"]


def test_the_tpcc_half_is_transcribed_and_marked_as_not_pgbench():
    runs = [
        yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted((shipped_root() / "data" / "runs" / "2010").rglob("*.yaml"))
    ]
    tpcc = [r for r in runs if r["benchmark"]["workload"]["name"] == TPCC]
    assert len(tpcc) == 12
    cells = {
        (r["benchmark"]["clients"], r["postgres"]["version"], r["postgres"]["settings"]["fsync"]): (
            r["results"]["tps"],
            r["results"]["latency_avg_ms"],
        )
        for r in tpcc
    }
    assert cells[(20, "8.2.14", "off")] == (119.40, 167)
    assert cells[(20, "8.4.2", "off")] == (150.35, 132)
    assert cells[(5, "8.4.2", "on")] == (62.98, 79)
    for r in tpcc:
        assert r["origin"] == "transcribed" and r["benchmark"]["pgbench_version"] is None
        assert r["provenance"]["notes"].startswith("TPC-C, not pgbench")
        assert r["provenance"]["source"]["locator"].startswith("TPC-C table, ")


def test_the_tpcc_version_claims_are_checked_with_their_figures(claims):
    quarter = claims["v84-tpcc-quarter-faster-at-20-threads"]
    assert quarter["verdict"] == "holds"
    assert [(x["change_pct"], x["verdict"]) for x in quarter["checks"]] == [
        (round((150.35 / 119.40 - 1) * 100, 2), "spread_unknown")
    ]
    five = claims["v84-tpcc-5-threads-not-significant"]
    ten = claims["v84-tpcc-10-threads-not-significant"]
    assert five["verdict"] == "not supported by its own figures"
    assert [x["change_pct"] for x in five["checks"]] == [round((70.65 / 79.24 - 1) * 100, 2)]
    assert ten["verdict"] == "holds"
    assert [x["change_pct"] for x in ten["checks"]] == [round((107.42 / 110.92 - 1) * 100, 2)]
    for c in (quarter, five, ten):
        assert "not pgbench" in c["claim"]


def test_the_tpcb_claims_do_not_pick_up_the_tpcc_runs(claims):
    """The version claim on TPC-B pairs groups by settings, not by clients: without its
    workload it would pair TPC-C groups of different thread counts."""
    c = claims["v84-up-to-15-pct-faster"]
    assert sorted(x["change_pct"] for x in c["checks"]) == [-1.69, 0.61, 1.16, 12.96, 15.01]


def test_the_talks_standard_deviation_is_compared_and_checked(known, claims):
    c = claims["ring-buffer-patch-steadier-copy"]
    assert c["verdict"] == "holds"
    assert [x["values"] for x in c["checks"]] == [[314.739, 101.553]]
    (stddev,) = [
        x
        for x in known["comparisons"]
        if x.get("metric") == "latency_stddev_ms" and "talk" in x["machine"]
    ]
    assert stddev["id"].endswith("-latency-stddev")
    assert (stddev["change_pct"], stddev["verdict"], stddev["outcome"]) == (
        round((101.553 / 314.739 - 1) * 100, 2),
        "spread_unknown",
        "spread_unknown",
    )


def test_the_standard_deviation_stands_in_only_where_the_tails_are_missing(known):
    """A group with a p95 or p99 that meets the sample rules is judged on those: no stddev
    comparison rests on it."""
    by_tps = {}
    for x in known["comparisons"]:
        by_tps.setdefault(x.get("tps_comparison"), set()).add(x["metric"])
    tails = {"latency_p95_ms", "latency_p99_ms"}
    both = [m for m in by_tps.values() if "latency_stddev_ms" in m and m & tails]
    assert not both
    assert any("latency_stddev_ms" in m for m in by_tps.values())


@pytest.mark.parametrize(
    ("claim_id", "words"),
    [
        ("write-cache-makes-writes-erratic", "no progress reports"),
        ("write-cache-stalls-reads", "no read latency"),
        ("linux-software-raid-bottleneck", "no run holds a CentOS figure with mdraid"),
        ("spread-checkpoint-writes-half-the-dirty-buffers", "not how many were dirty"),
    ],
)
def test_the_points_no_run_can_check_say_why(claims, claim_id, words):
    c = claims[claim_id]
    assert c["verdict"] == "cannot be checked"
    assert words in c["reason"]


# A path claim on planted groups: where the answer is known.


def group(gid: str, center: float, **fields) -> dict:
    return {
        "id": gid,
        "machine": "box",
        "factors": fields,
        "incidental": {},
        "center": center,
        "latency_avg_ms": None,
    }


def path_claim(**expects) -> dict:
    return {
        "id": "p",
        "kind": "path",
        "claim": "Tuning helps.",
        "concerns": {
            "machine": "box",
            "steps": [{"label": "start", "step": 0}, {"step": 1}, {"step": 2}],
            "same": ["v"],
        },
        "expects": expects or {"direction": "higher", "at_least_pct": 100},
    }


def planted(*groups: dict) -> dict:
    return {g["id"]: g for g in groups}


PATHS = planted(
    group("a0", 100, step=0, v="a"),
    group("a1", 150, step=1, v="a"),
    group("a2", 250, step=2, v="a"),
    group("b0", 100, step=0, v="b"),
    group("b1", 120, step=1, v="b"),
    group("b2", 150, step=2, v="b"),
)


def test_a_path_is_judged_from_its_first_step_to_its_last_per_version():
    c = check_claim(path_claim(), PATHS, [])
    assert c["verdict"] == "holds on one version only" and c["holds_on"] == ["a"]
    a = next(x for x in c["checks"] if x["version"] == "a")
    assert [s["step_pct"] for s in a["steps"]] == [None, 50.0, 66.67]
    assert [s["cumulative_pct"] for s in a["steps"]] == [0.0, 50.0, 150.0]
    assert "on a, 100 → 250 tps (+150.0%): step 1 +50.0% (+50.0% in all)" in c["text"]
    assert check_claim(path_claim(direction="higher"), PATHS, [])["verdict"] == "holds"
    assert check_claim(path_claim(direction="lower"), PATHS, [])["verdict"] == (
        "not supported by its own figures"
    )


def test_a_path_with_a_missing_or_doubled_step_says_so():
    gap = planted(*(g for g in PATHS.values() if g["id"] != "b1"))
    c = check_claim(path_claim(direction="higher"), gap, [])
    assert c["verdict"] == "holds" and [x["version"] for x in c["checks"]] == ["a"]
    assert "not checked: b: no group for step 1" in c["text"]
    doubled = planted(*PATHS.values(), group("a1bis", 160, step=1, v="a"))
    c = check_claim(path_claim(direction="higher"), doubled, [])
    assert "a: more than one group for step 1" in c["text"]
    nothing = planted(group("a0", 100, step=0, v="a"))
    c = check_claim(path_claim(direction="higher"), nothing, [])
    assert c["verdict"] == "cannot be checked" and "no group for step 1, step 2" in c["reason"]


def test_a_path_starting_on_a_group_the_source_distrusts_is_set_aside():
    claim = path_claim(direction="higher")
    claim["set_aside"] = [{"where": {"step": 0, "v": "b"}, "why": "unstable"}]
    c = check_claim(claim, PATHS, [])
    assert c["verdict"] == "holds"
    assert [x["set_aside"] for x in c["checks"]] == [None, "unstable"]
    assert "set aside because unstable" in c["text"]
    claim["set_aside"] = [{"where": {"step": 2}, "why": "every end"}]
    assert check_claim(claim, PATHS, [])["verdict"] == "cannot be checked"


def test_claims_file_documents_every_kind_it_uses():
    text = (shipped_root() / "data" / "claims.yaml").read_text(encoding="utf-8")
    header = text.split("schema_version")[0]
    kinds = {c.get("kind", "comparison") for c in yaml.safe_load(text)["claims"]}
    assert kinds == {"comparison", "groups", "ranking", "figures", "path"}
    for kind in kinds:
        assert kind in header


def test_path_claims_are_rejected_without_steps(tmp_path: Path):
    from planted import write_planted

    from kbtest import run_kb

    root = write_planted(tmp_path)
    (root / "data" / "claims.yaml").write_text(
        "schema_version: 1\nclaims:\n- id: x\n  claim: C.\n  kind: path\n"
        "  concerns: {machine: box}\n  expects: {direction: higher}\n",
        encoding="utf-8",
    )
    done = run_kb("compare", "--root", str(root))
    assert done.returncode == 1
    assert "claims.0.concerns.steps: missing (required)" in done.stderr
    assert done.stderr.count("\n") == 1
