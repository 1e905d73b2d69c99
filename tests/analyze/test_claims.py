"""The sources' claims (data/claims.yaml) checked against the comparisons computed from the
historical runs: what holds, what holds on one version only, what its own figures do not
support, and what cannot be checked; and a malformed claims file is one clear line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from planted import write_planted

from kbtest import run_kb, shipped_root
from pgbench_kb.analyze import build_knowledge
from pgbench_kb.analyze.claims import check_claim


@pytest.fixture(scope="module")
def claims(shipped_knowledge: dict) -> dict[str, dict]:
    return {c["id"]: c for c in shipped_knowledge["claims"]}


def test_raid10_over_raid5_holds_on_all_three_pairs(claims):
    c = claims["raid10-beats-raid5"]
    assert c["verdict"] == "holds"
    assert sorted(x["change_pct"] for x in c["checks"]) == [50.56, 60.57, 73.44]
    assert all(x["verdict"] == "spread_unknown" for x in c["checks"])
    assert "caveat: transactions per client (-t) also differs" in c["text"]


def test_wal_on_a_second_disk_doubles_on_8_2_14_and_the_unstable_row_is_set_aside(claims):
    c = claims["wal-second-disk-doubles-again"]
    assert c["verdict"] == "holds"
    assert [(x["version"], x["ratio"]) for x in c["checks"]] == [("8.2.14", round(1667 / 853, 4))]
    (aside,) = c["set_aside"]
    assert (aside["version"], aside["ratio"]) == ("8.4.2", round(1562 / 981, 4))
    assert "unstable" in aside["set_aside"]
    assert "holds on 8.2.14: +95.4% on 8.2.14" in c["text"] and "set aside: +59.2%" in c["text"]


def test_memory_over_half_fails_on_8_2_14_only_and_says_why_8_4_2_is_set_aside(claims):
    """Issue 19: the 8.4.2 figure starts from the row the study calls unstable; the verdict
    must rest on 8.2.14 and say so."""
    c = claims["memory-over-half"]
    assert c["verdict"] == "not supported by its own figures"
    assert [(x["version"], x["change_pct"]) for x in c["checks"]] == [("8.2.14", 42.29)]
    assert [(x["version"], x["change_pct"]) for x in c["set_aside"]] == [("8.4.2", 49.3)]
    assert "not supported by its own figures on 8.2.14" in c["text"]
    assert "holds on 8.2.14 only" in c["notes"]


def test_checkpoint_segments_more_than_doubled_as_the_study_says(claims):
    c = claims["checkpoint-segments-double"]
    assert "more than doubled" in c["claim"]
    assert c["verdict"] == "holds"
    assert sorted(x["ratio"] for x in c["checks"]) == [round(853 / 409, 4), round(981 / 462, 4)]


def test_the_same_four_disks_split_for_the_wal_do_39_pct_worse(claims):
    c = claims["wal-split-same-disks-worse"]
    assert c["verdict"] == "holds"
    assert sorted(x["change_pct"] for x in c["checks"]) == [
        round((171.680858 / 285.127666 - 1) * 100, 2),
        round((131.309052 / 216.606298 - 1) * 100, 2),
    ]
    assert all(x["disks"] == [4, 4] for x in c["checks"])


def test_wal_on_its_own_disks_says_it_added_two(claims):
    c = claims["wal-own-disks-adds-spindles"]
    assert c["verdict"] == "holds"
    assert sorted(x["change_pct"] for x in c["checks"]) == [12.27, 19.74]
    assert all(x["disks"] == [4, 6] for x in c["checks"])
    assert c["text"].count("(4 → 6 disks)") == 2


def test_the_write_cache_gains_most_without_commit_delay(claims):
    most = claims["write-cache-makes-flushes-cheap"]
    less = claims["write-cache-gains-less-with-commit-delay"]
    assert most["verdict"] == less["verdict"] == "holds"
    assert [x["change_pct"] for x in most["checks"]] == [61.4]
    assert [x["change_pct"] for x in less["checks"]] == [8.58]


def test_8_4_up_to_15_pct_faster_holds_and_its_slower_steps_are_shown(claims):
    c = claims["v84-up-to-15-pct-faster"]
    assert c["verdict"] == "holds"
    changes = sorted(x["change_pct"] for x in c["checks"])
    assert changes == [-1.69, 0.61, 1.16, 12.96, 15.01]
    assert [x["change_pct"] for x in c["set_aside"]] == [-6.3]


def test_the_follow_up_ranks_centos_zfs_ufs(claims):
    c = claims["followup-centos-zfs-ufs"]
    assert c["verdict"] == "holds"
    assert len(c["checks"]) == 3 and all(x["agrees"] for x in c["checks"])
    assert (
        "CentOS 7.4 + ext4 8,988 > FreeBSD 11.1 + ZFS 8,332 > FreeBSD 11.1 + UFS 5,624" in c["text"]
    )


@pytest.mark.parametrize("claim_id", ["tpcb-os-ranking", "select-only-os-ranking"])
def test_the_five_os_rankings_cannot_be_checked_and_say_why(claims, claim_id):
    c = claims[claim_id]
    assert c["verdict"] == "cannot be checked"
    assert "charts" in c["reason"] and "no figures in the runs for" in c["reason"]
    assert "Ubuntu 16.04" in c["reason"] and "Debian 9.2" in c["reason"]


def test_the_talk_patch_figures_hold(claims):
    c = claims["ring-buffer-patch-faster-copy"]
    assert c["verdict"] == "holds"
    assert {x["metric"]: x["values"] for x in c["checks"]} == {
        "latency_avg_ms": [5015.483, 4316.597],
        "tps": [0.199382, 0.231663],
    }


def test_the_checkpoint_thread_figures_cannot_be_checked_and_say_why(claims):
    c = claims["spread-checkpoints-cut-response-times"]
    assert c["verdict"] == "cannot be checked"
    assert "DBT-2" in c["reason"] and "worst response time" in c["reason"]


def test_the_striping_posts_io2_and_gp3_figures_hold_and_its_summary_says_why_not(claims):
    """Issue 32: the 2025 post's io2 against sixteen gp3 stripes, as its table prints them; its
    summary's unstriped figures are in prose and charts only."""
    key = claims["io2-behind-16-gp3-stripes-on-key-reads"]
    batch = claims["io2-ahead-of-16-gp3-stripes-on-batch-reads"]
    assert key["verdict"] == batch["verdict"] == "holds"
    assert [(x["metric"], x["values"]) for x in key["checks"]] == [("tps", [28871, 24338])]
    assert [(x["metric"], x["values"]) for x in batch["checks"]] == [("tps", [510, 573])]
    summary = claims["striping-gp3-free-lunch"]
    assert summary["verdict"] == "cannot be checked" and summary["checks"] == []
    assert "no run holds an unstriped setup" in summary["reason"]


