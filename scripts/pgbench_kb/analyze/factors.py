"""Which run-file fields are factors, which are incidental, which are ignored.

Every leaf of a run file has a dotted path (``storage.data.array.level``,
``postgres.settings.commit_delay``). ``kind_of`` sorts each path into one of four kinds:

* ``ignored``: identity, provenance bookkeeping and results (ids, hashes, notes, the command
  line that only restates other fields, the figures themselves);
* ``incidental``: things that may differ between two groups without making the comparison
  meaningless, but that must never hide (run length ``-t 500`` vs ``-t 1000``, pgbench's own
  version, the date, the source): they are listed as caveats (``differs_also``);
* ``machine``: what identifies the server and client hardware; two groups are compared across
  machines only when the machine is the factor;
* ``factor``: everything else, including any field a later schema adds (a difference in an
  unknown field keeps two groups apart rather than letting a comparison pretend they are alike).

``FAMILIES`` names the composite factors: fields that may change together in one comparison
(a storage layout, a set of settings, an OS with its filesystem...). A comparison is always
filed under the narrowest family that contains every field it differs in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

IGNORED_PREFIXES = (
    "schema_version",
    "id",
    "synthetic",
    "provenance",  # except the incidental fields below
    "repeat",
    "results",
    "server_stats",
    "raw",
    # the machine's other work during the run (read for ``disturbed``), never a factor
    "machine_load",
    "server.hostname",
    "client.hostname",
    "server.tuning.notes",
    "client.tuning.notes",
    "postgres.settings_profile",
    # the time zone of the server log's timestamps (the harness sets UTC)
    "postgres.settings.log_timezone",
    "postgres.database_size_bytes",
    "postgres.version_num",
    "benchmark.command",
    "benchmark.init_command",
    "storage.data.path",
    "storage.wal.path",
    "storage.data.device",
    "storage.wal.device",
    # the storage fingerprint: measured once per bench session, a fact about the machine's
    # devices that moves a little from session to session; only the emulated level is a factor
    "storage.flush.measured_at",
    "storage.flush.tool",
    "storage.flush.wal_sync_method",
    "storage.flush.wal",
    "storage.flush.data",
    "storage.flush.unavailable",
    "storage.flush.emulated.added_us",
    "storage.flush.emulated.measured_ms",
    "storage.flush.emulated.measured_write_flush_8k_ms",
    "storage.flush.emulated.tracer",
)

INCIDENTAL_PREFIXES = (
    "origin",
    "provenance.recorded_at",
    "provenance.source.title",
    "provenance.uncertain",
    "benchmark.transactions_per_client",
    "benchmark.duration_s",
    "benchmark.pgbench_version",
    "benchmark.progress_interval_s",
    "benchmark.other_flags",
    "benchmark.reset",
    "benchmark.warmup",
    "benchmark.vacuum",
)

MACHINE_PREFIXES = (
    "machine",
    "server.cpu",
    "server.ram_bytes",
    "client",
)


def _starts(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + ".") for p in prefixes)


@cache
def skipped(path: str) -> bool:
    """Whether nothing under ``path`` is read: it is ignored and holds no incidental field."""
    return kind_of(path) == "ignored" and not any(
        p.startswith(path + ".") for p in INCIDENTAL_PREFIXES
    )


@cache
def kind_of(path: str) -> str:
    """``ignored``, ``incidental``, ``machine`` or ``factor`` for a dotted run-file path."""
    if _starts(path, INCIDENTAL_PREFIXES):
        return "incidental"
    if _starts(path, IGNORED_PREFIXES):
        return "ignored"
    if _starts(path, MACHINE_PREFIXES):
        return "machine"
    return "factor"


@dataclass(frozen=True)
class Family:
    """A composite factor: fields that may change together in one comparison."""

    name: str
    label: str
    contains: Callable[[str], bool]


def _prefixed(*prefixes: str) -> Callable[[str], bool]:
    @cache
    def contains(path: str) -> bool:
        return _starts(path, prefixes)

    return contains


#: Narrowest first: a comparison is filed under the first family that holds all its fields.
FAMILIES: tuple[Family, ...] = (
    Family("os", "operating system", _prefixed("server.os")),
    Family("build", "PostgreSQL build", _prefixed("postgres.build")),
    Family(
        "version", "PostgreSQL version and build", _prefixed("postgres.version", "postgres.build")
    ),
    Family("workload", "workload", _prefixed("benchmark.workload")),
    Family("storage", "storage layout", _prefixed("storage")),
    Family("settings", "several settings", _prefixed("postgres.settings")),
    Family(
        "version+settings",
        "PostgreSQL version with its settings",
        _prefixed("postgres.version", "postgres.build", "postgres.settings"),
    ),
    Family("os+storage", "operating system and storage", _prefixed("server.os", "storage")),
    Family(
        "settings+storage",
        "settings and storage together",
        _prefixed("postgres.settings", "storage"),
    ),
)

#: Numeric single factors are compared between neighbouring values only (1→4→8 clients, not
#: 1→128): the curve over all values is the business of ``curves``.
#: Short names for the fields people read most; any other field is shown by its path.
LABELS = {
    "storage.data.array.level": "data array RAID level",
    "storage.data.array.disks": "data array disk count",
    "storage.data.array.rpm": "data disk speed (rpm)",
    "storage.data.array.media": "data disk media",
    "storage.data.array.disk_model": "data disk model or cloud volume",
    "storage.data.filesystem": "filesystem",
    "storage.data.journal_mode": "filesystem journal mode",
    "storage.wal.placement": "WAL placement",
    "storage.controller.write_cache": "controller write cache",
    "storage.controller.battery_backed": "controller battery",
    "storage.flush.emulated": "emulated flush latency",
    "storage.flush.emulated.target_ms": "emulated flush latency (ms)",
    "storage.flush.emulated.method": "flush emulation",
    "storage.flush.emulated.traced_only": "flush traced without delay",
    "server.os.name": "operating system",
    "server.os.kernel": "kernel",
    "postgres.version": "PostgreSQL version",
    "postgres.build.patches": "patches",
    "benchmark.workload.name": "workload",
    "benchmark.scale": "scale",
    "benchmark.clients": "clients",
    "benchmark.threads": "threads",
    "benchmark.query_mode": "query mode",
    "benchmark.transactions_per_client": "transactions per client (-t)",
    "benchmark.duration_s": "duration (-T)",
    "benchmark.pgbench_version": "pgbench version",
    "provenance.recorded_at": "date",
    "repeat.session": "bench session",
    "provenance.source.title": "source",
    "provenance.uncertain": "fields the source leaves uncertain",
    "origin": "origin",
    "machine": "machine",
}


def label(path: str) -> str:
    """A short readable name for a field: ``commit_delay`` for a setting, a label, or the path."""
    if path in LABELS:
        return LABELS[path]
    if path.startswith("postgres.settings."):
        return path.removeprefix("postgres.settings.")
    return path


def family_of(fields: frozenset[str]) -> Family | None:
    """The narrowest family holding every field, or None (then it is no comparison)."""
    for family in FAMILIES:
        if all(family.contains(f) for f in fields):
            return family
    return None


_VERSION = re.compile(r"^(\d+(?:\.\d+)*)(?:(devel)|(alpha|beta|rc)(\d*))?$")
#: A development build or a pre-release comes before the release of its major version.
_PRE_RELEASE = {"devel": -4, "alpha": -3, "beta": -2, "rc": -1}


def release_order(value: Any) -> tuple[int, ...] | None:
    """A PostgreSQL version as a sortable tuple: ``9.5.25`` → (9, 5, 25), ``18devel`` →
    (18, -4), ``17beta2`` → (17, -2, 2); None for anything else (a bare number is not taken
    for a version: ``8`` could be anything)."""
    if not isinstance(value, str):
        return None
    found = _VERSION.match(value)
    if not found or ("." not in value and found.group(2) is None and found.group(3) is None):
        return None
    numbers = tuple(int(p) for p in found.group(1).split("."))
    if found.group(2):
        return (*numbers, _PRE_RELEASE["devel"])
    if found.group(3):
        return (*numbers, _PRE_RELEASE[found.group(3)], int(found.group(4) or 0))
    return numbers
