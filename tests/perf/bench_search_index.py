"""Benchmark: what `kb index` adds to Pagefind (the filter index rewritten in a fixed order) on
generated pages shaped like run pages: nine filters, a tps sort key and meta.

    .venv/bin/python tests/perf/bench_search_index.py [--pages 10000]

Prints figures; asserts nothing (no target was set: the rewrite should stay a small share of
the Pagefind stage). Wall time depends on what else the machine runs, so CPU seconds (user +
system, of every process started) are printed too, with the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KB = REPO / ".venv" / "bin" / "kb"
PYTHON = REPO / ".venv" / "bin" / "python"

FILTERS = {
    "PostgreSQL": [f"PostgreSQL {v}" for v in ("8.0", "8.2", "8.4", "9.6", "13", "16", "18")],
    "RAID level": ["RAID0", "RAID1", "RAID5", "RAID1+0", "ZFS mirror"],
    "WAL placement": ["WAL with data", "WAL on its own disk"],
    "Write cache": ["no write cache", "BBU cache"],
    "OS": ["Ubuntu Server", "Debian", "FreeBSD"],
    "Filesystem": ["ext3", "ext4", "xfs", "zfs"],
    "Workload": ["tpcb-like", "select-only", "simple-update"],
    "Origin": ["measured", "transcribed"],
    "Machine": [f"machine-{n}" for n in range(40)],
}


def page(n: int, rng: random.Random) -> str:
    facets = "".join(
        f'<span data-pagefind-filter="{name}">{rng.choice(values)}</span>'
        for name, values in FILTERS.items()
    )
    tps = rng.uniform(50, 60000)
    return (
        f'<!doctype html><html lang="en"><head><title>Run {n}</title></head><body>'
        f"<main data-pagefind-body><h1>Run {n}</h1><div hidden>{facets}"
        f'<span data-pagefind-sort="tps" data-pagefind-meta="tps:{tps:,.0f} tps">{tps:.6f}'
        f"</span></div><p>pgbench run {n} at {tps:.1f} tps, scale {n % 300}.</p></main>"
        "</body></html>"
    )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[float, float]:
    cpu, started = children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started, children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    args = parser.parse_args()
    pagefind = subprocess.run(
        [str(PYTHON), "-c", "import pagefind_bin; print(pagefind_bin.get_executable())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="kb-bench-index.") as tmp:
        site = Path(tmp) / "site"
        for n in range(args.pages):
            folder = site / "runs" / f"r{n}"
            folder.mkdir(parents=True)
            (folder / "index.html").write_text(page(n, rng), encoding="utf-8")
        print(f"{args.pages} pages, load average {os.getloadavg()[0]:.2f} at the start")
        wall, cpu = timed([pagefind, "--site", str(site), "--silent"])
        print(f"  Pagefind alone   {wall:6.2f} s wall  {cpu:6.2f} s CPU")
        shutil.rmtree(site / "pagefind")
        wall, cpu = timed([str(KB), "index", str(site)])
        print(f"  kb index         {wall:6.2f} s wall  {cpu:6.2f} s CPU  (Pagefind + rewrite)")
        code = (
            "import sys, time; from pathlib import Path;"
            "from pgbench_kb.publish import search_index as s;"
            "t, c = time.perf_counter(), time.process_time(); s.stabilize(Path(sys.argv[1]));"
            "print(f'{time.perf_counter() - t:6.2f} s wall  {time.process_time() - c:6.2f} s CPU')"
        )
        shutil.rmtree(site / "pagefind")
        subprocess.run([pagefind, "--site", str(site), "--silent"], check=True)
        inside = subprocess.run(
            [str(PYTHON), "-c", code, str(site / "pagefind")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(f"  the rewrite alone {inside}  (inside one Python process)")
        print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
