"""What ``scripts/bench.sh`` shows while it runs: the live progress of a trial and the summary
table at the end. bash never reads pgbench's output; it starts these helpers instead::

    python -m pgbench_kb.bench.ui progress --output TRIAL/pgbench.out --trial 2 --of 6 …
    python -m pgbench_kb.bench.ui result --trial 2 --of 6 RUN_FILE
    python -m pgbench_kb.bench.ui summary [--keep FILE] RUN_FILE…

``progress`` follows the output file pgbench is writing and draws one line on stderr — trial i of
n, elapsed and remaining time of the whole bench, and the tps of pgbench's latest ``-P``
report — redrawn in place on a terminal, every few seconds otherwise. It ends on SIGTERM, or by
itself when the bench that started it is gone.

``reason`` prints, in one line, why a pgbench run failed (the server's or pgbench's own error).

``result`` prints, on stderr, one line with what a finished trial measured (its run file's tps
and latencies): in a log, where the live line is not drawn, this is the trial's figure.

``summary`` prints one row per configuration (the repeats of a group together): median tps,
the spread and coefficient of variation of the repeats, median latency, and the p99 of the
sampled per-transaction log; then, when the repeats of a configuration vary more than
``kb check`` accepts (``NOISY_CV``), which ones and what to do about it. ``--keep FILE`` also
writes it to FILE.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pgbench_kb.parse import progress_reports

# The watcher runs beside every trial: it imports only what it needs, so that its start takes
# as little CPU as it can from the pgbench it watches (``kb check``'s rules load jsonschema).

QUIET_INTERVAL_S = 5.0


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def last_progress(text: str) -> dict[str, Any] | None:
    """The latest ``progress:`` report in pgbench's output (None before the first)."""
    reports = progress_reports(text)
    return reports[-1] if reports else None


def progress_line(
    *,
    trial: int,
    of: int,
    seconds: int,
    later_seconds: int,
    bench_started: float,
    trial_started: float,
    done_seconds: int,
    now: float,
    latest: dict[str, float] | None,
    label: str = "",
) -> str:
    """One progress line, e.g. ``trial 2/6 · 00:41 elapsed · ~01:50 left · 4398 tps``."""
    elapsed = now - bench_started
    in_trial = now - trial_started
    # What the bench spent between trials so far (resets, checkpoints, imports), per trial.
    finished = trial - 1
    overhead = (trial_started - bench_started - done_seconds) / finished if finished else 3.0
    remaining = max(0.0, seconds - in_trial) + later_seconds + overhead * (of - trial)
    parts = [f"trial {trial}/{of}", f"{_clock(elapsed)} elapsed", f"~{_clock(remaining)} left"]
    if latest is None:
        parts.append("starting")
    elif latest["tps"] is None or latest["latency_ms"] is None:
        parts.append("no transactions in the last second")
    else:
        parts.append(f"{latest['tps']:.0f} tps, lat {latest['latency_ms']:.2f} ms")
        if latest["failed"]:
            parts.append(f"{latest['failed']} failed")
    if label:
        parts.append(label)
    return " · ".join(parts)


def noisy_cv() -> float:
    """The coefficient of variation above which ``kb check`` calls repeats noisy."""
    from pgbench_kb.runs.check.values import NOISY_CV

    return NOISY_CV


