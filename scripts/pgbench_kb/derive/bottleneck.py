"""What the machine and the server were doing during a run, and what that suggests.

Three records say it (all optional: older run files and transcribed runs have none of them):

- ``results.wait_events``: what the benchmark's backends waited on, sampled from
  ``pg_stat_activity`` many times a second (counts per wait event; a null event is a backend
  active, not waiting: on CPU);
- ``results.os_series``: the host's CPU and disks, second by second (``os_chart`` draws it);
- ``storage.flush``: the storage fingerprint, the flush latency of the devices under the data
  and WAL directories, measured once per bench session.

Here they are read (tolerant of absent, null or malformed parts: a reader shows less, never
fails), shortened to a run's ``evidence`` (a few numbers kept in the run's row, so that a
configuration and a comparison can add up their runs'), and said: the wait profile of a run,
the flush line, a configuration's bottleneck sentence and how a comparison's waits changed.
The sentences say what was sampled at the same time as the throughput, never a proven cause;
their thresholds are stated in docs/comparisons.md ("What the runs were waiting on").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pgbench_kb import numbers as fmt

#: Wait events that are a commit's WAL flush: written, synced, or waited for while another
#: backend flushes (``WALWriteLock`` is its name before PostgreSQL 13).
FLUSH_EVENTS = frozenset(
    {
        ("IO", "WALSync"),
        ("IO", "WALWrite"),
        ("IO", "WALInitSync"),
        ("IO", "WALInitWrite"),
        ("LWLock", "WALWrite"),
        ("LWLock", "WALWriteLock"),
    }
)
#: Wait events that are reading table or index pages not in shared buffers.
READ_EVENTS = frozenset({("IO", "DataFileRead"), ("IO", "DataFilePrefetch")})

#: The kinds of sample a configuration's sentence weighs, in words.
KIND_WORDS = {
    "cpu": "active, not waiting (on CPU)",
    "flush": "waited on WAL writes and syncs",
    "reads": "waited on reading data files",
    "locks": "waited on locks",
    "client": "waited for pgbench's next command",
    "other": "waited on something else",
}
#: Short names of the kinds, for a comparison's lines.
KIND_NAMES = {
    "cpu": "Active (CPU)",
    "flush": "WAL sync waits",
    "reads": "Data file reads",
    "locks": "Lock waits",
    "client": "Waiting for pgbench",
    "other": "Other waits",
}
#: What a configuration's sentence calls it when that kind of wait stands out.
KIND_VERDICTS = {
    "flush": "waiting on commit flushes",
    "reads": "waiting on reads",
    "locks": "waiting on locks",
    "client": "waiting on the client",
    "other": "waiting on other events",
}

#: A kind of wait stands out when it holds at least this share of the backend samples and
#: more than any other kind of wait.
STANDS_OUT = 0.30
#: The host counts as CPU-bound evidence when its CPUs were on average at least this busy
#: (user and system, in percent of all CPUs) ...
CPU_BUSY_PCT = 90.0
#: ... and the backends waited (on anything but pgbench's next command) in less than this
#: share of their samples.
FEW_WAITS = 0.20
#: Fewer backend samples than this, and no sentence is written from them.
SAMPLES_NEEDED = 100
#: A comparison names a kind of sample when either side has at least this share of it.
CHANGE_SHOWN = 0.05


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _get(data: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def event_name(kind: Any, event: Any) -> str:
    """``IO:WALSync``; ``active (CPU)`` for a backend not waiting (both null)."""
    if kind is None and event is None:
        return "active (CPU)"
    return ":".join(str(p) for p in (kind, event) if p is not None)


def kind_of(name: str) -> str:
    """The kind of a sample (``cpu``, ``flush``, ``reads``, ``locks``, ``client``, ``other``)
    from its event name as ``event_name`` writes it."""
    if name == "active (CPU)":
        return "cpu"
    kind, _, event = name.partition(":")
    if (kind, event) in FLUSH_EVENTS:
        return "flush"
    if (kind, event) in READ_EVENTS:
        return "reads"
    if kind in {"Lock", "LWLock"}:
        return "locks"
    if kind == "Client":
        return "client"
    return "other"


def wait_counts(run: dict[str, Any]) -> dict[str, int]:
    """``results.wait_events.events`` as event name → count (the events' own order kept)."""
    counts: dict[str, int] = {}
    for item in _get(run, "results.wait_events.events") or []:
        if not isinstance(item, dict):
            continue
        count = item.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            continue
        name = event_name(item.get("type"), item.get("event"))
        counts[name] = counts.get(name, 0) + count
    return counts


def _samples(waits: dict[str, Any], counts: dict[str, int]) -> int:
    total = waits.get("backend_samples")
    if isinstance(total, int) and not isinstance(total, bool) and total >= sum(counts.values()):
        return total
    return sum(counts.values())


def wait_profile(run: dict[str, Any]) -> dict[str, Any]:
    """The run page's wait profile: each event's share of the backend samples (largest first)
    with how they were sampled, or ``missing``: why there is none."""
    waits = _get(run, "results.wait_events")
    if not isinstance(waits, dict):
        return {
            "missing": "Not sampled: this run file records no wait events (runs recorded "
            "before the harness sampled them, and runs transcribed from a publication, have "
            "none)."
        }
    if waits.get("unavailable"):
        return {"missing": f"Not recorded: {waits['unavailable']}."}
    counts = wait_counts(run)
    total = _samples(waits, counts)
    if not total:
        return {"missing": "Not recorded: no backend of the benchmark was seen while sampling."}
    rows = [
        {
            "event": name,
            "share": fmt.percent(count / total * 100) or "0%",
            "fraction": f"{count / total:.3f}",
            "count": fmt.figure(count),
        }
        for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    hz = fmt.figure(_number(waits.get("hz")))
    how = [f"{fmt.figure(total)} backend samples"]
    if isinstance(waits.get("instants"), int):
        how.append(f"at {fmt.count(waits['instants'], 'instant')}")
    if hz:
        how.append(f"{hz} times a second")
    return {"rows": rows, "how": "From " + ", ".join(how) + "."}


def flush_facts(run: dict[str, Any]) -> dict[str, Any] | None:
    """The WAL flush of ``storage.flush``, as a few plain values, or None when not recorded."""
    flush = _get(run, "storage.flush")
    if not isinstance(flush, dict):
        return None
    wal = flush.get("wal") if isinstance(flush.get("wal"), dict) else {}
    data = flush.get("data") if isinstance(flush.get("data"), dict) else {}
    ms = _number(wal.get("sync_method_ms"))
    if ms is None:
        ms = _number(wal.get("write_flush_8k_ms"))
    if ms is None:
        return None
    emulated = flush.get("emulated") if isinstance(flush.get("emulated"), dict) else None
    return {
        "ms": ms,
        "how": "sync_method" if _number(wal.get("sync_method_ms")) is not None else "8k",
        "tool": str(flush.get("tool") or "pg_test_fsync"),
        "method": flush.get("wal_sync_method"),
        "device": wal.get("device"),
        "data_device": data.get("device"),
        "data_ms": _number(data.get("sync_method_ms")),
        # When the fingerprint ran: one per bench session, so it tells sessions apart.
        "measured_at": str(flush.get("measured_at") or "") or None,
        "emulated_ms": _number((emulated or {}).get("target_ms")),
        "emulated_method": (emulated or {}).get("method"),
        "added_ms": (
            added / 1000 if (added := _number((emulated or {}).get("added_us"))) else None
        ),
        # pg_test_fsync under the tracer, as the server's flushes ran (the level reached).
        "emulated_measured_ms": _number((emulated or {}).get("measured_ms")),
        "traced_only": bool((emulated or {}).get("traced_only")),
    }


def flush_line(facts: dict[str, Any] | None) -> str | None:
    """``WAL flush 0.25 ms here (pg_test_fsync, fdatasync)``; with ``emulated: 2 ms`` first
    when the harness slowed every flush down on purpose (and the flush measured under it), or
    ``traced`` when the server ran under the tracer with no delay added."""
    if not facts:
        return None
    if facts["how"] == "sync_method":
        how = ", ".join(str(p) for p in (facts["tool"], facts["method"]) if p)
    else:
        how = "an 8 kB write and fdatasync"
    measured = f"{fmt.ms(facts['ms'])} ({how})"
    reached = facts.get("emulated_measured_ms")
    under = f"; {fmt.ms(reached)} measured under it" if reached is not None else ""
    by = f" by {facts['emulated_method']}" if facts["emulated_method"] else ""
    if facts["emulated_ms"] is not None:
        added = f", {fmt.ms(facts['added_ms'])} added to each" if facts["added_ms"] else ""
        return f"WAL flush emulated: {fmt.ms(facts['emulated_ms'])}{by}{added}{under}; the " \
            f"device itself: {measured}"  # fmt: skip
    if facts.get("traced_only"):
        return f"WAL flush traced{by} with no delay added{under}; the device itself: {measured}"
    line = f"WAL flush {fmt.ms(facts['ms'])} here ({how})"
    if (
        facts["data_ms"] is not None
        and facts["data_device"]
        and facts["data_device"] != facts["device"]
    ):
        line += f"; data directory's device {fmt.ms(facts['data_ms'])}"
    return line


def cpu_busy(run: dict[str, Any], host: str = "server") -> tuple[float, float, int] | None:
    """A host's CPUs over the trial (the server's, or pgbench's when it ran elsewhere): mean
    busy (user and system) and iowait, in percent of all its CPUs, and the number of seconds
    averaged; None when not recorded."""
    hosts = {host, None} if host == "server" else {host}
    for series in _get(run, "results.os_series") or []:
        if not isinstance(series, dict) or series.get("host") not in hosts:
            continue
        cpu = series.get("cpu_pct") if isinstance(series.get("cpu_pct"), dict) else {}
        busy, iowait = [], []
        for user, system, wait in zip(
            cpu.get("user") or [], cpu.get("system") or [], cpu.get("iowait") or [],
            strict=False,
        ):  # fmt: skip
            if (u := _number(user)) is not None and (s := _number(system)) is not None:
                busy.append(u + s)
                iowait.append(_number(wait) or 0.0)
        if busy:
            return sum(busy) / len(busy), sum(iowait) / len(iowait), len(busy)
    return None


def run_summary(run: dict[str, Any]) -> dict[str, Any] | None:
    """A run's evidence in a few numbers (kept in its row, added up by configurations and
    comparisons), or None when the run records none of it."""
    summary: dict[str, Any] = {}
    waits = _get(run, "results.wait_events")
    if isinstance(waits, dict):
        if waits.get("unavailable"):
            summary["waits_unavailable"] = str(waits["unavailable"])
        else:
            counts = wait_counts(run)
            if counts:
                summary["waits"] = counts
                summary["samples"] = _samples(waits, counts)
    if (cpu := cpu_busy(run)) is not None:
        summary["cpu_busy"], summary["iowait"], summary["cpu_s"] = cpu
        if _get(run, "client.same_as_server") is True:
            summary["same_host"] = True
    if (client := cpu_busy(run, "client")) is not None:
        summary["client_busy"], _, summary["client_s"] = client
    if (flush := flush_facts(run)) is not None:
        summary["flush"] = flush
    return summary or None


def combined(summaries: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The evidence of several runs (a configuration's repeats) added up: wait counts summed,
    CPU averaged over all their seconds; None when none of them has any."""
    waits: dict[str, int] = {}
    samples = runs = cpu_s = total = client_s = 0
    busy = iowait = client = 0.0
    same_host = True
    unavailable = None
    for summary in summaries:
        total += 1
        if not summary:
            continue
        runs += 1
        for name, count in (summary.get("waits") or {}).items():
            waits[name] = waits.get(name, 0) + count
        samples += summary.get("samples") or 0
        if summary.get("cpu_s"):
            cpu_s += summary["cpu_s"]
            busy += summary["cpu_busy"] * summary["cpu_s"]
            iowait += summary["iowait"] * summary["cpu_s"]
            same_host = same_host and summary.get("same_host") is True
        if summary.get("client_s"):
            client_s += summary["client_s"]
            client += summary["client_busy"] * summary["client_s"]
        unavailable = unavailable or summary.get("waits_unavailable")
    if not runs:
        return None
    out: dict[str, Any] = {"runs": runs, "of": total, "waits": waits, "samples": samples}
    if cpu_s:
        out |= {"cpu_busy": busy / cpu_s, "iowait": iowait / cpu_s, "same_host": same_host}
    if client_s:
        out["client_busy"] = client / client_s
    if unavailable and not waits:
        out["waits_unavailable"] = unavailable
    return out


def kind_shares(evidence: dict[str, Any]) -> dict[str, float]:
    """Share of the backend samples of each kind (``cpu``, ``flush``…), or {} when too few."""
    samples = evidence.get("samples") or 0
    if samples < SAMPLES_NEEDED:
        return {}
    shares: dict[str, float] = {}
    for name, count in (evidence.get("waits") or {}).items():
        kind = kind_of(name)
        shares[kind] = shares.get(kind, 0.0) + count / samples
    return shares


def _events_of(evidence: dict[str, Any], kind: str, listed: int = 3) -> str:
    """``IO:WALSync 35%, LWLock:WALWrite 6%``: the kind's largest events."""
    samples = evidence["samples"]
    events = sorted(
        ((n, c) for n, c in evidence["waits"].items() if kind_of(n) == kind),
        key=lambda item: (-item[1], item[0]),
    )
    return ", ".join(f"{n} {fmt.percent(c / samples * 100)}" for n, c in events[:listed])


def _cpu_words(evidence: dict[str, Any]) -> str | None:
    if evidence.get("cpu_busy") is None:
        return None
    where = "the server's host (pgbench's too)" if evidence.get("same_host") else \
        "the server's host"  # fmt: skip
    words = f"the CPUs of {where} were {fmt.percent(evidence['cpu_busy'])} busy (user and system)"
    if evidence.get("iowait", 0) >= 1:
        words += f" and {fmt.percent(evidence['iowait'])} waiting on I/O"
    if evidence.get("client_busy") is not None:
        words += f", those of pgbench's host {fmt.percent(evidence['client_busy'])}"
    return words


def _runs_words(evidence: dict[str, Any]) -> str:
    """``this run``, ``these runs``, or ``2 of its 3 runs`` when only some recorded it."""
    runs, of = evidence.get("runs") or 0, evidence.get("of") or 0
    if of > runs:
        return f"{runs} of its {fmt.count(of, 'run')} (the others recorded none of it)"
    return "this run" if runs == 1 else "these runs"


def sentence(evidence: dict[str, Any] | None) -> str | None:
    """A configuration's bottleneck sentence from its runs' evidence (``combined``): which
    kind of wait stood out, or that the CPUs were busy with few waits, in the words of what
    was sampled at the same time; None when too little was recorded to say anything."""
    if not evidence:
        return None
    shares = kind_shares(evidence)
    cpu = _cpu_words(evidence)
    runs = _runs_words(evidence)
    if not shares:
        if cpu is None:
            return None
        if evidence["cpu_busy"] >= CPU_BUSY_PCT:
            why = evidence.get("waits_unavailable") or "not sampled"
            return f"Evidence of being CPU-bound: during {runs}, {cpu} (wait events: {why})."
        return f"During {runs}, {cpu}; no wait events were sampled to say more."
    waits = {k: v for k, v in shares.items() if k not in {"cpu"}}
    top = max(waits, key=lambda k: (waits[k], k), default=None)
    tail = f"; {cpu}" if cpu else ""
    if top is not None and waits[top] >= STANDS_OUT and top in KIND_VERDICTS:
        return (
            f"Evidence of {KIND_VERDICTS[top]}: during {runs}, "
            f"{fmt.percent(waits[top] * 100)} of backend samples {KIND_WORDS[top]} "
            f"({_events_of(evidence, top)}){tail}."
        )
    server_waits = sum(v for k, v in waits.items() if k != "client")
    busy = evidence.get("cpu_busy")
    if busy is not None and busy >= CPU_BUSY_PCT and server_waits < FEW_WAITS:
        return (
            f"Evidence of being CPU-bound: during {runs}, {cpu}, and the backends waited on "
            f"the server in only {fmt.percent(server_waits * 100)} of their samples "
            f"(active on CPU in {fmt.percent(shares.get('cpu', 0.0) * 100)})."
        )
    return (
        f"No one kind of wait stands out: during {runs}, backends were active on CPU in "
        f"{fmt.percent(shares.get('cpu', 0.0) * 100)} of their samples and waited on the "
        f"server in {fmt.percent(server_waits * 100)}{tail}."
    )


def wait_change(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str] | None:
    """How the backends' samples changed from A to B, one line per kind either side has at
    least ``CHANGE_SHOWN`` of (``WAL sync waits 41% → 3% of samples``); None unless both sides
    sampled enough."""
    shares_a, shares_b = kind_shares(a or {}), kind_shares(b or {})
    if not shares_a or not shares_b:
        return None
    lines = []
    for kind in KIND_NAMES:
        share_a, share_b = shares_a.get(kind, 0.0), shares_b.get(kind, 0.0)
        if max(share_a, share_b) < CHANGE_SHOWN:
            continue
        lines.append(
            f"{KIND_NAMES[kind]} {fmt.percent(share_a * 100) or '0%'} → "
            f"{fmt.percent(share_b * 100) or '0%'} of samples"
        )
    return lines or None


def comparison_waits(
    comparison: dict[str, Any], evidence_of: dict[str, dict[str, Any] | None]
) -> dict[str, Any] | None:
    """What a comparison's page says of its sides' waits (``comparison/waits.html``): the
    lines of ``wait_change`` and how many samples each side has; None unless both sampled."""
    sides = [evidence_of.get(str((comparison.get(side) or {}).get("group"))) for side in ("a", "b")]
    lines = wait_change(*sides)
    if not lines:
        return None
    a, b = (side or {} for side in sides)
    return {
        "lines": lines,
        "from": f"Share of the benchmark's backend samples, A → B (A: "
        f"{fmt.figure(a.get('samples'))} samples from {fmt.count(a.get('runs'), 'run')}; B: "
        f"{fmt.figure(b.get('samples'))} from {fmt.count(b.get('runs'), 'run')}).",
    }


def run_view(run: dict[str, Any]) -> dict[str, Any]:
    """The run page's section (``run/why.html``): the wait profile, the flush line and the
    run's own bottleneck sentence (the OS chart is drawn by ``os_chart``)."""
    summary = run_summary(run)
    return {
        "waits": wait_profile(run),
        "flush": flush_line(flush_facts(run)),
        "sentence": sentence(combined([summary])),
    }