def test_the_pgbouncer_and_synchronous_commit_claims_cannot_be_checked_and_say_why(claims):
    pooled = claims["connection-per-transaction-200-fold"]
    assert pooled["verdict"] == "cannot be checked"
    assert "67.54 and 15,423 tps" in pooled["reason"]
    sync = claims["sync-commit-off-nearly-fsync-off"]
    assert sync["verdict"] == "cannot be checked"
    assert "128% against 150%" in sync["claim"] and "no tps figure" in sync["reason"]


def test_a_chart_only_claim_cannot_be_checked(claims):
    c = claims["freebsd-zfs-over-twice-centos"]
    assert c["verdict"] == "cannot be checked"
    assert c["checks"] == [] and "chart" in c["reason"]


@pytest.mark.parametrize(
    "claim_id",
    [
        "commit-delay-helps-without-cache",
        "commit-delay-hurts-with-cache",
        "more-memory-no-further-gain",
        "fsync-off-fifth-more",
    ],
)
def test_other_conclusions_hold(claims, claim_id):
    assert claims[claim_id]["verdict"] == "holds"
    assert claims[claim_id]["checks"]


def test_every_claim_names_a_source_the_runs_name_or_says_why_it_cannot_be_checked(
    claims, shipped_knowledge
):
    titles = {g["source"] for g in shipped_knowledge["groups"]}
    for c in claims.values():
        assert c["source"].split(" (")[0] in {t.split(" (")[0] for t in titles if t} or (
            c["verdict"] == "cannot be checked"
        ), c["id"]


# Planted groups: each new kind of claim checked where the answer is known, both ways.


