"""What ``scripts/lib/sampler.sh`` recorded during a trial → ``results.os_series`` and
``results.wait_events`` (docs/harness.md, "The machine and the backends, second by second").

The raw files stay in the trial folder; only these compact summaries reach the run file:

- ``os.raw``: every second a ``t`` line (the sampler's clock), the aggregate ``cpu`` line of
  /proc/stat and the /proc/diskstats line of each sampled whole device. Consecutive samples give
  per-second rates; each is labelled with the second of the trial it ends in (rounded to the
  nearest second from pgbench's start, as ``results.progress.t_s`` is).
- ``waits.raw``: psql's lines, ``backend<TAB>PID`` then one ``w<TAB>epoch<TAB>n<TAB>list`` per
  sampling instant, ``list`` the ``type/event`` of each pgbench backend (``-`` for none).
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

from pgbench_kb.bench import facts

# Samples closer together than this (the sampler's last one, taken as it stops) are not a
# second of their own.
MIN_INTERVAL_S = 0.5
# A sampled raw file larger than this is not what the sampler writes (a day of samples of 16
# devices is about 12 MB; the wait sampler's lines of 64 clients about 30 MB an hour).
MAX_RAW_BYTES = 64 * 1024 * 1024


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_RAW_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _window(info: dict[str, str]) -> tuple[float, float] | None:
    """pgbench's start and end (epoch seconds), from the harness's millisecond stamps."""
    start = facts.int_or_none(info.get("pgbench_started_ms"))
    end = facts.int_or_none(info.get("pgbench_ended_ms"))
    if start is None or end is None or end < start:
        return None
    return start / 1000, end / 1000


def _samples(text: str) -> list[tuple[float, list[int], dict[str, list[int]]]]:
    """(time, cpu fields, {device: diskstats fields}) per complete sample, in order."""
    samples: list[tuple[float, list[int], dict[str, list[int]]]] = []
    current: tuple[float, list[int], dict[str, list[int]]] | None = None
    for line in text.splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "t":
            if current is not None and current[1]:
                samples.append(current)
            try:
                current = (float(rest.replace(",", ".")), [], {})
            except ValueError:
                current = None
        elif current is None:
            continue
        elif kind == "cpu":
            fields = rest.split()
            if fields and fields[0] == "cpu" and all(f.isdigit() for f in fields[1:]):
                current[1].extend(int(f) for f in fields[1:])
        elif kind == "disk":
            name, *fields = rest.split()
            if len(fields) >= 8 and all(f.isdigit() for f in fields):
                current[2][name] = [int(f) for f in fields]
    if current is not None and current[1]:
        samples.append(current)
    return samples


def _cpu_pct(before: list[int], after: list[int]) -> dict[str, float] | None:
    """Shares of all CPUs' time between two /proc/stat cpu lines (user includes nice, system
    includes irq and softirq; guest time is inside user already)."""
    if len(before) < 8 or len(after) < 8:
        return None
    d = [max(0, a - b) for a, b in zip(after[:8], before[:8], strict=True)]
    total = sum(d)
    if total <= 0:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = d
    return {
        "user": round(100 * (user + nice) / total, 1),
        "system": round(100 * (system + irq + softirq) / total, 1),
        "iowait": round(100 * iowait / total, 1),
        "steal": round(100 * steal / total, 1),
        "idle": round(100 * idle / total, 1),
    }


def _disk(before: list[int], after: list[int], seconds: float) -> dict[str, float | None]:
    """Per-second reads, writes, kB read and written, and the average wait of an I/O (ms)."""
    d = [max(0, a - b) for a, b in zip(after[:8], before[:8], strict=True)]
    reads, _, sectors_read, ms_reading, writes, _, sectors_written, ms_writing = d
    ios = reads + writes
    return {
        "reads": round(reads / seconds, 1),
        "writes": round(writes / seconds, 1),
        "read_kb": round(sectors_read / 2 / seconds, 1),
        "write_kb": round(sectors_written / 2 / seconds, 1),
        "await_ms": round((ms_reading + ms_writing) / ios, 3) if ios else None,
    }


def os_series(trial: Path, info: dict[str, str]) -> list[dict[str, Any]] | None:
    """``results.os_series`` (one host: the server's, or the client's when the server is on
    another host and could not be sampled), or None when nothing was sampled."""
    if info.get("samplers") != "on":
        return None
    window = _window(info)
    text = _read(trial / "os.raw")
    if window is None or text is None:
        return None
    start, end = window
    last = round(end - start)
    samples = _samples(text)
    t_s: list[int] = []
    cpu: dict[str, list[float | None]] = {
        k: [] for k in ("user", "system", "iowait", "steal", "idle")
    }
    names = [n for n in (info.get("sampler_devices") or "").split() if n]
    disks: dict[str, dict[str, list[float | None]]] = {
        n: {k: [] for k in ("reads", "writes", "read_kb", "write_kb", "await_ms")} for n in names
    }
    for (t0, cpu0, disk0), (t1, cpu1, disk1) in itertools.pairwise(samples):
        seconds = t1 - t0
        label = round(t1 - start)
        if seconds < MIN_INTERVAL_S or not 1 <= label <= last or (t_s and label <= t_s[-1]):
            continue
        shares = _cpu_pct(cpu0, cpu1)
        t_s.append(label)
        for key, values in cpu.items():
            values.append(shares[key] if shares else None)
        for name, series in disks.items():
            if name in disk0 and name in disk1:
                figures: dict[str, float | None] = _disk(disk0[name], disk1[name], seconds)
            else:
                figures = dict.fromkeys(series)
            for key, values in series.items():
                values.append(figures[key])
    if not t_s:
        return None
    host = "server" if info.get("client_is_server", "yes") == "yes" else "client"
    return [
        {
            "host": host,
            "interval_s": 1,
            "t_s": t_s,
            "cpu_pct": cpu,
            "devices": [{"name": name, **series} for name, series in disks.items()],
        }
    ]


def _version_text(version_num: int | None) -> str:
    if version_num is None:
        return "this server"
    major = version_num // 10000
    if major >= 10:
        return f"PostgreSQL {major}"
    return f"PostgreSQL {major}.{version_num // 100 % 100}"


def wait_events(
    trial: Path, info: dict[str, str], version_num: int | None
) -> dict[str, Any] | None:
    """``results.wait_events``, or None when the samplers were off (or an older harness)."""
    if info.get("samplers") != "on":
        return None
    empty: dict[str, Any] = {
        "hz": None, "instants": None, "backend_samples": None, "events": None, "unavailable": None,
    }  # fmt: skip
    state = info.get("wait_sampler")
    if state == "unavailable-version":
        empty["unavailable"] = f"{_version_text(version_num)} has no wait events (they came in 9.6)"
        return empty
    if state == "unavailable-psql":
        empty["unavailable"] = "the psql at hand is older than 9.6 (no fractional \\watch)"
        return empty
    window = _window(info)
    text = _read(trial / "waits.raw")
    instants = 0
    counts: Counter[tuple[str | None, str | None]] = Counter()
    backends = 0
    if window is not None and text is not None:
        start, end = window
        for line in text.splitlines():
            fields = line.split("\t")
            if len(fields) != 4 or fields[0] != "w":
                continue
            try:
                at = float(fields[1])
                seen = int(fields[2])
            except ValueError:
                continue
            if not start <= at <= end:
                continue
            instants += 1
            backends += seen
            for item in fields[3].split(",") if fields[3] else []:
                kind, _, event = item.partition("/")
                counts[(None if kind == "-" else kind, None if event in {"-", ""} else event)] += 1
    if not instants or window is None:
        err = (facts.read_regular(trial / "waits.err") or "").strip().splitlines()
        why = f": {err[-1][:160]}" if err else ""
        empty["unavailable"] = f"the wait sampler recorded no instant during pgbench{why}"
        return empty
    seconds = max(window[1] - window[0], 1e-3)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0] or "", kv[0][1] or ""))
    return {
        "hz": round(instants / seconds, 1),
        "instants": instants,
        "backend_samples": backends,
        "events": [{"type": t, "event": e, "count": n} for (t, e), n in ordered],
        "unavailable": None,
    }
