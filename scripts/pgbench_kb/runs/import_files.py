"""What ``kb import`` writes besides the run's figures: its id and place, the contributor's
name, and a draft hardware note for a new machine.
"""

from __future__ import annotations

import contextlib
import getpass
import re
import subprocess
from pathlib import Path
from typing import Any

from pgbench_kb.numbers import ms
from pgbench_kb.runs.runfile import dump_yaml


def _timestamp_of(recorded_at: Any) -> str:
    """``20261122T001500Z`` (or ``20060601`` for a date) from an ISO date or time."""
    text = str(recorded_at)
    digits = re.sub(r"[^0-9T]", "", text.replace(" ", "T"))
    return digits[:15] + ("Z" if len(digits) >= 15 else "")


def run_id(run: dict[str, Any], raw_hash: str) -> str:
    bench = run["benchmark"]
    parts = [
        _timestamp_of(run["provenance"]["recorded_at"]),
        run["machine"],
        (bench["workload"]["name"] or "custom")[:40],
        f"s{bench['scale']}" if bench["scale"] is not None else None,
        f"c{bench['clients']}" if bench["clients"] is not None else None,
        raw_hash[:8],
    ]
    slug = "-".join(str(p) for p in parts if p)
    return re.sub(r"[^A-Za-z0-9]+", "-", slug).strip("-")


def _year_month(recorded_at: Any) -> tuple[str, str]:
    match = re.match(r"(\d{4})(?:-(\d{2}))?", str(recorded_at))
    if not match:
        return "undated", "00"
    return match.group(1), match.group(2) or "00"


def draft_disks(storage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The disks of the data volume and of a WAL volume of its own, each with its roles
    (``[data, wal]`` when the WAL is with the data), as far as the run knows them."""
    storage = storage or {}
    data = (storage.get("data") or {}).get("array") or {}
    wal = storage.get("wal") or {}
    disks = []
    if data:
        together = wal.get("placement") in (None, "with-data")
        disks.append(
            {
                "count": data.get("disks") or 1,
                "media": data.get("media"),
                "rpm": data.get("rpm"),
                "roles": ["data", "wal"] if together else ["data"],
            }
        )
    wal_array = wal.get("array") or {}
    if wal_array and wal.get("placement") not in (None, "with-data"):
        disks.append(
            {
                "count": wal_array.get("disks") or 1,
                "media": wal_array.get("media"),
                "rpm": wal_array.get("rpm"),
                "roles": ["wal"],
            }
        )
    return disks


def flush_sentence(flush: dict[str, Any] | None) -> str | None:
    """One sentence for a drafted hardware note: the WAL flush the bench harness measured on
    this machine (``storage.flush``), or None when it measured none."""
    if not isinstance(flush, dict) or flush.get("unavailable"):
        return None
    wal = flush.get("wal") or {}
    sync, median = wal.get("sync_method_ms"), wal.get("write_flush_8k_ms")
    if sync is None and median is None:
        return None
    parts = []
    if sync is not None:
        parts.append(
            f"pg_test_fsync timed one 8 kB write with {flush.get('wal_sync_method')} at {ms(sync)}"
        )
    if median is not None:
        parts.append(f"an 8 kB write followed by fdatasync took {ms(median)} (median)")
    where = f" on {wal['device']}" if wal.get("device") else ""
    return (
        f"The bench harness measured the WAL flush{where} at {flush.get('measured_at')}: "
        + "; ".join(parts)
        + " (storage.flush in every run file of the session)."
    )


def draft_note(
    slug: str,
    server: dict[str, Any] | None,
    *,
    detected: bool = True,
    storage: dict[str, Any] | None = None,
) -> str:
    """A first hardware note for a machine that has none: from the facts the bench harness
    detected, or (``detected=False``, output imported by hand) from what was declared; its
    disks (with their roles: data, wal, os) from the run's storage."""
    server = server or {}
    cpu = server.get("cpu") or {}
    os_facts = server.get("os") or {}
    os_name = " ".join(
        str(v) for v in (os_facts.get("name"), os_facts.get("release")) if v is not None
    )
    front = {
        "schema_version": 1,
        "title": slug,
        "description": "Hardware note started by kb import; to be completed.",
        "roles": ["server"],
        "cpu": {
            "model": cpu.get("model"),
            "sockets": cpu.get("sockets"),
            "cores": cpu.get("cores"),
            "threads": cpu.get("threads"),
        },
        "ram": {"bytes": server.get("ram_bytes"), "type": None, "ecc": None},
        "disks": draft_disks(storage),
        "os": [os_name] if os_name else [],
        "described_from": "examined",
        "draft_note": True,
    }
    started = (
        "from what the bench harness could detect"
        if detected
        else "for output imported by hand: nothing about the machine was detected"
    )
    body = (
        f"This note was started by `kb import` {started}.\n"
        "Before you open a pull request, describe what the machine cannot tell about itself:\n"
        "the disks (media, rpm, RAID level), the controller and its write cache, whether the\n"
        "cache is battery-backed, and anything unusual about the setup; give each group of\n"
        "disks its roles (data, wal, os). Then remove `draft_note`.\n"
    )
    measured = flush_sentence((storage or {}).get("flush"))
    if measured:
        body += "\n" + measured + "\n"
    else:
        body += (
            "\nSay how long a commit flush takes on the WAL's device: run PostgreSQL's\n"
            "`pg_test_fsync` in a folder on that device and give its fdatasync line (one 8 kB\n"
            "write).\n"
        )
    return "---\n" + dump_yaml(front) + "---\n" + body


def contributor_name(root: Path) -> str | None:
    """Who is importing, when they did not say: ``git config user.name`` (the name their pull
    request will carry), else their login name, so a finished trial is never lost for want of
    a name."""
    name = git_user_name(root)
    if name is None:
        with contextlib.suppress(Exception):  # getpass raises whatever the platform gives
            name = getpass.getuser() or None
    return name


def git_user_name(root: Path) -> str | None:
    """``git config user.name`` as seen from ROOT (the contributor of a pull request), or None
    when git is missing or the name is not set."""
    try:
        done = subprocess.run(
            ["git", "config", "user.name"],
            cwd=root if root.is_dir() else None,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name = done.stdout.strip() if done.returncode == 0 else ""
    return name or None
