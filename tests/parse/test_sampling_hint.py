"""The sampling rate guessed from a thinned per-transaction log (regression: a run at 80,000
tps sampled at 0.00031 for its 1,000 latencies was estimated as 0.0 and refused)."""

from __future__ import annotations

import pytest

from pgbench_kb.parse.logs import _sampling_hint


def rows(step: int, clients: int = 2, count: int = 400) -> list[list[str]]:
    return [
        [str(c), str(1 + i * step), "0", "100", "0", "0"]
        for c in range(clients)
        for i in range(count)
    ]


@pytest.mark.parametrize(
    ("step", "rate"), [(20, 0.05), (1000, 0.001), (3226, 0.00031), (200_000, 5e-06)]
)
def test_a_thinned_log_gives_its_rate_never_zero(step: int, rate: float) -> None:
    sampled, estimated = _sampling_hint(rows(step))
    assert sampled is True
    assert estimated == pytest.approx(rate, rel=0.02)
    assert estimated > 0


def test_a_full_log_is_not_sampled() -> None:
    assert _sampling_hint(rows(1)) == (False, None)
