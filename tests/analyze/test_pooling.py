"""Pooled estimates over bench sessions and the family-wise adjustment (#31 items 1 and 2)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from planted import records

from pgbench_kb.analyze import knowledge_from_runs
from pgbench_kb.analyze.multiplicity import holm
from pgbench_kb.analyze.pooling import dl_hartung_knapp, known_tau2


def test_dersimonian_laird_with_hartung_knapp_matches_the_worked_example() -> None:
    """Worked by hand from the formulas (DerSimonian & Laird 1986; Hartung & Knapp 2001; as
    laid out by IntHout, Ioannidis & Borm 2014, BMC Med Res Methodol 14:25), three studies
    with log ratios y = (0.0, 0.2, 0.6) and variances v = (0.01, 0.04, 0.04):

    * weights w = 1/v = (100, 25, 25), Σw = 150; fixed mean ȳ = (0 + 5 + 15)/150 = 0.133333;
    * Q = 100·0.133333² + 25·0.066667² + 25·0.466667² = 1.777778 + 0.111111 + 5.444444
      = 7.333333; C = Σw − Σw²/Σw = 150 − 11250/150 = 75;
    * τ² = (Q − (k − 1))/C = 5.333333/75 = 0.0711111;
    * w* = 1/(v + τ²) = (12.328767, 9, 9), Σw* = 30.328767;
      μ = (0 + 1.8 + 5.4)/30.328767 = 0.237398;
    * HK: q = Σw*(y − μ)²/(k − 1) = (0.694817 + 0.012586 + 1.183329)/2 = 0.945366;
      Var(μ) = q/Σw* = 0.031171, se = 0.176552;
    * t₀.₉₇₅,₂ = 4.302653: interval 0.237398 ± 0.759642 = (−0.522244, 0.997040).
    """
    found = dl_hartung_knapp([0.0, 0.2, 0.6], [0.01, 0.04, 0.04])
    assert found.tau2 == pytest.approx(0.0711111, abs=1e-6)
    assert found.estimate == pytest.approx(0.237398, abs=1e-6)
    assert found.se == pytest.approx(0.176552, abs=1e-6)
    assert found.df == 2
    assert (found.low, found.high) == pytest.approx((-0.522244, 0.997040), abs=1e-5)


def test_no_heterogeneity_left_gives_tau2_zero_and_the_fixed_mean() -> None:
    """Equal estimates: Q = 0 < k − 1, so τ² = 0 and μ is the inverse-variance mean; HK's q is
    0 too, so the interval collapses onto the estimate."""
    found = dl_hartung_knapp([0.1, 0.1, 0.1], [0.01, 0.02, 0.04])
    assert found.tau2 == 0.0
    assert found.estimate == pytest.approx(0.1)
    assert found.se == pytest.approx(0.0, abs=1e-12)


def test_two_sessions_take_tau2_from_the_machine() -> None:
    """y = (0.10, 0.20), v = (0.0004, 0.0009), τ² = 0.0002 given with 16 df:
    w* = (1/0.0006, 1/0.0011) = (1666.667, 909.091), Σw* = 2575.758;
    μ = (166.667 + 181.818)/2575.758 = 0.135294; se = √(1/2575.758) = 0.019704.
    With t at τ²'s 16 df: t₀.₉₇₅,₁₆ = 2.119905, interval (0.093524, 0.177064).
    With the sessions' own df, Welch-Satterthwaite on Var(μ) = Σaᵢ²(vᵢ + τ²), aᵢ = w*ᵢ/Σw*ᵢ
    = (0.647059, 0.352941): terms a₁²v₁ = 0.00016747, a₂²v₂ = 0.00011211,
    (a₁² + a₂²)τ² = 0.00010865 (16 df), sum 0.00038824 = 1/Σw*.
    Sessions of 2 and 3 df: df = 0.00038824² / (0.00016747²/2 + 0.00011211²/3 +
    0.00010865²/16) = 1.50726e-7 / 1.89514e-8 = 7.953; t₀.₉₇₅,₇.₉₅ = 2.3085, interval
    0.135294 ± 0.045487 = (0.089808, 0.180781).
    Sessions of 4 and 8 df: Satterthwaite gives 16.171, capped at τ²'s 16 (a stand-in is
    known no better than it was measured): the first interval again."""
    fixed = known_tau2([0.10, 0.20], [0.0004, 0.0009], 0.0002, 16)
    assert fixed.estimate == pytest.approx(0.135294, abs=1e-6)
    assert fixed.se == pytest.approx(0.019704, abs=1e-6)
    assert (fixed.low, fixed.high) == pytest.approx((0.093524, 0.177064), abs=1e-5)
    few = known_tau2([0.10, 0.20], [0.0004, 0.0009], 0.0002, 16, [2, 3])
    assert few.df == pytest.approx(7.953, abs=1e-3)
    assert (few.low, few.high) == pytest.approx((0.089808, 0.180781), abs=1e-5)
    capped = known_tau2([0.10, 0.20], [0.0004, 0.0009], 0.0002, 16, [4, 8])
    assert capped.df == 16
    assert (capped.low, capped.high) == pytest.approx((fixed.low, fixed.high), abs=1e-9)
    assert "between-session variance (16 df" in capped.method


def test_holm_steps_down_and_stops_at_the_first_it_keeps() -> None:
    """Holm (1979) at α = 0.05 on p = (0.01, 0.04, 0.03, 0.005): sorted 0.005 ≤ 0.05/4 and
    0.01 ≤ 0.05/3 are rejected, 0.03 > 0.05/2 stops (0.04 is kept though ≤ 0.05/1). Adjusted:
    4·0.005 = 0.02, 3·0.01 = 0.03, max(0.03, 2·0.03) = 0.06, max(0.06, 0.04) = 0.06."""
    assert holm([0.01, 0.04, 0.03, 0.005]) == [
        (True, 0.03),
        (False, 0.06),
        (False, 0.06),
        (True, 0.02),
    ]


SESSION_A = {"repeat.session": "20261201T100000Z-aaaa01"}
SESSION_B = {"repeat.session": "20261202T100000Z-bbbb02"}
BASE = {"benchmark.workload.name": "tpcb-like", "benchmark.scale": 100, "benchmark.clients": 8}


def _group(name: str, center: float, session: dict[str, str], **changes: Any) -> list:
    values = [center * s for s in (1.0, 1.01, 0.99, 1.005, 0.995)]
    return records(name, values, {**BASE, **changes}, incidental=session)


def test_a_pair_compared_in_two_sessions_is_pooled_with_the_machines_tau2() -> None:
    """Two sessions each compare synchronous_commit on → off; a third configuration measured
    in both sessions gives the machine's between-session variance. One pooled entry, both
    comparisons cited, the contract's fields, and its family; the finding is told once."""
    off = {"postgres.settings.synchronous_commit": "off"}
    runs = (
        _group("a1", 1000, SESSION_A)
        + _group("b1", 1300, SESSION_A, **off)
        + _group("a2", 1050, SESSION_B)
        + _group("b2", 1340, SESSION_B, **off)
    )
    known = knowledge_from_runs(runs)
    (pooled,) = known["pooled"]
    assert set(pooled) >= {
        "machine",
        "factor",
        "metric",
        "a",
        "b",
        "sessions",
        "comparisons",
        "change_pct",
        "ci95_pct",
        "method",
        "verdict",
    }
    assert pooled["sessions"] == 2 and len(pooled["comparisons"]) == 2
    assert pooled["verdict"] == "higher" and 27 < pooled["change_pct"] < 30
    low, high = pooled["ci95_pct"]
    assert low < pooled["change_pct"] < high
    assert "machine's between-session variance" in pooled["method"]
    assert pooled["family"]["significant"] is True
    inside = [c for c in known["comparisons"] if c["id"] in pooled["comparisons"]]
    assert all(c["family"]["pooled"] == pooled["id"] for c in inside)
    told = [f for f in known["findings"] if f.get("pooled") == pooled["id"]]
    assert len(told) == 1 and "pooled over 2 bench sessions" in told[0]["text"]
    assert sorted(told[0]["comparisons"]) == sorted(pooled["comparisons"])
    # The estimate lies between the two sessions' log ratios.
    logs = sorted(c["test"]["log_ratio"] for c in inside)
    assert logs[0] <= pooled["log_ratio"] <= logs[1]
    assert math.isclose(
        pooled["change_pct"], (math.exp(pooled["log_ratio"]) - 1) * 100, abs_tol=0.01
    )