def group(gid: str, center: float, **fields) -> dict:
    factors = {k.replace("__", "."): v for k, v in fields.items()}
    return {
        "id": gid,
        "machine": "box",
        "factors": factors,
        "incidental": {},
        "center": center,
        "latency_avg_ms": 8000 / center,
    }


def planted_groups(*groups: dict) -> dict:
    return {g["id"]: g for g in groups}


SPLIT = planted_groups(
    group("r10-10k", 200, level="raid10", disks=4, rpm=10000, wal="with-data"),
    group("r1-10k", 120, level="raid1", disks=2, rpm=10000, wal="own-array", wal_disks=2),
    group("r10-15k", 300, level="raid10", disks=4, rpm=15000, wal="with-data"),
    group("r1-15k", 183, level="raid1", disks=2, rpm=15000, wal="own-array", wal_disks=2),
)


def groups_claim(**expects) -> dict:
    return {
        "id": "planted",
        "kind": "groups",
        "claim": "Split is worse.",
        "concerns": {
            "machine": "box",
            "a": {"level": "raid10"},
            "b": {"level": "raid1"},
            "same": ["rpm"],
        },
        "expects": expects,
    }


def test_a_groups_claim_pairs_only_groups_that_share_the_same_fields():
    c = check_claim(groups_claim(direction="lower", about_ratio=0.6, tolerance_pct=3), SPLIT, [])
    assert c["verdict"] == "holds"
    assert sorted(tuple(x["groups"]) for x in c["checks"]) == [
        ("r10-10k", "r1-10k"),
        ("r10-15k", "r1-15k"),
    ]
    assert sorted(x["ratio"] for x in c["checks"]) == [0.6, 0.61]


def test_a_groups_claim_fails_when_the_size_is_wrong():
    c = check_claim(groups_claim(direction="lower", about_ratio=0.5, tolerance_pct=3), SPLIT, [])
    assert c["verdict"] == "not supported by its own figures"
    c = check_claim(groups_claim(direction="higher"), SPLIT, [])
    assert c["verdict"] == "not supported by its own figures"


def test_a_groups_claim_reports_disks_added_by_a_wal_array():
    disks = planted_groups(
        group("with", 100, storage__data__array__disks=4, storage__wal__placement="with-data"),
        group(
            "own",
            112,
            storage__data__array__disks=4,
            storage__wal__placement="own-array",
            storage__wal__array__disks=2,
        ),
    )
    claim = {
        "id": "x",
        "kind": "groups",
        "claim": "WAL apart helps.",
        "concerns": {
            "a": {"storage.wal.placement": "with-data"},
            "b": {"storage.wal.placement": "own-array"},
        },
        "expects": {"direction": "higher"},
    }
    (check,) = check_claim(claim, disks, [])["checks"]
    assert check["disks"] == [4, 6]


def test_up_to_holds_only_when_the_largest_change_is_about_the_bound():
    steps = planted_groups(
        group("a1", 100, v="old", step=1),
        group("b1", 115, v="new", step=1),
        group("a2", 100, v="old", step=2),
        group("b2", 95, v="new", step=2),
    )
    claim = {
        "id": "x",
        "kind": "groups",
        "claim": "New is up to 15% faster.",
        "concerns": {"a": {"v": "old"}, "b": {"v": "new"}, "same": ["step"]},
        "expects": {"direction": "higher", "up_to_pct": 15},
    }
    assert check_claim(claim, steps, [])["verdict"] == "holds"
    claim["expects"]["up_to_pct"] = 10  # 15% is above "up to 10%"
    assert check_claim(claim, steps, [])["verdict"] == "holds in part"
    claim["expects"]["up_to_pct"] = 30  # nothing comes near "up to 30%"
    assert check_claim(claim, steps, [])["verdict"] == "not supported by its own figures"


def test_a_set_aside_group_is_shown_but_does_not_decide():
    claim = groups_claim(direction="lower", about_ratio=0.6, tolerance_pct=3)
    claim["set_aside"] = [{"where": {"rpm": 15000}, "why": "the source distrusts it"}]
    c = check_claim(claim, SPLIT, [])
    assert [x["groups"] for x in c["checks"]] == [["r10-10k", "r1-10k"]]
    assert [x["set_aside"] for x in c["set_aside"]] == ["the source distrusts it"]
    claim["set_aside"] = [{"where": {"machine_room": None}, "why": "every group"}]
    assert check_claim(claim, SPLIT, [])["verdict"] == "cannot be checked"


