"""A rate given as a share of the maximum (profile ``rates: ["70%"]``): the ``--rate`` a trial
runs at, from the tps of the session's unthrottled calibration run. ``scripts/bench.sh`` runs::

    python -m pgbench_kb.bench.calibration --percent 100 --output CALIBRATION.out
    python -m pgbench_kb.bench.calibration --percent 70 --tps MAX_TPS

and reads ``RATE<TAB>MAX_TPS`` on stdout: the rate to the first decimal place that does not
exceed the share (pgbench takes a decimal rate), and the calibration's tps (pgbench's own
figure, without the initial connection time where it prints both). A calibration run that
printed no tps is an error (exit 1, one ``error: …`` line on stderr): the bench stops rather
than guess a rate.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from pgbench_kb.errors import CalibrationError
from pgbench_kb.parse import parse_text


def max_tps(output: Path) -> float:
    """The tps of an unthrottled calibration run's pgbench output."""
    text = output.read_text(encoding="utf-8", errors="replace")
    tps = parse_text(text, source=str(output)).get("tps")
    if not isinstance(tps, int | float) or isinstance(tps, bool) or tps <= 0:
        raise CalibrationError(
            "the calibration run printed no tps",
            path=str(output),
            hint="look at its output: pgbench did not finish a measurement",
        )
    return float(tps)


def rate_for(percent: float, tps: float) -> float:
    """``percent`` of ``tps``, rounded down to 0.1 tps (never above the share asked for), and
    at least 0.1."""
    return max(0.1, math.floor(tps * percent / 100 * 10) / 10)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pgbench_kb.bench.calibration")
    parser.add_argument("--percent", type=float, required=True, help="the share, e.g. 70")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--output", type=Path, help="the calibration run's pgbench output")
    source.add_argument("--tps", type=float, help="the maximum, already measured")
    options = parser.parse_args(argv)
    try:
        tps = options.tps if options.output is None else max_tps(options.output)
    except (CalibrationError, OSError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    sys.stdout.write(f"{rate_for(options.percent, tps):g}\t{tps:g}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
