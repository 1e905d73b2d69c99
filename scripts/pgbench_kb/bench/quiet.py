"""Was the machine quiet during a trial? The run file's ``machine_load`` section, from the two
snapshots ``scripts/lib/quiet.sh`` took right before and right after pgbench ran
(``quiet-before.tsv``/``.procs`` and ``quiet-after.tsv``/``.procs`` in the trial folder).

* **Other processes' CPU.** Every process is sorted into the bench's own — the trees under the
  bench's shell (pgbench, psql, the progress watcher), the server's postmaster (every backend)
  and the watchdog — kernel threads (the tree under PID 2: flushing and I/O done largely for the
  bench itself, recorded apart), and the others. The others' CPU over the trial is the sum of
  ``utime + stime + cutime + cstime`` after, minus the same sum before: a process that ended
  during the trial is then counted through its parent's ``cutime``, which takes in what it used.
  Divided by the trial's wall time, it is a share of one core.
* **Steal** (``/proc/stat``, all CPUs): time the hypervisor gave to other guests, as a share of
  all CPU time during the trial.
* **Load average** before and after (informative: it counts the bench's own clients too).
* **Shared cores**: whether the client (the bench, pgbench) and the server may run on the same
  CPUs (their ``Cpus_allowed_list``); on one host without pinning they always do.

A trial is **disturbed** when other processes used more than ``OTHER_CORE_SHARE_LIMIT`` of one
core, or steal exceeded ``STEAL_PCT_LIMIT`` percent (docs/harness.md says why these values).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgbench_kb.bench.facts import read_regular
from pgbench_kb.runs.quietness import OTHER_CORE_SHARE_LIMIT, STEAL_PCT_LIMIT

#: The heaviest other processes named in the run file.
TOP_OTHERS = 3
KTHREADD = 2

_STAT_RE = re.compile(r"^(\d+) \((.*)\) (\S) (-?\d+)((?: -?\d+)+)\s*$")


@dataclass
class Proc:
    pid: int
    comm: str
    ppid: int
    ticks: int  # utime + stime + cutime + cstime
    own_ticks: int  # utime + stime
    start: int


@dataclass
class Snapshot:
    taken_at: float | None = None
    uptime: float | None = None
    loadavg: list[float] | None = None
    clk_tck: int = 100
    cpu: list[int] | None = None  # the "cpu" line of /proc/stat
    cpus: int = 0  # the "cpuN" lines
    roots: dict[str, int] = field(default_factory=dict)
    affinity: dict[str, str] = field(default_factory=dict)
    procs: dict[int, Proc] = field(default_factory=dict)


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def parse_procs(text: str) -> dict[int, Proc]:
    """``/proc/PID/stat`` lines → processes (a line that does not parse is left out)."""
    procs = {}
    for line in text.splitlines():
        match = _STAT_RE.match(line)
        if not match:
            continue
        rest = match.group(5).split()
        # Fields after ppid (field 4): pgrp(5) session(6) tty(7) tpgid(8) flags(9) minflt(10)
        # cminflt(11) majflt(12) cmajflt(13) utime(14) stime(15) cutime(16) cstime(17) … (22).
        if len(rest) < 18:
            continue
        numbers = [int(x) for x in rest]
        utime, stime, cutime, cstime = numbers[9], numbers[10], numbers[11], numbers[12]
        pid = int(match.group(1))
        procs[pid] = Proc(
            pid=pid,
            comm=match.group(2),
            ppid=int(match.group(4)),
            ticks=utime + stime + max(cutime, 0) + max(cstime, 0),
            own_ticks=utime + stime,
            start=numbers[17],
        )
    return procs


def read_snapshot(path: Path) -> Snapshot | None:
    text = read_regular(path)
    if text is None:
        return None
    snap = Snapshot()
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        if key == "taken_at":
            snap.taken_at = _float(value)
        elif key == "uptime":
            snap.uptime = _float(value.split()[0]) if value.split() else None
        elif key == "loadavg":
            parts = [_float(v) for v in value.split()[:3]]
            snap.loadavg = parts if len(parts) == 3 and None not in parts else None  # type: ignore[assignment]
        elif key == "clk_tck" and value.strip().isdigit() and int(value) > 0:
            snap.clk_tck = int(value)
        elif key == "stat":
            fields = value.split()
            if fields and fields[0] == "cpu" and all(f.isdigit() for f in fields[1:]):
                snap.cpu = [int(f) for f in fields[1:]]
            elif fields and re.fullmatch(r"cpu\d+", fields[0]):
                snap.cpus += 1
        elif key == "root":
            name, _, pid = value.partition("\t")
            if pid.strip().isdigit():
                snap.roots[name] = int(pid)
        elif key == "affinity":
            name, _, cpus = value.partition("\t")
            snap.affinity[name] = cpus.strip()
    snap.procs = parse_procs(read_regular(path.with_name(path.name + ".procs")) or "")
    return snap


def _tree(procs: dict[int, Proc], roots: set[int]) -> set[int]:
    """``roots`` and every descendant of them present in ``procs``."""
    children: dict[int, list[int]] = {}
    for proc in procs.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found, todo = set(), [r for r in roots if r in procs]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


def _classes(snap: Snapshot) -> tuple[set[int], set[int]]:
    """(the bench's own processes, kernel threads) of one snapshot."""
    bench = _tree(snap.procs, set(snap.roots.values()))
    kernel = _tree(snap.procs, {KTHREADD}) - bench
    return bench, kernel


def _heaviest(
    before: Snapshot, after: Snapshot, others_b: set[int], others_a: set[int]
) -> list[tuple[int, str, int]]:
    """(ticks during the trial, name, pid) of the other processes, heaviest first. A process
    that ended during the trial was reaped by its parent, whose cutime took in its whole life:
    what it had used before the trial is taken off the parent again."""
    used: dict[int, int] = {}
    for pid in others_a:
        proc, old = after.procs[pid], before.procs.get(pid)
        same = old is not None and old.start == proc.start
        used[pid] = proc.ticks - (old.ticks if same and old else 0)
    for pid in others_b:
        old = before.procs[pid]
        now = after.procs.get(pid)
        if now is not None and now.start == old.start:
            continue
        # Its CPU ended up in the cutime of the nearest ancestor still running (a parent that
        # ended too was reaped by its own parent, with everything it had reaped).
        ancestor, seen = old.ppid, set()
        while ancestor not in used and ancestor in before.procs and ancestor not in seen:
            seen.add(ancestor)
            ancestor = before.procs[ancestor].ppid
        if ancestor in used:
            used[ancestor] -= old.ticks
    top = [(ticks, after.procs[pid].comm, pid) for pid, ticks in used.items() if ticks > 0]
    top.sort(reverse=True)
    return top


def _root_ticks(snap: Snapshot, name: str, tree: bool) -> tuple[int, int] | None:
    """(start time, ticks) of the root ``name`` — its whole tree's when ``tree``, else its own
    and those of the pgbench processes under it — or None."""
    pid = snap.roots.get(name)
    if pid is None or pid not in snap.procs:
        return None
    pids = _tree(snap.procs, {pid})
    if not tree:
        pids = {pid} | {p for p in pids if snap.procs[p].comm == "pgbench"}
    return snap.procs[pid].start, sum(snap.procs[p].ticks for p in pids)


def _server_and_client(
    before: Snapshot, after: Snapshot, hz: int
) -> tuple[float | None, float | None]:
    """CPU seconds of the server (the postmaster's tree: every backend, and through the
    postmaster's cutime those that ended during the trial) and of the client (the bench's
    shell and the pgbench under it: pgbench ran as the shell's child and was reaped before the
    second snapshot, so its CPU is in the shell's cutime; the progress watcher, still
    running, is left out).
    None for a side that is not in both snapshots (a server on another host, a restarted one)."""

    def delta(name: str, tree: bool) -> float | None:
        old, new = _root_ticks(before, name, tree), _root_ticks(after, name, tree)
        if old is None or new is None or old[0] != new[0]:
            return None
        return max(0, new[1] - old[1]) / hz

    return delta("server", True), delta("bench", False)


def cpu_list(text: str | None) -> set[int] | None:
    """``0-3,6`` → {0, 1, 2, 3, 6}; None when it does not read."""
    if not text:
        return None
    cpus: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not match:
            return None
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if high < low or high - low > 65536:
            return None
        cpus.update(range(low, high + 1))
    return cpus


def _share(value: float, limit: int = 4) -> float:
    return round(value, limit)


def machine_load(trial: Path, info: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The ``machine_load`` section of a trial, or None when its snapshots are missing (a
    folder from a harness that did not take them)."""
    before = read_snapshot(trial / "quiet-before.tsv")
    after = read_snapshot(trial / "quiet-after.tsv")
    if before is None or after is None:
        return None
    info = info or {}
    wall = None
    if before.uptime is not None and after.uptime is not None:
        wall = after.uptime - before.uptime
    elif before.taken_at is not None and after.taken_at is not None:
        wall = after.taken_at - before.taken_at
    if wall is not None and wall <= 0:
        wall = None
    hz = after.clk_tck or 100

    def total(snap: Snapshot, pids: set[int]) -> int:
        return sum(snap.procs[p].ticks for p in pids)

    bench_b, kernel_b = _classes(before)
    bench_a, kernel_a = _classes(after)
    others_b = set(before.procs) - bench_b - kernel_b
    others_a = set(after.procs) - bench_a - kernel_a
    other_s = max(0, total(after, others_a) - total(before, others_b)) / hz
    kernel_s = max(0, total(after, kernel_a) - total(before, kernel_b)) / hz
    bench_s = max(0, total(after, bench_a) - total(before, bench_b)) / hz
    server_s, client_s = _server_and_client(before, after, hz)

    top = _heaviest(before, after, others_b, others_a)

    steal_pct = busy_pct = None
    if before.cpu and after.cpu and len(before.cpu) >= 8 and len(after.cpu) >= 8:
        # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
        # already counted in user and nice.
        delta = [a - b for a, b in zip(after.cpu[:8], before.cpu[:8], strict=False)]
        all_ticks = sum(delta)
        if all_ticks > 0:
            steal_pct = _share(100 * delta[7] / all_ticks, 2)
            busy_pct = _share(100 * (all_ticks - delta[3] - delta[4]) / all_ticks, 2)

    server_known = "server" in after.roots
    server_here = info.get("server_is_local", "yes") == "yes"
    client_cpus = cpu_list(after.affinity.get("bench"))
    server_cpus = cpu_list(after.affinity.get("server"))
    shared = None
    if server_known and client_cpus is not None and server_cpus is not None:
        shared = bool(client_cpus & server_cpus)
    elif not server_here:
        shared = False

    share = _share(other_s / wall) if wall else None
    reasons = []
    judged = wall is not None and (server_known or not server_here)
    if judged and share is not None and share > OTHER_CORE_SHARE_LIMIT:
        names = ", ".join(
            f"{comm} ({used / hz:.1f} s)" for used, comm, _ in top[:TOP_OTHERS] if used >= hz / 20
        )
        reasons.append(
            f"other processes used {share:.0%} of one core (limit {OTHER_CORE_SHARE_LIMIT:.0%})"
            + (f": {names}" if names else "")
        )
    if steal_pct is not None and steal_pct > STEAL_PCT_LIMIT:
        reasons.append(f"steal was {steal_pct:g}% of CPU time (limit {STEAL_PCT_LIMIT:g}%)")
    if reasons:
        disturbed: bool | None = True
    elif judged:
        disturbed = False
    else:
        disturbed = None
        reasons.append(
            "the server's processes could not be told apart from others (an existing server "
            "on this host whose postmaster.pid the bench cannot read)"
            if wall is not None
            else "the snapshots carry no usable clock"
        )
    return {
        "interval_s": _share(wall, 3) if wall is not None else None,
        "cpus": after.cpus or None,
        "other_processes": {
            "cpu_s": _share(other_s, 3),
            "core_share": share,
            "top": [
                {"command": comm, "cpu_s": _share(used / hz, 3)}
                for used, comm, _ in top[:TOP_OTHERS]
            ],
        },
        "bench_cpu_s": _share(bench_s, 3),
        "server_cpu_s": _share(server_s, 3) if server_s is not None else None,
        "client_cpu_s": _share(client_s, 3) if client_s is not None else None,
        "kernel_threads_cpu_s": _share(kernel_s, 3),
        "machine_busy_pct": busy_pct,
        "steal_pct": steal_pct,
        "load_average_before": before.loadavg,
        "load_average_after": after.loadavg,
        "client_cpus": after.affinity.get("bench") or None,
        "server_cpus": after.affinity.get("server") or None,
        "shared_cores": shared,
        "limits": {
            "other_core_share": OTHER_CORE_SHARE_LIMIT,
            "steal_pct": STEAL_PCT_LIMIT,
        },
        "disturbed": disturbed,
        "reasons": reasons,
    }


def describe(load: dict[str, Any] | None) -> str | None:
    """One line for the bench's progress output: what else used the machine during a trial."""
    if not isinstance(load, dict):
        return None
    other = (load.get("other_processes") or {}).get("core_share")
    parts = []
    if isinstance(other, int | float):
        parts.append(f"other processes used {other:.0%} of a core during this trial")
    steal = load.get("steal_pct")
    if isinstance(steal, int | float) and steal > 0:
        parts.append(f"steal {steal:g}%")
    verdict = load.get("disturbed")
    if verdict is True:
        parts.append("DISTURBED: " + "; ".join(load.get("reasons") or []))
    elif verdict is False:
        parts.append("quiet")
    else:
        parts.append("not judged")
    return ", ".join(parts)