def test_a_pair_whose_sides_swap_between_sessions_still_pools() -> None:
    """Bug: sides with no natural order are oriented by their centres, so a small difference
    put the traced arm first in one session and the plain one first in the other, and the
    pair was never pooled (the flush-tracer sessions of November 28)."""
    traced = {"postgres.settings.wal_sync_method": "open_datasync"}
    runs = (
        _group("a1", 1000, SESSION_A)
        + _group("b1", 1030, SESSION_A, **traced)
        + _group("a2", 1040, SESSION_B)
        + _group("b2", 1020, SESSION_B, **traced)
    )
    known = knowledge_from_runs(runs)
    (pooled,) = [p for p in known["pooled"] if p["metric"] == "tps"]
    assert pooled["sessions"] == 2 and len(pooled["comparisons"]) == 2
    inside = [c for c in known["comparisons"] if c["id"] in pooled["comparisons"]]
    assert {c["a"]["value"] for c in inside} == {None, "open_datasync"}, "sides not swapped"
    # Read one way round: one session +3%, the other -1.9%; the estimate lies between.
    first_a = pooled["a"]
    oriented = sorted(
        c["test"]["log_ratio"] * (1 if c["a"]["value"] == first_a else -1) for c in inside
    )
    assert oriented[0] < 0 < oriented[1]
    assert oriented[0] <= pooled["log_ratio"] <= oriented[1]


