"""Benchmark: the search stage (`kb index`: Pagefind on the whole site, its filter index
rewritten in a fixed order, unused bundle files removed), either on a site already built, on the
same site before and after one run was added (cold, then with the cache), or on generated
pages shaped like run pages (nine filters, a tps sort key and meta).

    .venv/bin/python tests/perf/bench_search_index.py --site DIR/site/public [--repeat 3]
    .venv/bin/python tests/perf/bench_search_index.py --before A/public --after B/public
    .venv/bin/python tests/perf/bench_search_index.py [--pages 10000]

For --before/--after: two public/ folders of the same tree, built by scripts/site.sh without
and with one more run (bench_site.py --keep DIR leaves DIR with its added run in
runs/extra/: build it once without that folder and its raw file, keep a copy of public/ made
of hard links, put them back and build again). Each repeat indexes --before with an empty
cache (cold), then --after with that cache, as scripts/site.sh does after adding a run.

For the 10,000-run figures, build the tree once with
`.venv/bin/python tests/perf/bench_site.py --runs 10000 --keep DIR` and pass its public/ folder
(read only: each repeat indexes a copy made of hard links). `--kb` runs another checkout's
`kb` on the same pages (to compare with `main`).

Prints figures; asserts nothing (the target is on the whole build: bench_site.py). Wall time
depends on what else the machine runs, so CPU seconds (user + system, of every process
started) are printed too, with the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter
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

#: Run inside this checkout's Python: where the time of one `kb index` goes.
STEPS = """
import resource, shutil, subprocess, sys, time
from pathlib import Path
from pgbench_kb.publish import search_index as s
site = Path(sys.argv[1])
def cpu():
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
def step(name, action):
    c, t = cpu(), time.perf_counter()
    result = action()
    print(f"    {name:<22}{time.perf_counter() - t:6.2f} s wall {cpu() - c:6.2f} s CPU")
    return result
