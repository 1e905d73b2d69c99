"""Sample rules for stored percentiles (#19): a p99.9 is stored only from 10,000 or more
logged latencies; below that it is one of the slowest few transactions, not a percentile."""

from __future__ import annotations

import pytest

from pgbench_kb.runs.build import MIN_LATENCIES_P999, percentiles_from_log

LOG = {"p50": 1.0, "p90": 2.0, "p95": 3.0, "p99": 5.0, "p999": 9.0, "min": 0.1, "max": 12.0}


@pytest.mark.parametrize(
    ("logged", "p999"), [(306, None), (MIN_LATENCIES_P999 - 1, None), (MIN_LATENCIES_P999, 9.0)]
)
def test_p999_is_stored_only_from_enough_latencies(logged: int, p999: float | None) -> None:
    values, basis = percentiles_from_log(
        {"latency_ms": LOG, "transactions": logged, "estimated_sampling_rate": 0.05}
    )
    assert values["p999"] == p999
    assert values["p99"] == 5.0 and basis == {"latencies": logged, "sampling_rate": 0.05}