def _alive(pid: int | None) -> bool:
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run_progress(args: argparse.Namespace) -> int:
    stop = False

    def _stop(_signum: int, _frame: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tty = sys.stderr.isatty()
    # Its start (Python, its imports: a few tenths of a CPU second on a busy machine) is over:
    # bench.sh waits for this file before it starts pgbench, so that it takes nothing from it.
    if args.ready:
        with contextlib.suppress(OSError):
            Path(args.ready).touch()
    # Started before the trial's checkpoint, so that its own start is over when pgbench's run
    # begins: the trial's clock starts when pgbench's output file appears.
    while not stop and _alive(args.parent) and not os.path.exists(args.output):
        time.sleep(0.1)
    started = time.time()
    last_shown = started
    text = ""
    offset = 0
    while not stop and _alive(args.parent):
        try:
            with open(args.output, "rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
        except OSError:
            chunk = b""
        if chunk:
            offset += len(chunk)
            # Keep only the tail: the latest report is all we show.
            text = (text + chunk.decode("utf-8", errors="replace"))[-4096:]
        now = time.time()
        line = progress_line(
            trial=args.trial,
            of=args.of,
            seconds=args.seconds,
            later_seconds=args.later_seconds,
            bench_started=args.bench_started,
            trial_started=started,
            done_seconds=args.done_seconds,
            now=now,
            latest=last_progress(text),
            label=args.label if not tty else "",
        )
        if tty:
            sys.stderr.write("\r\033[K" + line)
            sys.stderr.flush()
        elif now - last_shown >= QUIET_INTERVAL_S:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
            last_shown = now
        # pgbench reports once a second: looking more often would only take CPU from it
        time.sleep(1.0)
    if tty:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
    return 0


# ---------------------------------------------------------------------------------------------
# summary


def _load(path: Path) -> dict[str, Any] | None:
    """A run file's data, or None when it cannot be read (the summary shows what it can)."""
    from pgbench_kb.errors import KbError
    from pgbench_kb.runs.runfile import read_run

    try:
        data = read_run(path).data
    except KbError:
        return None
    return data if isinstance(data, dict) else None


def _get(data: dict[str, Any] | None, dotted: str) -> Any:
    node: Any = data
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _fmt(value: float | None, pattern: str = "{:.1f}") -> str:
    return "—" if value is None else pattern.format(value)


def _disturbed(run: dict[str, Any]) -> bool:
    return _get(run, "machine_load.disturbed") is True


def _flush_level(run: dict[str, Any]) -> str | None:
    """``flush 8 ms`` or ``flush traced`` for a trial under the emulated flush (profile key
    flush_ms), else None: such trials share a settings profile, so the name alone would not
    tell the rows apart."""
    target = _get(run, "storage.flush.emulated.target_ms")
    if isinstance(target, int | float):
        return f"flush {target:g} ms"
    return "flush traced" if _get(run, "storage.flush.emulated.traced_only") is True else None


def summary_rows(runs: Sequence[dict[str, Any]]) -> list[list[str]]:
    """One row per configuration (repeat group), in the order the groups first appear; a
    disturbed trial (``machine_load.disturbed``) is left out of its row's figures, as it is
    left out of every group (``disturbed_note`` counts them)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        key = _get(run, "repeat.group") or str(run.get("id"))
        groups.setdefault(key, []).append(run)
    rows = [
        [
            "workload",
            "scale",
            "clients",
            "mode",
            "settings",
            "n",
            "tps median",
            "spread",
            "lat ms",
            "p99 ms",
            "cv",
        ]
    ]
    # Several server builds in one bench: the version goes with the settings set.
    versions = {_get(r, "postgres.version") for r in runs}
    for every in groups.values():
        first = every[0]
        members = [r for r in every if not _disturbed(r)]
        tps = [t for t in (_get(r, "results.tps") for r in members) if isinstance(t, int | float)]
        lat = [
            v
            for v in (_get(r, "results.latency_avg_ms") for r in members)
            if isinstance(v, int | float)
        ]
        p99 = [
            v
            for v in (_get(r, "results.latency_percentiles_ms.p99") for r in members)
            if isinstance(v, int | float)
        ]
        median = statistics.median(tps) if tps else None
        spread = None
        if len(tps) > 1 and median:
            spread = (max(tps) - min(tps)) / median * 100
        cv = coefficient_of_variation(tps)
        settings = _get(first, "postgres.settings_profile") or "—"
        if flush := _flush_level(first):
            settings = f"{settings}, {flush}"
        if len(versions) > 1:
            settings = f"{settings} on {_get(first, 'postgres.version') or '?'}"
        rows.append(
            [
                str(_get(first, "benchmark.workload.name") or "—"),
                str(_get(first, "benchmark.scale") or "—"),
                str(_get(first, "benchmark.clients") or "—"),
                str(_get(first, "benchmark.query_mode") or "—"),
                str(settings),
                str(len(members)),
                _fmt(median),
                "—" if spread is None else f"±{spread / 2:.1f}%",
                _fmt(statistics.median(lat) if lat else None, "{:.3f}"),
                _fmt(statistics.median(p99) if p99 else None, "{:.3f}"),
                "—" if cv is None else f"{cv:.1%}" + (" noisy" if cv > noisy_cv() else ""),
            ]
        )
    return rows


def coefficient_of_variation(values: Sequence[float]) -> float | None:
    """Standard deviation over mean of the repeats (as ``kb check`` computes it); None for
    fewer than two."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else None


def noise_advice(rows: list[list[str]]) -> str:
    """What to do when repeats are too noisy to compare; empty when none is."""
    noisy = [row for row in rows[1:] if row[-1].endswith(" noisy")]
    if not noisy:
        return ""
    return (
        f"noisy: {len(noisy)} of {len(rows) - 1} configuration(s) vary between repeats by more "
        f"than {noisy_cv():.0%} (coefficient of variation; `kb check` warns about the same runs), "
        "too much to compare them with each other. Make each trial longer (duration_s) and "
        "warm up first (warmup_s), run on a quieter machine (nothing else busy: other "
        "benches, builds, a VM neighbour), or add repeats.\n"
    )


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    numeric = {1, 2, 5, 6, 7, 8, 9}
    lines = []
    for n, row in enumerate(rows):
        cells = [
            cell.rjust(width) if i in numeric and n else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def disturbed_note(runs: Sequence[dict[str, Any]]) -> str:
    """How many trials the figures leave out as disturbed; empty when none was."""
    count = sum(1 for run in runs if _disturbed(run))
    if not count:
        return ""
    return (
        f"left out: {count} disturbed trial(s) (other processes or the host's steal over the "
        "limits, docs/harness.md); n counts the quiet ones, and the disturbed run files are "
        "kept, marked, out of every group\n"
    )


def summary_text(runs: Sequence[dict[str, Any]]) -> str:
    """The table, its legend, the disturbed trials left out and (when there is any) the advice
    on noisy repeats."""
    rows = summary_rows(runs)
    return (
        format_table(rows)
        + "spread: half the range of the repeats, in percent of the median; cv: their "
        + "coefficient of variation\n"
        + disturbed_note(runs)
        + noise_advice(rows)
    )


def run_summary(args: argparse.Namespace) -> int:
    runs = [r for r in (_load(Path(p)) for p in args.runs) if r is not None]
    if not runs:
        return 0
    text = summary_text(runs)
    sys.stdout.write("\n" + text)
    sys.stdout.flush()
    if args.keep is not None:
        with contextlib.suppress(OSError):
            args.keep.write_text(text, encoding="utf-8")
    return 0


def result_line(run: dict[str, Any], *, trial: int, of: int) -> str:
    """``trial 2/6 done: 4398 tps, latency 0.91 ms, p99 2.10 ms`` from a run file."""
    tps = _get(run, "results.tps")
    parts = [f"trial {trial}/{of} done: " + ("—" if tps is None else f"{tps:.0f} tps")]
    latency = _get(run, "results.latency_avg_ms")
    if isinstance(latency, int | float):
        parts.append(f"latency {latency:.3f} ms")
    p99 = _get(run, "results.latency_percentiles_ms.p99")
    if isinstance(p99, int | float):
        parts.append(f"p99 {p99:.3f} ms")
    failed = _get(run, "results.failed_transactions")
    if failed:
        parts.append(f"{failed} failed")
    return ", ".join(parts)


def run_result(args: argparse.Namespace) -> int:
    run = _load(Path(args.run))
    if run is None:
        return 0
    stamp = time.strftime("%H:%M:%S", time.gmtime())
    sys.stderr.write(f"{stamp} [bench] {result_line(run, trial=args.trial, of=args.of)}\n")
    # Here, not at the top: quiet imports the run-file builder and YAML, which the progress
    # watcher (started beside every trial) does not need.
    from pgbench_kb.bench import quiet

    load = quiet.describe(run.get("machine_load"))
    if load:
        sys.stderr.write(f"{stamp} [bench] trial {args.trial}/{args.of}: {load}\n")
    disturbed = (run.get("machine_load") or {}).get("disturbed") is True
    return DISTURBED_STATUS if disturbed and args.disturbed_status else 0


#: ``result --disturbed-status`` exits with this when the run is marked disturbed (bench.sh
#: then queues the trial to run again, profile key rerun_disturbed).
DISTURBED_STATUS = 3


# ---------------------------------------------------------------------------------------------
# reason

REASON_RE = re.compile(r"(ERROR|FATAL|PANIC):\s+(.*)|pgbench: error: (.*)|(could not .*)")


def failure_reason(text: str) -> str:
    """The line of pgbench's output that says why it failed: the first server error or pgbench
    error, else its last lines."""
    server = client = None
    for line in text.splitlines():
        match = REASON_RE.search(line)
        if not match:
            continue
        if match.group(2) and server is None:
            server = f"{match.group(1)}: {match.group(2).strip()}"
        elif client is None:
            client = (match.group(3) or match.group(4) or "").strip()
    found = [part for part in (server, client) if part]
    if found:
        return "; ".join(found)
    return " ".join(" ".join(text.strip().splitlines()[-3:]).split())


def run_reason(args: argparse.Namespace) -> int:
    try:
        text = Path(args.output).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    print(failure_reason(text))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pgbench_kb.bench.ui")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("progress", help="follow a trial's pgbench output; draw progress")
    p.add_argument("--output", required=True, type=Path)
    p.add_argument("--trial", required=True, type=int)
    p.add_argument("--of", required=True, type=int)
    p.add_argument("--seconds", type=int, default=0)
    p.add_argument("--later-seconds", type=int, default=0)
    p.add_argument("--bench-started", type=float, default=time.time())
    p.add_argument("--done-seconds", type=int, default=0)
    p.add_argument("--label", default="")
    p.add_argument("--parent", type=int, default=None)
    p.add_argument("--ready", default=None, help="a file to create once started (bench.sh waits)")
    p.set_defaults(handler=run_progress)
    s = sub.add_parser("summary", help="the summary table of run files")
    s.add_argument("--keep", type=Path, default=None, help="also write the summary to this file")
    s.add_argument("runs", nargs="*")
    s.set_defaults(handler=run_summary)
    t = sub.add_parser("result", help="one line with what a finished trial measured")
    t.add_argument("--trial", required=True, type=int)
    t.add_argument("--of", required=True, type=int)
    t.add_argument(
        "--disturbed-status",
        action="store_true",
        help=f"exit {DISTURBED_STATUS} when the run is marked disturbed (machine_load.disturbed)",
    )
    t.add_argument("run")
    t.set_defaults(handler=run_result)
    r = sub.add_parser("reason", help="why pgbench failed, in one line, from its output")
    r.add_argument("output", type=Path)
    r.set_defaults(handler=run_reason)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