OSES = planted_groups(
    group("centos", 9000, os="CentOS", fs="ext4"),
    group("zfs", 8300, os="FreeBSD", fs="zfs"),
    group("ufs", 5600, os="FreeBSD", fs="ufs"),
    group("debian", 7000, os="Debian", fs="ext4"),
)


def ranking(*order) -> dict:
    return {
        "id": "x",
        "kind": "ranking",
        "claim": "A ranking.",
        "concerns": {"machine": "box"},
        "expects": {"order": list(order)},
    }


def test_a_ranking_holds_in_its_order_and_fails_out_of_it():
    centos, zfs, ufs = {"os": "CentOS"}, {"fs": "zfs"}, {"fs": "ufs"}
    c = check_claim(ranking(centos, zfs, ufs), OSES, [])
    assert c["verdict"] == "holds" and len(c["checks"]) == 3
    c = check_claim(ranking(zfs, centos, ufs), OSES, [])
    assert c["verdict"] == "holds in part"
    assert "out of order: os CentOS above fs zfs" in c["text"]
    assert check_claim(ranking(ufs, zfs), OSES, [])["verdict"] == (
        "not supported by its own figures"
    )


def test_a_tier_claims_no_order_inside_it():
    tier = [{"os": "Debian"}, {"fs": "zfs"}]
    c = check_claim(ranking({"os": "CentOS"}, tier, {"fs": "ufs"}), OSES, [])
    assert c["verdict"] == "holds" and len(c["checks"]) == 5


def test_a_ranking_with_a_place_without_figures_cannot_be_checked_and_names_it():
    claim = ranking({"os": "CentOS", "label": "CentOS"}, {"os": "Ubuntu", "label": "Ubuntu"})
    claim["reason"] = "charts only"
    c = check_claim(claim, OSES, [])
    assert c["verdict"] == "cannot be checked"
    assert c["reason"] == "charts only (no figures in the runs for Ubuntu)"
    c = check_claim(ranking({"os": "FreeBSD"}, {"os": "CentOS"}), OSES, [])
    assert c["reason"] == "more than one group for os FreeBSD (2 groups)"


def figures_claim(*figures) -> dict:
    return {
        "id": "x",
        "kind": "figures",
        "claim": "Figures.",
        "concerns": {"machine": "box", "a": {"fs": "ufs"}, "b": {"fs": "zfs"}},
        "expects": {"tolerance_pct": 2, "figures": list(figures)},
    }


def test_figures_hold_within_a_range_or_a_tolerance_and_fail_outside():
    latency = {"metric": "latency_avg_ms", "a": [1.4, 1.5], "b": 8000 / 8300}
    c = check_claim(figures_claim({"metric": "tps", "a": 5600, "b": 8200}, latency), OSES, [])
    assert c["verdict"] == "holds"
    c = check_claim(figures_claim({"metric": "tps", "a": 5600, "b": 8000}, latency), OSES, [])
    assert c["verdict"] == "holds in part"
    c = check_claim(figures_claim({"metric": "tps", "a": [6000, 7000], "b": 8300}), OSES, [])
    assert c["verdict"] == "not supported by its own figures"


def test_figures_of_a_metric_the_groups_do_not_record_cannot_be_checked():
    c = check_claim(figures_claim({"metric": "latency_max_ms", "a": 50000, "b": 20000}), OSES, [])
    assert c["verdict"] == "cannot be checked"
    assert c["reason"] == "the runs record no worst latency (ms)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "kind: ranking\n  concerns: {}\n  expects:\n    order: [{a: 1}]\n",
            "claims.0.expects.order: needs at least 2 item(s)",
        ),
        (
            "kind: figures\n  concerns: {a: {x: 1}, b: {x: 2}}\n  expects:\n"
            "    figures: [{metric: tps, a: [3, 1], b: 2}]\n",
            "claims.0.expects.figures.0.a: expected a number or a [low, high] range",
        ),
        (
            "kind: figures\n  concerns: {a: {x: 1}, b: {x: 2}}\n  expects:\n"
            "    figures: [{metric: p42, a: 1, b: 2}]\n",
            "claims.0.expects.figures.0.metric: 'p42' is not one of",
        ),
        (
            "kind: groups\n  concerns: {a: {x: 1}}\n  expects: {direction: higher}\n",
            "claims.0.concerns.b: missing (required)",
        ),
        (
            "kind: sideways\n  concerns: null\n  reason: r\n",
            "claims.0.kind: 'sideways' is not one of",
        ),
    ],
)
def test_a_bad_new_kind_of_claim_is_one_line(tmp_path: Path, text: str, message: str):
    root = write_planted(tmp_path)
    (root / "data" / "claims.yaml").write_text(
        "schema_version: 1\nclaims:\n- id: x\n  claim: C.\n  " + text, encoding="utf-8"
    )
    done = run_kb("compare", "--root", str(root))
    assert done.returncode == 1
    assert done.stderr.startswith("error: data/claims.yaml:")
    assert message in done.stderr and done.stderr.count("\n") == 1