@pytest.fixture(scope="module")
def shipped(shipped_knowledge: dict[str, Any]) -> dict[str, Any]:
    return shipped_knowledge


def test_no_finding_rests_on_a_test_that_does_not_survive(shipped: dict[str, Any]) -> None:
    """#31: findings rest only on comparisons (or pooled estimates) significant after the
    family-wise adjustment; a spread-unknown finding says it gives no verdict."""
    by_id = {c["id"]: c for c in shipped["comparisons"]}
    for f in shipped["findings"]:
        if f["kind"] == "interaction":
            continue
        for cid in f["comparisons"]:
            c = by_id[cid]
            if c["verdict"] == "spread_unknown":
                assert "no verdict is given" in f["text"]
                continue
            if f["kind"] == "latency" and c["metric"] == "tps":
                continue  # the tps comparison(s) the latency sentence belongs to
            assert c["family"]["significant"], (cid, f["text"][:120])


def test_no_key_finding_has_an_unnamed_inert_commit_delay(shipped: dict[str, Any]) -> None:
    """#31 item 4: the key finding "commit_siblings 2 → 4: tps +134% higher" measured only a
    delay switched off at 4 clients; no finding tells such a comparison as an effect."""
    by_id = {c["id"]: c for c in shipped["comparisons"]}
    for f in shipped["findings"]:
        for cid in f["comparisons"]:
            c = by_id[cid]
            fields = c["factor"].split("+")
            inert = [x for x in c["confounds"] if x["kind"] == "inert_commit_delay"]
            assert not (inert and "postgres.settings.commit_siblings" in fields), f["text"][:120]
    siblings = [
        c
        for c in shipped["comparisons"]
        if c["factor"] == "postgres.settings.commit_siblings" and c["metric"] == "tps"
    ]
    assert siblings and all(
        any(x["text"].startswith("commit_delay inert in B") for x in c["confounds"])
        for c in siblings
        if c["b"]["value"] == 4
    )


def test_every_decided_comparison_has_its_family(shipped: dict[str, Any]) -> None:
    for c in shipped["comparisons"]:
        if c["verdict"] in ("higher", "lower", "within_noise"):
            family = c["family"]
            assert family["method"] == "holm" and family["size"] >= 1
            assert (
                not family["significant"] or c["verdict"] != "within_noise" or family.get("pooled")
            )
        else:
            assert c["family"] is None
    assert shipped["pooled"], "the shipped data has pairs compared in two sessions"
