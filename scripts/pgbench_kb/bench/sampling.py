"""Pick pgbench's ``--sampling-rate`` so that a trial's per-transaction log holds enough latencies.

The guides' rule: a p99 needs at least 1,000 logged latencies, a p99.9 10,000. When a profile
does not fix ``log_sampling_rate``, ``scripts/bench.sh`` asks, right before each trial::

    python -m pgbench_kb.bench.sampling --target 1000 [--warmup WARMUP.OUT] [--previous RUN.yaml]
        -- PGBENCH_ARG…

and prints ``RATE<TAB>SOURCE``. The expected transactions come from, in this order:

* ``transactions``: a ``-t`` run's own count (clients × transactions per client), exact;
* ``warmup``: the warm-up's tps (its pgbench output) × the trial's ``--time``;
* ``previous-trial``: the tps of the last recorded trial of the same configuration × ``--time``;
* ``default``: nothing to go on (a ``-T`` trial without a warm-up, first of its configuration):
  the profile default, 0.05, which may log fewer latencies than asked (the run records how
  many it logged, and kb compare applies the sample rules to that count).

The rate is ``MARGIN × target / expected``, rounded up to two significant digits and capped at
1.0: the margin covers a trial slower than its estimate and the randomness of sampling (a
binomial count of mean 1,500 falls below 1,000 with a probability far below one in a million).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from pgbench_kb.bench.profile import DEFAULT_SAMPLING_RATE
from pgbench_kb.parse import parse_text

MARGIN = 1.5
#: pgbench refuses a rate of 0; below this, a run of any sensible length logs nothing useful.
MIN_RATE = 1e-6


def round_up(value: float) -> float:
    """``value`` rounded up to two significant digits (0.01234 → 0.013)."""
    if value <= 0:
        return MIN_RATE
    exponent = math.floor(math.log10(value)) - 1
    step = 10.0**exponent
    return float(f"{math.ceil(round(value / step, 9)) * step:.3g}")


def rate_for(target: int, expected: float | None) -> float | None:
    """The share to log for ``target`` latencies out of ``expected`` transactions (None when
    nothing is expected to go on)."""
    if expected is None or expected <= 0 or not math.isfinite(expected):
        return None
    return min(1.0, max(MIN_RATE, round_up(MARGIN * target / expected)))


def _arg(args: Sequence[str], name: str) -> float | None:
    for arg in args:
        match = re.fullmatch(rf"--{name}=([0-9]+(?:\.[0-9]+)?)", arg)
        if match:
            return float(match.group(1))
    return None


def _tps_of_output(path: Path) -> float | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    tps = parse_text(text, source=str(path)).get("tps")
    return tps if isinstance(tps, int | float) and tps > 0 else None


def _tps_of_run(path: Path) -> float | None:
    from pgbench_kb.errors import KbError
    from pgbench_kb.runs.runfile import read_run

    try:
        data = read_run(path).data
    except (KbError, OSError):
        return None
    tps = ((data or {}).get("results") or {}).get("tps") if isinstance(data, dict) else None
    return tps if isinstance(tps, int | float) and tps > 0 else None


def pick(
    target: int, args: Sequence[str], *, warmup: Path | None, previous: Path | None
) -> tuple[float, str]:
    """(rate, where the estimate came from): see the module doc."""
    transactions, clients = _arg(args, "transactions"), _arg(args, "client")
    if transactions is not None:
        rate = rate_for(target, transactions * (clients or 1))
        if rate is not None:
            return rate, "transactions"
    seconds = _arg(args, "time")
    if seconds is not None:
        for source, tps in (
            ("warmup", _tps_of_output(warmup) if warmup else None),
            ("previous-trial", _tps_of_run(previous) if previous else None),
        ):
            rate = rate_for(target, tps * seconds if tps else None)
            if rate is not None:
                return rate, source
    return DEFAULT_SAMPLING_RATE, "default"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pgbench_kb.bench.sampling")
    parser.add_argument("--target", type=int, required=True, help="latencies the log should hold")
    parser.add_argument("--warmup", type=Path, help="the warm-up's pgbench output")
    parser.add_argument("--previous", type=Path, help="the last run file of this configuration")
    parser.add_argument("args", nargs="*", help="the trial's pgbench arguments (after --)")
    options = parser.parse_args(argv)
    rate, source = pick(
        options.target, options.args, warmup=options.warmup, previous=options.previous
    )
    sys.stdout.write(f"{rate:g}\t{source}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
