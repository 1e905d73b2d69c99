"""Plausibility limits on figures: values a schema accepts (any whole number is a scale) but no
pgbench run could have given. Each is named by its field; an error when no run could give it,
a warning when a run could but a reviewer should look (issue #22: a ``benchmark.scale`` of
10³⁹ was published).

=================================  ===========  =============================================
field                              warning      error
=================================  ===========  =============================================
``benchmark.scale``                > 100,000    > 1,000,000 (about 15 TB of tables)
``benchmark.clients``              > 10,000     > 262,143 (PostgreSQL's most connections)
``benchmark.threads``              —            > 262,143
``benchmark.duration_s``           > 7 days     > 366 days
``results.tps`` and its kin        > 5,000,000  > 50,000,000
``results.transactions_*``         —            > 10¹⁵
``results.latency_*_ms``           —            > one day, or below zero
=================================  ===========  =============================================

The agreement of tps with the transactions and the duration is ``results.py``'s rule.
"""

from __future__ import annotations

from typing import Any

from pgbench_kb.runs.check.report import Issue
from pgbench_kb.runs.check.values import dotted_get, show_num

#: PostgreSQL's MAX_BACKENDS (2^18 − 1): no server accepts more connections.
MAX_CONNECTIONS = 262_143
DAY_S = 86_400
LIMITS: tuple[tuple[str, float | None, float, str], ...] = (
    ("benchmark.scale", 100_000, 1_000_000, "a scale of 1,000,000 is about 15 TB of tables"),
    (
        "benchmark.clients",
        10_000,
        MAX_CONNECTIONS,
        "PostgreSQL accepts at most 262,143 connections",
    ),
    ("benchmark.threads", None, MAX_CONNECTIONS, "pgbench needs threads ≤ clients"),
    ("benchmark.duration_s", 7 * DAY_S, 366 * DAY_S, "a duration is in seconds"),
    ("benchmark.rate_limit_tps", None, 50_000_000, "a rate is in transactions per second"),
    ("results.tps", 5_000_000, 50_000_000, "tps is transactions per second"),
    ("results.tps_including_connections", 5_000_000, 50_000_000, "in transactions per second"),
    ("results.tps_min", 5_000_000, 50_000_000, "in transactions per second"),
    ("results.tps_max", 5_000_000, 50_000_000, "in transactions per second"),
    ("results.transactions_processed", None, 1e15, "a count of transactions"),
    ("results.transactions_expected", None, 1e15, "a count of transactions"),
    ("results.latency_avg_ms", None, DAY_S * 1000, "a latency is in milliseconds"),
    ("results.latency_stddev_ms", None, DAY_S * 1000, "a latency is in milliseconds"),
)


def rules_plausible(run: dict[str, Any]) -> list[Issue]:
    """An issue for each figure beyond its limit in ``LIMITS`` (or a latency below zero)."""
    issues = []
    for field, warn, limit, why in LIMITS:
        value = dotted_get(run, field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if value > limit:
            issues.append(
                Issue(field, f"{show_num(value)} is beyond the limit of {limit:,.0f} ({why})")
            )
        elif warn is not None and value > warn:
            issues.append(
                Issue(
                    field,
                    f"{show_num(value)} is above {warn:,.0f}: unusually large, check it",
                    "warning",
                )
            )
        elif field.startswith("results.latency") and value < 0:
            issues.append(Issue(field, f"{show_num(value)}: a latency is not negative"))
    return issues
