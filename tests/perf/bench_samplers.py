"""Benchmark: what the samplers (scripts/lib/sampler.sh: the per-second OS series and the wait
events) and the harness's other helpers cost during a trial. Prints the CPU each of the bench's
processes used while pgbench ran, as a share of one core, then the tps ratio of alternated
trials with and without the samplers (SAMPLERS=off) with a bootstrap 95% interval; exits 0.

    .venv/bin/python tests/perf/bench_samplers.py [--seconds 10] [--pairs 8] [--trial-seconds 5]
    .venv/bin/python tests/perf/bench_samplers.py --steps-only      # the CPU part alone

CPU is measured from /proc/PID/stat (user + system clock ticks) of every process of the bench,
polled four times a second while pgbench runs; each process is named by its role: pgbench, the
server's backends (the sampler's own apart, found by the pid its psql wrote first), the wait
sampler's psql (PGAPPNAME pgbench-kb-sampler), the bash sampler (the process holding os.raw
open), the progress watcher, the watchdog and bench.sh itself. CPU seconds are little changed
by other load on the machine, unlike tps; the tps ratio needs a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_harness import (
    PROFILE,
    REPO,
    BareServer,
    harness_tps,
    iqr,
    median_spread,
)

HZ = os.sysconf("SC_CLK_TCK")
SAMPLER_LIMIT = 0.01  # of one core


def _ticks(pid: int) -> tuple[int, int, str] | None:
    """(ppid, utime + stime, comm) of a process, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), comm


