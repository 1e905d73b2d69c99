"""Reader words for run-file fields and PostgreSQL settings.

A reader never sees a dotted path (``server.os.release``), a Python value (``None``, a tuple)
or a bare setting number without its unit: ``field_label`` names any field of a run file in
words, ``readable`` rewrites the dotted paths inside a sentence another stage wrote, and
``conf_line`` writes a setting as a postgresql.conf line with its unit
(``shared_buffers = 23987  # 8 kB pages ≈ 187 MB``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from pgbench_kb.analyze.factors import LABELS as ANALYZE_LABELS

#: Fields named better than their parts would be.
LABELS = {
    **ANALYZE_LABELS,
    "id": "run id",
    "schema_version": "run file format version",
    "server.os.name": "OS",
    "server.os.release": "OS release",
    "server.os.kernel": "kernel",
    "server.ram_bytes": "RAM",
    "client.ram_bytes": "client RAM",
    "client.same_as_server": "client on the server itself",
    "postgres.version_num": "PostgreSQL version number",
    "postgres.settings_profile": "settings profile",
    "postgres.initdb_before_run": "new cluster (initdb) before the run",
    "benchmark.command": "pgbench command",
    "benchmark.init_command": "pgbench -i command",
    "benchmark.other_flags": "other pgbench options",
    "benchmark.progress_interval_s": "progress interval (-P, s)",
    "benchmark.rate_limit_tps": "rate limit (-R)",
    "benchmark.rate_limit_pct_of_max": "rate limit (-R, % of the measured maximum)",
    "benchmark.latency_limit_ms": "latency limit (-L)",
    "benchmark.max_tries": "tries per transaction (--max-tries)",
    "benchmark.connect_per_transaction": "new connection per transaction (-C)",
    "benchmark.warmup": "warm-up",
    "benchmark.warmup.description": "warm-up",
    "benchmark.warmup.duration_s": "warm-up duration (s)",
    "results.tps": "tps",
    "results.of_runs": "runs behind the figure",
    "results.statistic": "what the figure is",
    "provenance.declared": "fields declared by a person",
    "provenance.masked": "masked fields",
    "provenance.source": "source",
    "provenance.contributed_at": "contributed on",
    "provenance.contributor": "contributor",
    "provenance.notes": "notes",
    "storage.data.array": "data array",
    "storage.data": "data storage",
    "storage.wal": "WAL storage",
    "storage.controller": "storage controller",
    "server.hostname": "server host name",
    "client.hostname": "client host name",
    "storage.wal.array": "WAL array",
    "repeat.group": "repeat group",
    "repeat.index": "repeat number",
    "repeat.of": "repeats in the group",
}

#: The words of a path's parts.
WORDS = {
    "server": "", "client": "client", "postgres": "PostgreSQL", "benchmark": "",
    "results": "", "provenance": "", "storage": "", "server_stats": "server",
    "os": "OS", "cpu": "CPU", "mhz": "MHz", "smt": "SMT", "ram": "RAM", "wal": "WAL",
    "fpi": "full-page images", "ssl": "SSL", "tps": "tps", "p50": "p50", "p90": "p90",
    "p95": "p95", "p99": "p99", "p999": "p99.9", "xact": "transactions", "kb": "kB",
    "fs": "filesystem", "sha256": "SHA-256", "url": "address", "bgwriter": "background writer",
    "latency": "latency", "percentiles": "percentiles", "stddev": "standard deviation",
    "avg": "average", "data": "data", "array": "array", "io": "I/O",
}  # fmt: skip
#: A list's items: ``scripts.1`` → ``script 1``.
ITEMS = {"scripts": "script", "statements": "statement", "raw": "raw file", "patches": "patch"}
#: Unit suffixes of field names.
UNITS = {"_bytes": "", "_ms": " (ms)", "_s": " (s)", "_pct": " (%)", "_kb": " (kB)"}


@cache
def field_label(path: str) -> str:
    """Words for any run-file field: ``server.os.release`` → ``OS release``,
    ``benchmark.workload.scripts.1.weight`` → ``workload script 1 weight``."""
    if path in LABELS:
        return LABELS[path]
    if path.startswith("postgres.settings."):
        return path.removeprefix("postgres.settings.")
    parts = path.split(".")
    words: list[str] = []
    for i, part in enumerate(parts):
        if part.isdigit():
            if words and parts[i - 1] in ITEMS:
                words[-1] = f"{ITEMS[parts[i - 1]]} {part}"
            else:
                words.append(part)
            continue
        unit = ""
        for suffix, shown in UNITS.items():
            if part.endswith(suffix) and part != suffix.lstrip("_"):
                part, unit = part.removesuffix(suffix), shown
                break
        word = WORDS.get(part)
        if word is None:
            word = " ".join(WORDS.get(w, w) for w in part.split("_"))
        if word:
            words.append(word + unit)
        elif unit:
            words[-1:] = [(words[-1] if words else "") + unit]
    return " ".join(words).strip() or path


_PATH = re.compile(
    r"\b(?:server|client|storage|postgres|benchmark|results|provenance|repeat|server_stats)"
    r"(?:\.[a-z_0-9]+)+\b"
)


#: A bench session's id (``20261127T075246Z-c6f6eb``: its start and a random token).
SESSION = re.compile(r"\b(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})\d{2}Z-[0-9a-f]{6}\b")


def session_words(text: str) -> str:
    """Every bench session id in ``text`` written as its start, ``2026-11-27 07:52 UTC``: its
    random token means nothing to a reader."""
    if "Z-" not in text:
        return text
    return SESSION.sub(r"\1-\2-\3 \4:\5 UTC", text)


def readable(text: str) -> str:
    """A sentence with every dotted run-file path in it written as its label, and every bench
    session id as its start."""
    return session_words(_PATH.sub(lambda m: field_label(m.group(0)), text))


def apart_parts(*names: str) -> tuple[str, ...]:
    """Configurations' words (``PG 15.18, -M simple, scale 8`` and ``PG 18.6, -M simple,
    scale 8``) without the parts they all share (``PG 15.18`` and ``PG 18.6``), so that a title,
    a chart's bar or a legend names what sets them apart instead of being cut; as they are when
    any would be left with nothing."""
    split = [name.split(", ") for name in names]
    shared = set(split[0]).intersection(*split[1:]) if split else set()
    only = [[p for p in parts if p not in shared] for parts in split]
    if not all(only):
        return tuple(names)
    return tuple(", ".join(parts) for parts in only)


def value_words(value: Any) -> str:
    """A value as a reader reads it: lists and tuples joined (paths as labels), ``yes``/``no``,
    ``not stated`` for a null."""
    if value is None:
        return "not stated"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(value_words(v) for v in value) or "none"
    text = str(value)
    return field_label(text) if _PATH.fullmatch(text) else text


#: Settings whose bare number has a unit: (unit words, bytes or seconds per unit, kind).
SETTING_UNITS: dict[str, tuple[str, float, str]] = {
    "shared_buffers": ("8 kB pages", 8192, "bytes"),
    "effective_cache_size": ("8 kB pages", 8192, "bytes"),
    "wal_buffers": ("8 kB pages", 8192, "bytes"),
    "temp_buffers": ("8 kB pages", 8192, "bytes"),
    "work_mem": ("kB", 1024, "bytes"),
    "maintenance_work_mem": ("kB", 1024, "bytes"),
    "commit_delay": ("µs", 1e-6, "seconds"),
    "checkpoint_timeout": ("s", 1, "seconds"),
    "checkpoint_warning": ("s", 1, "seconds"),
    "bgwriter_delay": ("ms", 1e-3, "seconds"),
    "wal_writer_delay": ("ms", 1e-3, "seconds"),
    "checkpoint_segments": ("WAL segments of 16 MB", 16 * 1024 * 1024, "bytes"),
}
_PLAIN_CONF = re.compile(r"[A-Za-z0-9_.+-]+")


def _bytes_words(value: float) -> str:
    for unit, size in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if value >= size:
            shown = value / size
            return f"{shown:.3g} {unit}" if shown < 1000 else f"{shown:.0f} {unit}"
    return f"{value:.0f} bytes"


def _seconds_words(value: float) -> str:
    if value >= 3600 and value % 3600 == 0:
        return f"{value / 3600:g} h"
    if value >= 60 and value % 60 == 0:
        return f"{value / 60:g} min"
    if value >= 1:
        return f"{value:g} s"
    if value >= 1e-3:
        return f"{value * 1e3:g} ms"
    return f"{value * 1e6:g} µs"


def conf_line(name: str, value: Any, block_size: int | None = None) -> str:
    """A setting as postgresql.conf writes it, its unit in a comment when the value is a bare
    number: ``shared_buffers = 23987  # 8 kB pages ≈ 187 MB``, ``fsync = off``,
    ``datestyle = 'iso, mdy'``."""
    if isinstance(value, bool):
        shown = "on" if value else "off"
    elif isinstance(value, int | float):
        shown = f"{value:g}" if isinstance(value, float) else str(value)
    else:
        text = str(value)
        shown = text if _PLAIN_CONF.fullmatch(text) else "'" + text.replace("'", "''") + "'"
    line = f"{name} = {shown}"
    unit = SETTING_UNITS.get(name)
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None and isinstance(value, str) and re.fullmatch(r"\d+", value):
        number = int(value)
    if unit and number is not None:
        words, per, kind = unit
        if words == "8 kB pages" and block_size and block_size != 8192:
            words, per = f"{block_size // 1024} kB pages", block_size
        total = number * per
        if kind == "bytes":
            equal = _bytes_words(total)
            line += f"  # {words} ≈ {equal}" if words != "kB" else f"  # kB = {equal}"
        else:
            equal = _seconds_words(total)
            line += f"  # {words}" if equal == f"{number:g} {words}" else f"  # {words} = {equal}"
    return line


#: A held-equal line's field as a bar label says it, short enough for a phone's chart
#: (``data disk speed (rpm) = 15,000`` → ``15k``); other fields keep their name.
_BAR_FIELDS = {
    "data disk speed (rpm)": lambda v: v.replace(",000", "k") + " rpm",
    "WAL placement": lambda v: "WAL shared" if "data" in v else "WAL apart",
    "data array disk count": "{} disks".format,
    "clients": "{} clients".format,
    "scale": "scale {}".format,
}


def _bar_part(name: str, value: str) -> str:
    return _BAR_FIELDS.get(name, f"{name} {{}}".format)(value)


def bar_labels(items: list[dict[str, Any]]) -> list[str]:
    """Each comparison's bar label in an overview chart: its two sides (``short``), or, where
    several bars of one panel would read the same (three "RAID5 → RAID1+0", issue 31), what
    else sets each apart: the held-equal values that differ between them."""
    by_bar: dict[tuple[str, str], list[int]] = {}
    for number, item in enumerate(items):
        by_bar.setdefault((str(item.get("panel")), str(item["short"])), []).append(number)
    out = [str(item["short"]) for item in items]
    for same in by_bar.values():
        if len(same) < 2:
            continue
        held = [dict(h.partition(" = ")[::2] for h in items[n].get("held") or []) for n in same]
        names = list(dict.fromkeys(k for h in held for k in h))
        differ = [k for k in names if len({h.get(k) for h in held}) > 1]
        differ.sort(key=lambda k: k not in _BAR_FIELDS)  # the short ones first
        for n, values in zip(same, held, strict=True):
            parts = [_bar_part(k, values.get(k, "not stated")) for k in differ]
            out[n] = ", ".join(parts) or out[n]
    return out
