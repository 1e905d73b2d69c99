"""Interpret the raw facts that ``scripts/bench.sh`` recorded (command output and copies of
system files, one file each) as run-file sections. A fact whose file is missing or unreadable is
``None``, never guessed.

Layout of a trial folder (written by scripts/bench.sh)::

    trial.tsv                 key<TAB>value: profile, trial, group, repeat, scale, target, reset,
                              settings_name, network, checkpoint, started_at, ended_at, …
    command.argv              the exact pgbench argv, one argument per line
    pgbench.out               pgbench's stdout and stderr together, as a person would paste them
    pgbench_log.*             the sampled per-transaction log (one file per thread)
    init.out, warmup.out      output of pgbench -i (reinit reset) and of the warm-up run
    scripts/                  the custom script files the trial ran
    server-log.txt            what the throwaway server logged while pgbench ran (its
                              checkpoints: ``serverlog``), with ``pgbench_started_ms`` in trial.tsv
    stats-before.tsv          counters before and after the trial: ``name<TAB>json`` lines for
    stats-after.tsv           pg_stat_bgwriter, pg_stat_checkpointer (17+), pg_stat_wal (14+),
                              pg_stat_database; ``wal_lsn<TAB>X/Y``; ``taken_at<TAB>epoch``
    database-size-init.txt    pg_database_size right after pgbench -i (bytes)
    database-size-after.txt   pg_database_size after the trial (bytes)
    facts/host/               the server's machine (and the client's when they are one):
                              lscpu.txt, proc_meminfo.txt, etc_os-release.txt, uname.txt,
                              nproc.txt, pagesize.txt, hostname.txt, proc_mdstat.txt,
                              sys_kernel_mm_transparent_hugepage_enabled.txt,
                              sys_devices_system_cpu_cpu0_cpufreq_scaling_governor.txt, and per
                              volume (data, wal): storage-L.path, storage-L.findmnt.json,
                              storage-L.{scheduler,read_ahead_kb,rotational,model,size,disk}.txt
    facts/client/             the client machine, when the server is elsewhere (same files)
    facts/postgres/           version.txt, version_num.txt, pg_config.tsv (the server's
                              pg_config view) or pg_config-configure.txt, settings.tsv
                              (name, setting, unit, source, vartype of every non-default
                              setting), pgbench-version.txt, target.txt
"""

from __future__ import annotations

import json
import math
import re
import shlex
from pathlib import Path
from typing import Any

from pgbench_kb.errors import RunImportError
from pgbench_kb.runs.build import (
    controller_skeleton,
    cpu_skeleton,
    host_skeleton,
    os_skeleton,
    volume_skeleton,
)

# Settings the harness sets to keep its throwaway server private: plumbing, not configuration.
HARNESS_SETTINGS = {"listen_addresses", "unix_socket_directories", "port"}
# Settings the harness gives its own server's log so that a trial can say when checkpoints ran
# (scripts/lib/server.sh): plumbing when they come from its command line; on an existing
# server, where they come from its configuration, they are what that server runs with.
HARNESS_LOG_SETTINGS = {"log_checkpoints", "log_timezone", "log_line_prefix"}
MEMORY_UNITS = {"B": 1, "kB": 1024, "8kB": 8192, "16kB": 16384, "32kB": 32768, "MB": 1024**2}


def read_regular(path: Path) -> str | None:
    """A regular file's text, or None (missing, not a regular file, unreadable)."""
    # Only regular files: a FIFO or a device in a hand-edited folder must not hang the import.
    try:
        if not path.is_file():
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _text(path: Path) -> str | None:
    text = read_regular(path)
    return text.strip() or None if text is not None else None


def read_tsv_pairs(path: Path) -> dict[str, str]:
    text = read_regular(path) or ""
    pairs = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if sep:
            pairs[key] = value
    return pairs


