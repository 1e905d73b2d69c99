"""A rate given as a share of the maximum (profile ``rates: ["70%"]``): the share is the
configuration, so two sessions that measured different maxima still run the same
configuration, and two shares are two configurations."""

from __future__ import annotations

import copy
from typing import Any

from pgbench_kb.analyze.load import RATE_SHARE, record_of


def run(rate_tps: float, share: float | None) -> dict[str, Any]:
    design: dict[str, Any] = {"seed": 1, "position": 1, "session": 1, "sessions": 1}
    if share is not None:
        design["rate"] = {"percent_of_max": share, "max_tps": rate_tps * 100 / share}
    return {
        "id": f"r-{rate_tps}-{share}",
        "machine": "m",
        "benchmark": {"scale": 8, "clients": 4, "rate_limit_tps": rate_tps},
        "repeat": {"group": "g", "index": 1, "of": 1, "design": design},
        "results": {"tps": rate_tps},
    }


def test_the_share_is_the_factor_not_the_tps_it_came_to() -> None:
    first, second = record_of(run(700.0, 70.0), "a.yaml"), record_of(run(650.0, 70.0), "b.yaml")
    assert first.factors == second.factors
    assert first.factors[RATE_SHARE] == 70.0
    assert "benchmark.rate_limit_tps" not in first.factors


def test_two_shares_are_two_configurations() -> None:
    assert (
        record_of(run(700.0, 70.0), "a.yaml").factors
        != record_of(run(500.0, 50.0), "b.yaml").factors
    )


def test_a_rate_in_tps_stays_the_factor() -> None:
    fixed = record_of(run(300.0, None), "a.yaml")
    assert fixed.factors["benchmark.rate_limit_tps"] == 300.0
    assert RATE_SHARE not in fixed.factors
    other = copy.deepcopy(run(300.0, None))
    other["benchmark"]["rate_limit_tps"] = 400.0
    assert record_of(other, "b.yaml").factors != fixed.factors
