"""The spec table of each hardware note, written from its front matter for reading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.derive.setup_text import MEDIA_NAMES
from pgbench_kb.runs.check.content import read_front_matter
from pgbench_kb.runs.files import note_files


def _cpu(cpu: dict[str, Any]) -> str | None:
    parts = [
        cpu.get("model"),
        fmt.count(cpu.get("sockets"), "socket"),
        fmt.count(cpu.get("cores"), "core"),
        fmt.count(cpu.get("threads"), "thread"),
        f"{fmt.figure(cpu['mhz'])} MHz" if cpu.get("mhz") else None,
        cpu.get("cache"),
    ]
    return ", ".join(str(p) for p in parts if p) or None


def _disk(disk: dict[str, Any]) -> str:
    media = MEDIA_NAMES.get(disk.get("media") or "", disk.get("media") or "disk")
    parts = [
        f"{disk['count']}×" if disk.get("count") else None,
        fmt.size(disk.get("size_bytes")),
        media,
        f"{fmt.figure(disk['rpm'])} rpm" if disk.get("rpm") else None,
        # the model (a cloud volume's type: gp3, io2) and the interface, as "(gp3)", "(sata)"
        "({})".format(", ".join(str(disk[k]) for k in ("model", "interface") if disk.get(k)))
        if disk.get("model") or disk.get("interface")
        else None,
        _roles(disk.get("roles")),
    ]
    return " ".join(str(p) for p in parts if p)


ROLE_NAMES = {"data": "data", "wal": "WAL", "os": "operating system", "other": "other"}


def _roles(roles: Any) -> str | None:
    """``for data, WAL`` from a disk group's roles (what it holds), or None when not said."""
    if not isinstance(roles, list) or not roles:
        return None
    return "for " + ", ".join(ROLE_NAMES.get(str(r), str(r)) for r in roles)


def spec_rows(front: dict[str, Any]) -> list[dict[str, str]]:
    """Label/value rows for a note's spec table, in reading order; unknown parts left out."""
    ram = front.get("ram") or {}
    memory = " ".join(
        p
        for p in (
            fmt.size(ram.get("bytes")),
            ram.get("type"),
            "ECC" if ram.get("ecc") else None,
        )
        if p
    )
    controllers = [
        ", ".join(
            p
            for p in (
                c.get("model"),
                f"{fmt.size(c['cache_bytes'])} cache" if c.get("cache_bytes") else None,
                "battery-backed cache" if c.get("battery_backed") else None,
            )
            if p
        )
        for c in front.get("controllers") or []
        if isinstance(c, dict)
    ]
    networks = [
        " ".join(str(p) for p in (n.get("model"), n.get("speed")) if p)
        for n in front.get("network") or []
        if isinstance(n, dict)
    ]
    rows = [
        ("System", front.get("system")),
        ("Virtual machine", "yes" if front.get("virtual") else None),
        ("Processors", _cpu(front.get("cpu") or {})),
        ("Memory", memory or None),
        ("Disks", "; ".join(_disk(d) for d in front.get("disks") or [] if isinstance(d, dict))),
        ("Controllers", "; ".join(c for c in controllers if c)),
        ("Network", "; ".join(n for n in networks if n)),
        ("Operating system", "; ".join(str(o) for o in front.get("os") or [])),
        ("Role", ", ".join(str(r) for r in front.get("roles") or [])),
        ("Described from", front.get("described_from")),
    ]
    return [{"label": label, "value": str(value)} for label, value in rows if value]


def flush_lines(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Machine → what its runs' storage fingerprints (``storage.flush``, in each run's
    ``evidence``) measured of its WAL flush: one line per device and sync method, over the
    bench sessions that measured it. Machines whose runs recorded none are left out: their
    pages say nothing of a flush rather than something not measured."""
    sessions: dict[str, dict[tuple, dict[str, float]]] = {}
    for row in rows:
        flush = (row.get("evidence") or {}).get("flush")
        if not flush or not row.get("machine"):
            continue
        key = (flush.get("device"), flush.get("tool"), flush.get("method"), flush.get("how"))
        measured = sessions.setdefault(str(row["machine"]), {}).setdefault(key, {})
        # One fingerprint per bench session, copied into each of its runs: counted once.
        measured[str(flush.get("measured_at") or row.get("recorded_at"))] = flush["ms"]
    found = {}
    for machine, kinds in sorted(sessions.items()):
        lines = []
        for (device, tool, method, how), by_session in sorted(kinds.items(), key=str):
            values = sorted(by_session.values())
            low, high = fmt.ms(values[0]), fmt.ms(values[-1])
            figure = low if low == high else f"{fmt.figure(values[0])} to {high}"
            what = ", ".join(str(p) for p in (tool, method) if p) if how == "sync_method" \
                else "an 8 kB write and fdatasync"  # fmt: skip
            days = sorted({when[:10] for when in by_session})
            when = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
            where = device or "the WAL directory's device"
            lines.append(
                f"WAL flush {figure} ({what}) on {where}: "
                f"{fmt.count(len(values), 'bench session')}, {when}"
            )
        found[machine] = lines
    return found


def specs(root: Path) -> dict[str, list[dict[str, str]]]:
    """Slug → spec rows, for every note in ``content/hardware``."""
    found = {}
    for note in note_files(root):
        front = read_front_matter(note.read_text(encoding="utf-8"), str(note))
        found[note.stem] = spec_rows(front)
    return found