def int_or_none(text: str | None) -> int | None:
    """A whole number written in ASCII digits, or None (also for one too long to be a fact:
    Python refuses to read more than 4300 digits, and no counter or size has 30)."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if re.fullmatch(r"-?[0-9]{1,30}", text) else None


def float_or_none(text: str | None) -> float | None:
    """A finite decimal number, or None: never NaN or infinity."""
    if text is None or not re.fullmatch(r"-?[0-9]+(?:\.[0-9]*)?", text.strip()):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _load_json(text: str | None) -> Any:
    """JSON text as data, or None when it is not valid JSON. ``NaN`` and ``Infinity`` (which
    Python's json reads, though they are not JSON) are null; a number too large for a float
    (``1e400``) is still infinity, for the reader of each value to refuse."""
    if text is None:
        return None
    try:
        return json.loads(text, parse_constant=lambda _name: None)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None


# ---------------------------------------------------------------------------------------------
# the machine


def _lscpu(folder: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in (read_regular(folder / "lscpu.txt") or "").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def cpu_facts(folder: Path) -> dict[str, Any]:
    cpu = cpu_skeleton()
    fields = _lscpu(folder)
    threads = int_or_none(fields.get("CPU(s)")) or int_or_none(read_regular(folder / "nproc.txt"))
    sockets = int_or_none(fields.get("Socket(s)"))
    per_socket = int_or_none(fields.get("Core(s) per socket"))
    per_core = int_or_none(fields.get("Thread(s) per core"))
    mhz = fields.get("CPU max MHz") or fields.get("CPU MHz")
    model = fields.get("Model name")
    if model is None:
        match = re.search(
            r"^model name\s*:\s*(.+)$", read_regular(folder / "proc_cpuinfo.txt") or "", re.M
        )
        model = match.group(1).strip() if match else None
    cpu.update(
        {
            "model": model,
            "sockets": sockets,
            "cores": sockets * per_socket if sockets and per_socket else None,
            "threads": threads,
            "mhz": round(mhz_value) if (mhz_value := float_or_none(mhz)) is not None else None,
            "smt": per_core > 1 if per_core else None,
        }
    )
    return cpu


def ram_bytes(folder: Path) -> int | None:
    text = read_regular(folder / "proc_meminfo.txt") or read_regular(folder / "meminfo.txt") or ""
    match = re.search(r"^MemTotal:\s+([0-9]+) kB", text, re.M)
    kib = int_or_none(match.group(1)) if match else None
    return kib * 1024 if kib is not None else None


def os_facts(folder: Path) -> dict[str, Any]:
    facts = os_skeleton()
    release = read_regular(folder / "etc_os-release.txt") or read_regular(folder / "os-release.txt")
    uname = (read_regular(folder / "uname.txt") or "").split()
    values = {}
    for line in (release or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key] = value.strip().strip('"')
    facts.update(
        {
            "name": values.get("NAME") or (uname[0] if uname else None),
            "release": values.get("VERSION_ID"),
            "kernel": uname[1] if len(uname) > 1 else None,
            "page_size_bytes": int_or_none(read_regular(folder / "pagesize.txt")),
        }
    )
    return facts


def bracketed(text: str | None) -> str | None:
    """The selected value in sysfs's ``a [b] c`` notation, or the whole value."""
    if text is None:
        return None
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else (text.strip() or None)


def host_facts(folder: Path) -> dict[str, Any] | None:
    """The ``server`` section (or the host part of ``client``) from a facts folder."""
    if not folder.is_dir() or not any(folder.iterdir()):
        return None
    host = host_skeleton()
    host["hostname"] = _text(folder / "hostname.txt")
    host["cpu"] = cpu_facts(folder)
    host["ram_bytes"] = ram_bytes(folder)
    host["os"] = os_facts(folder)
    host["tuning"]["cpu_governor"] = _text(
        folder / "sys_devices_system_cpu_cpu0_cpufreq_scaling_governor.txt"
    ) or _text(folder / "governor.txt")
    host["tuning"]["transparent_hugepages"] = bracketed(
        read_regular(folder / "sys_kernel_mm_transparent_hugepage_enabled.txt")
        or read_regular(folder / "thp.txt")
    )
    return host


def mdstat_arrays(text: str | None) -> dict[str, dict[str, Any]]:
    """Software RAID arrays in /proc/mdstat: ``{"md0": {"level": "raid1", "disks": 2}}``."""
    arrays: dict[str, dict[str, Any]] = {}
    for line in (text or "").splitlines():
        match = re.match(r"^(md\d+)\s*:\s*active\s+(?:\([^)]*\)\s+)?(\w+)\s+(.*)$", line)
        if match:
            members = re.findall(r"(\w+)\[\d+\](?!\(S\))", match.group(3))
            arrays[match.group(1)] = {"level": match.group(2), "disks": len(members) or None}
    return arrays


def _findmnt(prefix: Path) -> dict[str, str]:
    """``source``, ``fstype`` and ``options`` of the volume's mount: those that are text. A file
    that is not findmnt's JSON (a corrupt or hand-edited one) gives nothing, never a guess."""
    keys = ("source", "fstype", "options")
    data = _load_json(read_regular(prefix.with_name(prefix.name + ".findmnt.json")))
    found = data.get("filesystems") if isinstance(data, dict) else None
    if isinstance(found, list) and found and isinstance(found[0], dict):
        return {key: found[0][key] for key in keys if isinstance(found[0].get(key), str)}
    # The skeleton's plain format: SOURCE FSTYPE OPTIONS
    parts = (read_regular(prefix.with_name(prefix.name + ".findmnt")) or "").split()
    return dict(zip(keys, parts, strict=False))


def _array_guess(disk: str | None, rotational: str | None, md: dict[str, Any] | None):
    """What the kernel can tell about the disks behind a volume; the rest is declared."""
    if md:
        return {
            "level": md["level"]
            if md["level"] in {"raid0", "raid1", "raid5", "raid6", "raid10"}
            else "other",
            "disks": md["disks"],
            "implementation": "mdraid",
        }
    if not disk:
        return None
    guess: dict[str, Any] = {}
    if disk.startswith("vd"):
        guess.update(media="virtual", interface="virtio")
    elif disk.startswith("nvme"):
        guess.update(media="nvme", interface="nvme")
    elif rotational is not None and rotational.strip() == "1":
        guess.update(media="hdd")
    elif rotational is not None and rotational.strip() == "0" and disk.startswith("sd"):
        guess.update(media="ssd")
    return guess or None


def storage_volume(folder: Path, label: str, mdstat: str | None) -> dict[str, Any] | None:
    prefix = folder / f"storage-{label}"
    path = _text(prefix.with_name(prefix.name + ".path"))
    if path is None:
        return None
    volume = volume_skeleton()
    mount = _findmnt(prefix)
    volume["path"] = path.rstrip("/") or "/"
    volume["device"] = mount.get("source")
    volume["filesystem"] = mount.get("fstype")
    options = mount.get("options")
    volume["mount_options"] = options
    if volume["filesystem"] in {"ext3", "ext4"} and options:
        match = re.search(r"(?:^|,)data=(ordered|writeback|journal)(?:,|$)", options)
        volume["journal_mode"] = match.group(1) if match else "ordered"
    volume["scheduler"] = bracketed(read_regular(prefix.with_name(prefix.name + ".scheduler.txt")))
    volume["read_ahead_kb"] = int_or_none(
        read_regular(prefix.with_name(prefix.name + ".read_ahead_kb.txt"))
    )
    disk = _text(prefix.with_name(prefix.name + ".disk.txt"))
    md = mdstat_arrays(mdstat).get(disk or "")
    guess = _array_guess(disk, read_regular(prefix.with_name(prefix.name + ".rotational.txt")), md)
    if guess:
        from pgbench_kb.runs.build import array_skeleton

        array = array_skeleton()
        array.update(guess)
        model = _text(prefix.with_name(prefix.name + ".model.txt"))
        if model and not md:
            array["disk_model"] = model
        sectors = int_or_none(read_regular(prefix.with_name(prefix.name + ".size.txt")))
        if sectors and not md:
            array["disk_size_bytes"] = sectors * 512
        if not md:
            array["level"], array["disks"] = "single", 1
        volume["array"] = array
    return volume


def storage_facts(folder: Path) -> dict[str, Any] | None:
    """``storage.data`` and ``storage.wal`` from the recorded volumes (controller: declared)."""
    mdstat = read_regular(folder / "proc_mdstat.txt")
    data = storage_volume(folder, "data", mdstat)
    wal = storage_volume(folder, "wal", mdstat)
    if data is None and wal is None:
        return None
    wal_section: dict[str, Any] = {"placement": None, **(wal or volume_skeleton())}
    if data and wal and wal.get("device"):
        if wal.get("filesystem") == "tmpfs":
            wal_section["placement"] = "tmpfs"
        elif data.get("device") == wal.get("device"):
            wal_section["placement"] = "with-data"
            wal_section["array"] = None  # the data volume's array says it
        else:
            wal_section["placement"] = "own-disk"
    return {
        "data": data,
        "wal": wal_section,
        "controller": controller_skeleton(),
        "flush": None,
    }


# ---------------------------------------------------------------------------------------------
# the server


def _setting_problem(value: str, vartype: str) -> str | None:
    """Why ``value`` cannot be what pg_settings shows for a setting of ``vartype``, or None.
    PostgreSQL refuses NaN and infinity for real settings, and its integers are 32-bit."""
    if vartype == "bool" and value not in {"on", "off"}:
        return "expected on or off"
    if vartype == "integer" and not re.fullmatch(r"-?[0-9]{1,19}", value):
        return "expected a whole number"
    if vartype == "real":
        try:
            number = float(value) if re.fullmatch(r"[-+0-9.eE]{1,40}", value) else None
        except ValueError:
            number = None
        if number is None or not math.isfinite(number):
            return "expected a finite number"
    return None


def _setting_value(value: str, unit: str, vartype: str) -> str | int | float | bool:
    """A setting as a person writes it: 128MB, 5min, on, 0.9, 'C'."""
    if vartype == "bool":
        return value == "on"
    if vartype in {"integer", "real"} and unit and re.fullmatch(r"-\d+(?:\.\d+)?", value):
        # A negative value with a unit is a sentinel (-1: "auto", "unlimited", "use another
        # setting"), not an amount: -8kB or -1ms is not valid input, the raw number is.
        return int(value) if re.fullmatch(r"-\d+", value) else float(value)
    if vartype in {"integer", "real"} and unit:
        if unit in MEMORY_UNITS and re.fullmatch(r"-?\d+", value):
            size = int(value) * MEMORY_UNITS[unit]
            for suffix, factor in (("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
                if size and size % factor == 0:
                    return f"{size // factor}{suffix}"
            return f"{size}B"
        return f"{value}{unit}"
    if vartype == "integer" and re.fullmatch(r"-?\d+", value):
        return int(value)
    if vartype == "real":
        try:
            return float(value)
        except ValueError:
            return value
    return value


def settings_facts(folder: Path) -> dict[str, Any]:
    """The non-default settings. A value that cannot be what PostgreSQL reported (NaN for a real
    setting, text for an integer) is a ``RunImportError`` naming the line: the settings are
    the configuration being measured, and one left out or guessed would misstate it."""
    path = folder / "settings.tsv"
    settings: dict[str, Any] = {}
    for number, line in enumerate((read_regular(path) or "").splitlines(), start=1):
        parts = line.split("\t")
        if len(parts) < 3 or parts[0] in HARNESS_SETTINGS:
            continue
        if parts[0] in HARNESS_LOG_SETTINGS and len(parts) > 3 and parts[3] == "command line":
            continue
        # Names are case-insensitive; the run format writes them as postgresql.conf does.
        name, value, unit = parts[0].lower(), parts[1], parts[2]
        vartype = parts[4] if len(parts) > 4 else ""
        problem = _setting_problem(value, vartype)
        if problem:
            shown = value if len(value) <= 40 else value[:37] + "..."
            raise RunImportError(
                f"{problem} for a {vartype} setting, got {shown!r}",
                path=str(path),
                line=number,
                field=name,
                hint="the harness copies pg_settings here: correct the line or re-run the trial",
            )
        settings[name] = _setting_value(value, unit, vartype)
    return settings


def postgres_facts(folder: Path) -> dict[str, Any]:
    from pgbench_kb.runs.build import postgres_skeleton

    pg = postgres_skeleton()
    version_text = read_regular(folder / "version.txt") or ""
    match = re.search(r"PostgreSQL (\d+(?:\.\d+)?(?:devel|beta\d+|rc\d+)?)", version_text)
    pg["version"] = match.group(1) if match else None
    pg["version_num"] = int_or_none(read_regular(folder / "version_num.txt"))
    config = read_tsv_pairs(folder / "pg_config.tsv")
    configure = (config.get("CONFIGURE") or _text(folder / "pg_config-configure.txt") or "").strip()
    pg["build"]["configure"] = configure or None
    compiler = re.search(r"compiled by ([^,]+)", version_text)
    pg["build"]["compiler"] = compiler.group(1).strip() if compiler else None
    pg["settings"] = settings_facts(folder)
    return pg


def pgbench_version(folder: Path) -> str | None:
    match = re.search(
        r"pgbench \(PostgreSQL\) (\S+)", read_regular(folder / "pgbench-version.txt") or ""
    )
    return match.group(1) if match else None


# ---------------------------------------------------------------------------------------------
# counters


def read_stats(path: Path) -> dict[str, Any]:
    """``{"bgwriter": {...}, "checkpointer": {...}, "wal": {...}, "database": {...},
    "wal_lsn": "0/1A2B3C", "taken_at": 1700000000.5}`` from a stats snapshot. A line that
    cannot be read (not a JSON object) is left out, and a counter that is not a finite number
    (NaN, Infinity) is dropped by ``_delta``: either way it is null in the run file."""
    out: dict[str, Any] = {}
    for line in (read_regular(path) or "").splitlines():
        name, sep, value = line.partition("\t")
        if not sep:
            continue
        if value.startswith("{"):
            view = _load_json(value)
            if isinstance(view, dict):
                out[name] = view
        elif name == "taken_at":
            taken = float_or_none(value)
            if taken is not None:
                out[name] = taken
        else:
            out[name] = value.strip()
    return out


def lsn_bytes(lsn: Any) -> int | None:
    """A WAL position ``X/Y`` as a byte offset."""
    if not isinstance(lsn, str):
        return None
    match = re.fullmatch(r"([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})", lsn)
    return (int(match.group(1), 16) << 32) + int(match.group(2), 16) if match else None


def _counter(snapshot: dict[str, Any], view: str, column: str) -> int | float | None:
    value = (snapshot.get(view) or {}).get(column)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _delta(before: dict[str, Any], after: dict[str, Any], view: str, *columns: str) -> int | None:
    """How much a counter grew over the trial; None when either end cannot be read (a counter
    is a 64-bit integer: a value past that is not one)."""
    for column in columns:
        a = _counter(after, view, column)
        b = _counter(before, view, column)
        if a is not None and b is not None and math.isfinite(a - b) and abs(a - b) < 2**63:
            return int(a - b)
    return None


def server_stats(trial: Path) -> dict[str, Any] | None:
    """Counter deltas over the trial (pg_stat_checkpointer on 17+, pg_stat_bgwriter before)."""
    before = read_stats(trial / "stats-before.tsv")
    after = read_stats(trial / "stats-after.tsv")
    if not before or not after:
        return None
    if "checkpointer" in after:
        timed = _delta(before, after, "checkpointer", "num_timed")
        requested = _delta(before, after, "checkpointer", "num_requested")
        written = _delta(before, after, "checkpointer", "buffers_written")
        # pg_stat_bgwriter lost buffers_backend in 17: pg_stat_io counts them (writes by
        # client backends to relations, one per block).
        backend = _delta(before, after, "io_backend", "writes")
    else:
        timed = _delta(before, after, "bgwriter", "checkpoints_timed")
        requested = _delta(before, after, "bgwriter", "checkpoints_req")
        written = _delta(before, after, "bgwriter", "buffers_checkpoint")
        backend = _delta(before, after, "bgwriter", "buffers_backend")
    wal_a, wal_b = lsn_bytes(after.get("wal_lsn")), lsn_bytes(before.get("wal_lsn"))
    wal_bytes = wal_a - wal_b if wal_a is not None and wal_b is not None else None
    if wal_bytes is None:
        wal_bytes = _delta(before, after, "wal", "wal_bytes")
    temp = _delta(before, after, "database", "temp_bytes")
    return {
        "checkpoints_timed": timed,
        "checkpoints_requested": requested,
        "buffers_written_checkpoint": written,
        "buffers_written_bgwriter": _delta(before, after, "bgwriter", "buffers_clean"),
        "buffers_written_backend": backend,
        "wal_bytes": wal_bytes,
        "wal_records": _delta(before, after, "wal", "wal_records"),
        "wal_fpi": _delta(before, after, "wal", "wal_fpi"),
        "blocks_read": _delta(before, after, "database", "blks_read"),
        "blocks_hit": _delta(before, after, "database", "blks_hit"),
        "temp_bytes": temp,
        "xact_commit": _delta(before, after, "database", "xact_commit"),
        "xact_rollback": _delta(before, after, "database", "xact_rollback"),
        "deadlocks": _delta(before, after, "database", "deadlocks"),
    }


# ---------------------------------------------------------------------------------------------
# the command


MASKED = "<masked>"
# host=… and hostaddr=… in a key=value connection string (a value may be quoted: 'a b').
_CONNINFO_HOST = re.compile(r"(?:^|(?<=\s))(host|hostaddr)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']\S*)?")
# the host part of a postgres:// or postgresql:// URI
_URI_HOST = re.compile(r"(postgres(?:ql)?://(?:[^@/?]*@)?)([^/?]*)")


def mask_hosts(argv: list[str]) -> list[str]:
    """``argv`` with every host name and address replaced by ``<masked>``: ``-h HOST``,
    ``-hHOST``, ``--host=HOST``, ``--host HOST``, and ``host=``/``hostaddr=`` in a connection
    string or URI (the database argument of ``--dsn``)."""
    masked: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            masked.append(MASKED)
            hide_next = False
        elif arg in {"-h", "--host"}:
            masked.append(arg)
            hide_next = True
        elif arg.startswith("--host="):
            masked.append(f"--host={MASKED}")
        elif arg.startswith("-h") and not arg.startswith("--"):
            masked.append(f"-h{MASKED}")
        elif _URI_HOST.match(arg):
            masked.append(_URI_HOST.sub(lambda m: m.group(1) + MASKED, arg, count=1))
        elif "=" in arg:
            masked.append(_CONNINFO_HOST.sub(lambda m: f"{m.group(1)}={MASKED}", arg))
        else:
            masked.append(arg)
    return masked


def command_line(trial: Path, *, mask: bool = False) -> tuple[list[str], str | None]:
    """The argv as recorded, and a readable command line without the binary's folder; with
    ``mask``, host names and addresses in both are ``<masked>`` (``kb import
    --mask-hostnames``)."""
    text = read_regular(trial / "command.argv")
    if text is None:
        return [], None
    argv = text.splitlines()
    if not argv:
        return [], None
    if mask:
        argv = [argv[0], *mask_hosts(argv[1:])]
    return argv, shlex.join(["pgbench", *argv[1:]])