def test_a_claim_no_comparison_matches_cannot_be_checked(tmp_path: Path):
    root = write_planted(tmp_path)
    (root / "data" / "claims.yaml").write_text(
        "schema_version: 1\nclaims:\n- id: x\n  claim: Something.\n  concerns:\n"
        "    machine: nowhere\n    factor: benchmark.clients\n    a: 1\n    b: 2\n"
        "  expects:\n    direction: higher\n",
        encoding="utf-8",
    )
    (c,) = build_knowledge(root)["claims"]
    assert c["verdict"] == "cannot be checked"
    assert c["reason"] == "no computed comparison matches it"


def test_a_bad_claims_file_is_one_line(tmp_path: Path):
    root = write_planted(tmp_path)
    shutil.copy(shipped_root() / "data" / "claims.yaml", root / "data" / "claims.yaml")
    path = root / "data" / "claims.yaml"
    path.write_text(path.read_text().replace("direction: lower", "direction: down"))
    done = run_kb("compare", "--root", str(root))
    assert done.returncode == 1
    assert done.stderr.startswith("error: data/claims.yaml:")
    assert "expects.direction: 'down' is not one of: higher, lower, unchanged" in done.stderr
    assert done.stderr.count("\n") == 1


def test_claims_name_their_sources_only_as_known() -> None:
    """Issue 11: the 2006 page is not known to be a users' group's; no claim may say so."""
    text = (shipped_root() / "data" / "claims.yaml").read_text(encoding="utf-8")
    assert "users' group" not in text


def test_findings_write_large_numbers_plainly_and_say_what_they_hold_for() -> None:
    """Regression: a finding read "9520 → 1.398e+04" and did not say which workload it was."""
    from pgbench_kb.analyze.findings import comparison_finding
    from pgbench_kb.numbers import figure

    assert figure(13976.6) == "13,977"
    assert figure(430.605) == "430.6"
    side = {"center": 9519.85, "statistic": "median", "n": 3, "spread": None, "value": 4}
    finding = comparison_finding(
        {
            "id": "clients-x",
            "machine": "box",
            "kind": "pair",
            "factor": "benchmark.clients",
            "label": "clients",
            "change_pct": 46.8,
            "verdict": "spread_unknown",
            "differs_also": [],
            "held_equal": {"benchmark.workload.name": "tpcb-like", "benchmark.scale": 50},
            "a": {**side, "group": "g1"},
            "b": {**side, "center": 13976.6, "value": 8, "group": "g2"},
        }
    )
    assert finding["text"].startswith("On box (tpcb-like, scale 50), clients 4 → 8:")
    assert "9,520 → 13,977" in finding["text"] and "e+" not in finding["text"]


def test_a_narrowed_compare_keeps_the_claims_of_groups_it_compares():
    """A groups claim has no comparison of its own: `--factor` keeps it when the groups it
    rests on are compared there, and leaves out claims about other factors."""
    done = run_kb(
        "compare", "--root", str(shipped_root()), "--json", "--factor", "storage.wal.placement"
    )
    assert done.returncode == 0, done.stderr
    kept = {c["id"] for c in json.loads(done.stdout)["claims"]}
    assert {"wal-split-same-disks-worse", "wal-own-disks-adds-spindles"} <= kept
    assert "write-cache-makes-flushes-cheap" not in kept and "raid10-beats-raid5" not in kept
