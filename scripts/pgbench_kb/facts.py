"""Interpret the raw facts that ``scripts/bench.sh`` recorded (command outputs, one file each)
into run-file sections. A fact whose file is missing or unreadable is ``None``, never guessed.

Layout of a trial folder (see scripts/bench.sh)::

    trial.tsv            key<TAB>value lines: profile, trial, group, repeat, scale, target, …
    command.argv         the exact pgbench argv, one argument per line
    pgbench.out          pgbench's stdout and stderr together, as a person would paste them
    database_size.txt    pg_database_size after the run
    facts/server/        lscpu.txt meminfo.txt os-release.txt uname.txt nproc.txt hostname.txt
                         thp.txt governor.txt mdstat.txt storage-N.path storage-N.findmnt
    facts/postgres/      version.txt version_num.txt pg_config-configure.txt settings.tsv
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_tsv_pairs(path: Path) -> dict[str, str]:
    text = _read(path) or ""
    pairs = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if sep:
            pairs[key] = value
    return pairs


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def cpu_facts(folder: Path) -> dict[str, Any] | None:
    text = _read(folder / "lscpu.txt")
    threads = _int_or_none(_read(folder / "nproc.txt"))
    if text is None and threads is None:
        return None
    fields: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    sockets = _int_or_none(fields.get("Socket(s)"))
    per_socket = _int_or_none(fields.get("Core(s) per socket"))
    cpus = _int_or_none(fields.get("CPU(s)"))
    mhz = fields.get("CPU max MHz") or fields.get("CPU MHz")
    return {
        "model": fields.get("Model name"),
        "sockets": sockets,
        "cores": sockets * per_socket if sockets and per_socket else None,
        "threads": cpus if cpus is not None else threads,
        "mhz": round(float(mhz)) if mhz and re.fullmatch(r"[0-9.]+", mhz) else None,
    }


def ram_bytes(folder: Path) -> int | None:
    match = re.search(r"^MemTotal:\s+(\d+) kB", _read(folder / "meminfo.txt") or "", re.M)
    return int(match.group(1)) * 1024 if match else None


def os_facts(folder: Path) -> dict[str, Any] | None:
    release = _read(folder / "os-release.txt")
    uname = (_read(folder / "uname.txt") or "").split()
    if release is None and not uname:
        return None
    values = {}
    for line in (release or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key] = value.strip().strip('"')
    return {
        "name": values.get("NAME") or (uname[0] if uname else None),
        "release": values.get("VERSION_ID"),
        "kernel": uname[1] if len(uname) > 1 else None,
    }


def _bracketed(text: str | None) -> str | None:
    """The selected value in sysfs's ``a [b] c`` notation, or the whole value."""
    if text is None:
        return None
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else (text.strip() or None)


def storage_facts(folder: Path, index: int) -> dict[str, Any] | None:
    path = _read(folder / f"storage-{index}.path")
    found = (_read(folder / f"storage-{index}.findmnt") or "").split()
    if path is None:
        return None
    return {
        "path": path.strip(),
        "device": found[0] if found else None,
        "filesystem": found[1] if len(found) > 1 else None,
        "mount_options": found[2] if len(found) > 2 else None,
    }


def host_facts(folder: Path, *, mask_hostname: bool = False) -> dict[str, Any]:
    hostname = (_read(folder / "hostname.txt") or "").strip() or None
    return {
        "hostname": None if mask_hostname else hostname,
        "cpu": cpu_facts(folder),
        "ram_bytes": ram_bytes(folder),
        "os": os_facts(folder),
        "tuning": {
            "cpu_governor": (_read(folder / "governor.txt") or "").strip() or None,
            "transparent_hugepages": _bracketed(_read(folder / "thp.txt")),
        },
    }


def postgres_facts(folder: Path) -> dict[str, Any]:
    version_text = _read(folder / "version.txt") or ""
    match = re.search(r"PostgreSQL (\d+(?:\.\d+)?(?:devel|beta\d+|rc\d+)?)", version_text)
    settings = {}
    for line in (_read(folder / "settings.tsv") or "").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3:
            name, value, unit = parts[0], parts[1], parts[2]
            settings[name] = f"{value}{unit}" if unit and unit not in {"s", "ms", "min"} else value
    configure = (_read(folder / "pg_config-configure.txt") or "").strip() or None
    return {
        "version": match.group(1) if match else None,
        "version_num": _int_or_none(_read(folder / "version_num.txt")),
        "build": {"configure": configure, "source": None},
        "settings": settings,
    }


def command_line(trial: Path) -> tuple[list[str], str | None]:
    """The argv as recorded, and a readable command line without paths to the binary."""
    text = _read(trial / "command.argv")
    if text is None:
        return [], None
    argv = text.splitlines()
    shown = ["pgbench", *argv[1:]] if argv else []
    return argv, shlex.join(shown)