def _role(pid: int, ppid: int, comm: str, bench: int, sampler_backend: int | None) -> str | None:
    """What a process of the bench is, or None when it is not one of the bench's."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    if pid == sampler_backend:
        return "wait sampler: its backend"
    if pid == bench:
        return "bench.sh"
    if comm == "pgbench":
        return "pgbench"
    if cmdline.startswith("postgres") or comm == "postgres":
        return "server (backends, postmaster, background)"
    if b"PGAPPNAME=pgbench-kb-sampler" in environ:
        return "wait sampler: psql"
    if "bench.ui progress" in cmdline:
        return "progress watcher"
    if "psql" in comm:
        return "psql (lock session, stats)"
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            if os.readlink(fd).endswith("/os.raw"):
                return "OS sampler (bash)"
    if ppid == 1:
        return "watchdog"
    return f"other ({comm})"


class Profiler(threading.Thread):
    """Polls the processes whose environment carries the bench's TMPDIR while pgbench runs."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(daemon=True)
        self.marker = f"TMPDIR={tmp}".encode()
        self.tmp = tmp
        self.bench = 0
        self.stop = False
        self.first: dict[int, tuple[str, int]] = {}
        self.last: dict[int, tuple[str, int]] = {}
        self.window: list[float] = []

    def _ours(self) -> list[int]:
        """The bench's processes (its TMPDIR in their environment), and the server's: the
        postmaster and its children (run as another user when the bench runs as root, with an
        environment of their own)."""
        postmaster = None
        for path in self.tmp.glob("pgbench-kb.*/pgdata/postmaster.pid"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                postmaster = int(path.read_text().splitlines()[0])
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    pid = int(entry.name)
                    stat = _ticks(pid)
                    server = postmaster in {pid, stat[0] if stat else None}
                    if server or self.marker in (entry / "environ").read_bytes().split(b"\0"):
                        pids.append(pid)
        return pids

    def _sampler_backend(self) -> int | None:
        for path in self.tmp.glob("pgbench-kb.*/trials/*/waits.raw"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                return int(path.read_text().splitlines()[0].split("\t")[1])
        return None

    def run(self) -> None:
        while not self.stop:
            seen = {pid: _ticks(pid) for pid in self._ours()}
            running = any(t and t[2] == "pgbench" for t in seen.values())
            # pgbench -i and the warm-up run before the trial: the window is the last pgbench
            # that logs (its output is pgbench.out in a trial folder), i.e. while it runs.
            trial = any(self.tmp.glob("pgbench-kb.*/trials/*/pgbench.out"))
            if running and trial:
                backend = self._sampler_backend()
                now = time.monotonic()
                if not self.window or now - self.window[-1] > 2:
                    self.first, self.last, self.window = {}, {}, []
                self.window.append(now)
                for pid, t in seen.items():
                    if t is None:
                        continue
                    role = _role(pid, t[0], t[2], self.bench, backend)
                    if role is None:
                        continue
                    self.first.setdefault(pid, (role, t[1]))
                    self.last[pid] = (role, t[1])
            time.sleep(0.25)

    def shares(self) -> tuple[float, dict[str, float]]:
        seconds = self.window[-1] - self.window[0] if len(self.window) > 1 else 0.0
        cpu: dict[str, float] = {}
        for pid, (role, ticks) in self.last.items():
            cpu[role] = cpu.get(role, 0.0) + (ticks - self.first[pid][1]) / HZ
        return seconds, cpu


def steps(tmp: Path, seconds: int) -> dict[str, float]:
    """One bench.sh trial of ``seconds`` (select-only, 2 clients) with its processes profiled."""
    profile = tmp / "steps.yaml"
    profile.write_text(
        PROFILE.format(clients=2, threads=2, workload="select-only", seconds=seconds),
        encoding="utf-8",
    )
    root = tmp / "root-steps"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    profiler = Profiler(tmp)
    bench = subprocess.Popen(
        [str(REPO / "scripts" / "bench.sh"), "--profile", str(profile), "--root", str(root),
         "--machine", "perf-box"],
        env={**env, "TMPDIR": str(tmp)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    profiler.bench = bench.pid
    profiler.start()
    _, err = bench.communicate(timeout=600)
    profiler.stop = True
    profiler.join()
    if bench.returncode:
        raise SystemExit(f"bench.sh failed: {err[-500:]}")
    window, cpu = profiler.shares()
    print(
        f"CPU of the bench's processes while pgbench ran (select-only, -c 2 -j 2, one trial, "
        f"{window:.1f} s observed; /proc/PID/stat polled 4 times a second):"
    )
    for role, used in sorted(cpu.items(), key=lambda kv: -kv[1]):
        print(f"  {role:45s} {used:7.2f} CPU s  {100 * used / max(window, 1e-9):6.2f}% of a core")
    sampler = sum(v for k, v in cpu.items() if k.startswith(("wait sampler", "OS sampler")))
    share = sampler / max(window, 1e-9)
    verdict = "PASS" if share < SAMPLER_LIMIT else "MISSED"
    print(
        f"  samplers together: {100 * share:.2f}% of a core: {verdict} (limit "
        f"{100 * SAMPLER_LIMIT:.0f}%)"
    )
    return cpu


def pairs(tmp: Path, count: int, seconds: int) -> None:
    """Alternated bench.sh trials with and without the samplers on one warm server."""
    profile = tmp / "pairs.yaml"
    profile.write_text(
        PROFILE.format(clients=2, threads=2, workload="select-only", seconds=seconds),
        encoding="utf-8",
    )
    (tmp / "bare").mkdir(mode=0o755)
    rows = []
    with BareServer(tmp / "bare") as server:
        for index in range(count):
            order = ("on", "off") if index % 2 == 0 else ("off", "on")
            tps = {}
            for state in order:
                os.environ["SAMPLERS"] = state
                try:
                    tps[state] = harness_tps(profile, tmp, len(rows) * 2 + len(tps), server)
                finally:
                    os.environ.pop("SAMPLERS", None)
            rows.append((tps["on"], tps["off"], tps["on"] / tps["off"]))
    print(
        f"samplers on vs off: scripts/bench.sh trials (select-only, scale 1, -c 2 -j 2, "
        f"-T {seconds}), {count} alternations on one server"
    )
    for index, (on, off, ratio) in enumerate(rows, 1):
        print(f"  pair {index}: on {on:9.1f} tps   off {off:9.1f} tps   ratio {ratio:.3f}")
    ratios = [r for _, _, r in rows]
    median, low, high = median_spread(ratios)
    q1, q3 = iqr(ratios)
    print(
        f"  median ratio {median:.3f} (IQR {q1:.3f}-{q3:.3f}, bootstrap 95% interval "
        f"{low:.3f}-{high:.3f})"
    )
    if low <= 1.0 <= high:
        print("  the interval holds 1.0: no cost of the samplers measurable at this noise")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10, help="the profiled trial's length")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--trial-seconds", type=int, default=5, help="each paired trial's")
    parser.add_argument("--steps-only", action="store_true", help="the CPU part alone")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kb-perf-samplers.", dir="/tmp"))
    tmp.chmod(0o755)  # the server may run as an unprivileged user
    load = os.getloadavg()
    try:
        steps(tmp, args.seconds)
        if not args.steps_only:
            pairs(tmp, args.pairs, args.trial_seconds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"  load average at the start: {load[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
