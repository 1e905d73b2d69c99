"""Whether a run's latencies can be trusted (docs/parser.md, "Zero latencies").

pgbench reads its clock lazily, once per pass over a client (``advanceConnectionState``);
when a short transaction's reply is already there on the pass that sent it, its start and
its end share one reading and its latency is logged as 0 µs. The same latency feeds the
progress lines and the summary's average and stddev under ``-P``, ``-R`` or ``-L``
(``processXactStats`` → ``accumStats``), so a run with many such zeros has latency figures
that are not measurements. Two rules, one for runs whose transaction logs can be read and
one for runs without:

* **unreliable**: more than ``ZERO_SHARE_LIMIT`` (1%) of the logged transactions read 0 µs;
* **unverified**: no transaction log, latencies measured per transaction (pgbench printed a
  stddev, or ran with ``-P``, ``-R`` or ``-L``) and an average under ``SHORT_AVG_MS``
  (0.1 ms): short enough for the lazy clock to matter, with nothing to check it against.
  Without ``-P``/``-R``/``-L`` pgbench computes its average from the run's time (clients ×
  duration ÷ transactions), which the lazy clock does not touch.

Run files stay as written: ``kb check`` and ``kb import`` warn, the analysis
(``analyze/latency_trust.py``) leaves such runs' latencies out of every verdict and finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pgbench_kb import numbers as fmt

#: Above this share of logged transactions at 0 µs, a run's latencies are unreliable.
ZERO_SHARE_LIMIT = 0.01
#: Without a log, a run whose measured average latency is below this (ms) is unverified.
SHORT_AVG_MS = 0.1
CAUSE = "pgbench read its clock once for start and end"
#: Where the check's warning is placed in a run file.
FIELD = "results.latency_percentiles_ms"


@dataclass(frozen=True)
class LatencyTrust:
    """Why a run's latencies get no verdict: ``status`` ``unreliable`` (from its logs) or
    ``unverified`` (no log to check); ``zero`` and ``logged`` the counts (None without a
    log); ``reason`` the sentence pages show."""

    status: str
    zero: int | None
    logged: int | None
    reason: str

    @property
    def share_pct(self) -> float | None:
        if not self.logged or self.zero is None:
            return None
        return round(100 * self.zero / self.logged, 2)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "zero_latencies": self.zero,
            "logged": self.logged,
            "share_pct": self.share_pct,
            "reason": self.reason,
        }


def from_counts(zero: Any, logged: Any) -> LatencyTrust | None:
    """The verdict on a run's logged latencies: ``zero`` of ``logged`` read 0 µs."""
    if not _count(zero) or not _count(logged) or logged <= 0:
        return None
    if zero / logged <= ZERO_SHARE_LIMIT:
        return None
    share = fmt.percent(100 * zero / logged) or "?"
    return LatencyTrust(
        "unreliable",
        zero,
        logged,
        f"latencies unreliable: {share} of logged transactions ({fmt.figure(zero)} of "
        f"{fmt.figure(logged)}) read 0 µs: {CAUSE}",
    )


def from_log(log: Mapping[str, Any]) -> LatencyTrust | None:
    """From a parsed transaction log (``parse`` result: ``zero_latencies``, ``transactions``)."""
    return from_counts(log.get("zero_latencies"), log.get("transactions"))


def has_transaction_log(run: Mapping[str, Any]) -> bool:
    return any(
        isinstance(r, Mapping) and r.get("kind") == "transaction_log" for r in run.get("raw") or []
    )


def measured_per_transaction(run: Mapping[str, Any]) -> bool:
    """pgbench's latency figures are the mean of per-transaction readings: it printed a stddev,
    or ran with progress reports, a rate limit or a latency limit (``printResults``)."""
    results = run.get("results") or {}
    bench = run.get("benchmark") or {}
    return any(
        v is not None
        for v in (
            results.get("latency_stddev_ms"),
            bench.get("progress_interval_s"),
            bench.get("rate_limit_tps"),
            bench.get("latency_limit_ms"),
        )
    )


def without_log(run: Mapping[str, Any], *, logged: bool | None = None) -> LatencyTrust | None:
    """``unverified`` for a run with no transaction log whose short latencies were measured
    per transaction (the rule above); None otherwise. ``logged=False``: its logs could not be
    read (the analysis then judges it as a run without one)."""
    if logged is None:
        logged = has_transaction_log(run)
    if logged or not measured_per_transaction(run):
        return None
    avg = (run.get("results") or {}).get("latency_avg_ms")
    if isinstance(avg, bool) or not isinstance(avg, int | float) or not avg < SHORT_AVG_MS:
        return None
    return LatencyTrust(
        "unverified",
        None,
        None,
        f"latencies unverified: {fmt.ms(avg)} on average and no transaction log to check "
        f"for readings of 0 µs ({CAUSE} when a reply is already there)",
    )


def named(message: str) -> bool:
    """Whether a check's message is one of these rules' (``kb import`` shows them as advice)."""
    return message.startswith(("latencies unreliable: ", "latencies unverified: "))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