shutil.rmtree(site / "pagefind", ignore_errors=True)
pages = step("pages_to_index", lambda: s.pages_to_index(site))
mirror = site.parent / ".mirror"
step("mirror + Pagefind", lambda: s.run_pagefind(site, pages, site / "pagefind", mirror))
step("fixed order (rewrite)", lambda: s.stabilize(site / "pagefind"))
step("unused files removed", lambda: s.prune(site / "pagefind"))
"""


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


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def pagefind_executable() -> str:
    return subprocess.run(
        [str(PYTHON), "-c", "import pagefind_bin; print(pagefind_bin.get_executable())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def linked_copy(site: Path, target: Path) -> None:
    """``site`` without its pagefind/, as hard links (nothing of ``site`` is written)."""
    shutil.copytree(site, target, copy_function=os.link, ignore=shutil.ignore_patterns("pagefind"))


def describe(site: Path) -> None:
    """What Pagefind is given: marked pages by section, and their size."""
    marked = [p for p in site.rglob("*.html") if b"data-pagefind-body" in p.read_bytes()]
    sections = Counter(p.relative_to(site).parts[0] for p in marked)
    size = Counter()
    for p in marked:
        size[p.relative_to(site).parts[0]] += p.stat().st_size
    print(f"{len(marked)} pages indexed of {sum(1 for _ in site.rglob('*.html'))} HTML files:")
    for name, count in sections.most_common():
        print(f"    {name:<14}{count:6d} pages {size[name] / 1e6:7.1f} MB of HTML")


def bundle_figures(bundle: Path) -> str:
    files = [p for p in bundle.rglob("*") if p.is_file()]
    top = sorted(p.name for p in bundle.iterdir() if p.is_file())
    total = sum(p.stat().st_size for p in files)
    return f"{len(files)} files, {total / 1e6:.1f} MB; top level: {' '.join(top)}"


def on_site(site: Path, kb: Path, repeat: int) -> None:
    describe(site)
    with tempfile.TemporaryDirectory(prefix="kb-bench-index.") as tmp:
        walls, cpus = [], []
        for n in range(repeat):
            copy = Path(tmp) / f"public-{n}"
            linked_copy(site, copy)
            before = load()
            wall, cpu = timed([str(kb), "index", str(copy)])
            walls.append(wall)
            cpus.append(cpu)
            print(f"  {kb} index: {wall:6.2f} s wall {cpu:6.2f} s CPU (load {before} → {load()})")
            if n == repeat - 1:
                print(f"  bundle: {bundle_figures(copy / 'pagefind')}")
            shutil.rmtree(copy)
        print(
            f"  median of {repeat}: {statistics.median(walls):.2f} s wall, "
            f"{statistics.median(cpus):.2f} s CPU"
        )
        copy = Path(tmp) / "steps"
        linked_copy(site, copy)
        print(f"  where the time goes (this checkout's code), load {load()}:")
        subprocess.run([str(PYTHON), "-c", STEPS, str(copy)], check=True)


def one_more_run(before: Path, after: Path, kb: Path, repeat: int) -> None:
    print(f"search stage on {before} (cold), then {after} with the cache:")
    with tempfile.TemporaryDirectory(prefix="kb-bench-index.") as tmp:
        figures: dict[str, list[tuple[float, float]]] = {"cold": [], "one more run": []}
        for n in range(repeat):
            cache = Path(tmp) / f"cache-{n}"
            for label, site in (("cold", before), ("one more run", after)):
                copy = Path(tmp) / f"{label}-{n}"
                linked_copy(site, copy)
                start = load()
                command = [str(kb), "index", str(copy), "--cache", str(cache)]
                cpu, started = children_cpu(), time.perf_counter()
                done = subprocess.run(command, check=True, capture_output=True, text=True)
                wall, cpu = time.perf_counter() - started, children_cpu() - cpu
                figures[label].append((wall, cpu))
                said = done.stdout.splitlines()[0].split(", ", 1)[1]
                print(f"  {label:<13}{wall:6.2f} s wall {cpu:6.2f} s CPU (load {start} → "
                      f"{load()}): {said}")  # fmt: skip
                shutil.rmtree(copy)
        for label, pairs in figures.items():
            print(
                f"  {label}: median of {repeat}: "
                f"{statistics.median(w for w, _ in pairs):.2f} s wall, "
                f"{statistics.median(c for _, c in pairs):.2f} s CPU"
            )


def on_generated_pages(pages: int) -> None:
    pagefind = pagefind_executable()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="kb-bench-index.") as tmp:
        site = Path(tmp) / "site"
        for n in range(pages):
            folder = site / "runs" / f"r{n}"
            folder.mkdir(parents=True)
            (folder / "index.html").write_text(page(n, rng), encoding="utf-8")
        print(f"{pages} generated pages, load average {load()} at the start")
        wall, cpu = timed([pagefind, "--site", str(site), "--silent"])
        print(f"  Pagefind alone   {wall:6.2f} s wall  {cpu:6.2f} s CPU")
        shutil.rmtree(site / "pagefind")
        wall, cpu = timed([str(KB), "index", str(site)])
        print(f"  kb index         {wall:6.2f} s wall  {cpu:6.2f} s CPU  (Pagefind + rewrite)")
        print("  where the time goes:")
        subprocess.run([str(PYTHON), "-c", STEPS, str(site)], check=True)
    print(f"load average {load()} at the end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built public/ folder (read only)")
    parser.add_argument("--kb", type=Path, default=KB, help="the kb to time (default: ours)")
    parser.add_argument("--repeat", type=int, default=3, help="indexings of --site")
    parser.add_argument("--pages", type=int, default=10_000, help="without --site")
    parser.add_argument("--before", type=Path, help="a built public/ folder (read only)")
    parser.add_argument("--after", type=Path, help="the same after one more run (read only)")
    args = parser.parse_args()
    if args.before and args.after:
        one_more_run(args.before.resolve(), args.after.resolve(), args.kb, args.repeat)
    elif args.site:
        on_site(args.site.resolve(), args.kb, args.repeat)
    else:
        on_generated_pages(args.pages)


if __name__ == "__main__":
    main()
