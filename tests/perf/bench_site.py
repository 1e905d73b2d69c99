"""Benchmark: wall time of the site build (`scripts/site.sh`: check, derive, Hugo, Pagefind) on
the data present in this checkout. Prints figures; asserts nothing.

    .venv/bin/python tests/perf/bench_site.py [--repeats N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("config.toml", "layouts", "static", "content", "data")


def build_once(root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(REPO / "scripts" / "site.sh"), "--root", str(root)], check=True, capture_output=True
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kb-perf-site.") as tmp:
        root = Path(tmp)
        for name in SOURCES:
            source = REPO / name
            if source.is_dir():
                shutil.copytree(source, root / name)
            elif source.exists():
                shutil.copy2(source, root / name)
        (root / "data" / "runs").mkdir(parents=True, exist_ok=True)
        runs = sum(1 for _ in (root / "data" / "runs").rglob("*.yaml"))
        times = [build_once(root) for _ in range(args.repeats)]
        pages = sum(1 for _ in (root / "public").rglob("*.html"))
    print(f"site build (scripts/site.sh) on {runs} run file(s), {pages} page(s):")
    print(
        f"  wall time: median {statistics.median(times):.2f} s, "
        f"min {min(times):.2f} s, max {max(times):.2f} s over {len(times)} builds"
    )


if __name__ == "__main__":
    main()
