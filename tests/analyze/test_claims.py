"""The sources' claims (data/claims.yaml) checked against the comparisons computed from the
historical runs: what holds, what holds on one version only, what its own figures do not
support, and what cannot be checked; and a malformed claims file is one clear line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from planted import write_planted

from kbtest import REPO, run_kb
from pgbench_kb.analyze import build_knowledge


@pytest.fixture(scope="module")
def claims() -> dict[str, dict]:
    return {c["id"]: c for c in build_knowledge(REPO)["claims"]}


def test_raid10_over_raid5_holds_on_all_three_pairs(claims):
    c = claims["raid10-beats-raid5"]
    assert c["verdict"] == "holds"
    assert sorted(x["change_pct"] for x in c["checks"]) == [50.56, 60.57, 73.44]
    assert all(x["verdict"] == "spread_unknown" for x in c["checks"])
    assert "caveat: transactions per client (-t) also differs" in c["text"]


def test_wal_on_a_second_disk_doubles_on_8_2_14_only(claims):
    c = claims["wal-second-disk-doubles-again"]
    assert c["verdict"] == "holds on one version only"
    assert c["holds_on"] == ["8.2.14"]
    ratios = {x["version"]: x["ratio"] for x in c["checks"]}
    assert ratios == {"8.2.14": round(1667 / 853, 4), "8.4.2": round(1562 / 981, 4)}
    assert "holds on 8.2.14 only" in c["text"]


def test_memory_over_half_is_not_supported_by_its_own_figures(claims):
    c = claims["memory-over-half"]
    assert c["verdict"] == "not supported by its own figures"
    assert sorted(x["change_pct"] for x in c["checks"]) == [42.29, 49.3]


def test_a_chart_only_claim_cannot_be_checked(claims):
    c = claims["freebsd-zfs-over-twice-centos"]
    assert c["verdict"] == "cannot be checked"
    assert c["checks"] == [] and "chart" in c["reason"]


@pytest.mark.parametrize(
    "claim_id",
    [
        "commit-delay-helps-without-cache",
        "commit-delay-hurts-with-cache",
        "checkpoint-segments-double",
        "more-memory-no-further-gain",
        "fsync-off-fifth-more",
    ],
)
def test_other_conclusions_hold(claims, claim_id):
    assert claims[claim_id]["verdict"] == "holds"
    assert claims[claim_id]["checks"]


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
    shutil.copy(REPO / "data" / "claims.yaml", root / "data" / "claims.yaml")
    path = root / "data" / "claims.yaml"
    path.write_text(path.read_text().replace("direction: lower", "direction: down"))
    done = run_kb("compare", "--root", str(root))
    assert done.returncode == 1
    assert done.stderr.startswith("error: data/claims.yaml:")
    assert "expects.direction: direction 'down' is not one of higher, lower, unchanged" in (
        done.stderr
    )
    assert done.stderr.count("\n") == 1


def test_claims_name_their_sources_only_as_known() -> None:
    """Issue 11: the 2006 page is not known to be a users' group's; no claim may say so."""
    from kbtest import REPO

    text = (REPO / "data" / "claims.yaml").read_text(encoding="utf-8")
    assert "users' group" not in text


def test_findings_write_large_numbers_plainly_and_say_what_they_hold_for() -> None:
    """Regression: a finding read "9520 → 1.398e+04" and did not say which workload it was."""
    from pgbench_kb.analyze.findings import comparison_finding, readable_number

    assert readable_number(13976.6) == "13,977"
    assert readable_number(430.605) == "430.6"
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
