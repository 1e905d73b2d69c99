"""Short readable descriptions of a group's configuration and of field values (flat fields)."""

from __future__ import annotations

from typing import Any

from pgbench_kb.analyze.factors import label
from pgbench_kb.runs import setting_words
from pgbench_kb.runs.vocabulary import LEVEL_NAMES, MEDIA_NAMES

PLACEMENT = {
    "with-data": "WAL with data",
    "own-disk": "WAL on its own disk",
    "own-array": "WAL on its own array",
}


def _array(f: dict[str, Any], prefix: str) -> str | None:
    level = f.get(f"{prefix}.level")
    disks = f.get(f"{prefix}.disks")
    media = MEDIA_NAMES.get(f.get(f"{prefix}.media") or "", f.get(f"{prefix}.media"))
    rpm = f.get(f"{prefix}.rpm")
    model = f.get(f"{prefix}.disk_model")
    kind = " ".join(
        str(p)
        for p in (media, f"{rpm / 1000:g}k rpm" if rpm else None, model and f"({model})")
        if p
    )
    if level in (None, "single") and disks in (None, 1):
        return f"single {kind}".strip() if kind else None
    name = LEVEL_NAMES.get(level or "", level)
    count = f"{disks}× {kind}".strip() if disks else kind
    return ", ".join(p for p in (name, count) if p) or None


def storage(f: dict[str, Any]) -> str | None:
    """``RAID1+0, 4× HDD 15k rpm; ext3; WAL on RAID1, 2× HDD 10k rpm; battery-backed cache``,
    with ``flush emulated 8 ms`` or ``flush traced, no delay`` last when the harness set one."""
    parts = []
    data = _array(f, "storage.data.array")
    if data:
        parts.append(data)
    fs = f.get("storage.data.filesystem")
    if fs:
        parts.append(fs)
    placement = f.get("storage.wal.placement")
    if placement:
        wal = _array(f, "storage.wal.array")
        text = PLACEMENT.get(placement, f"WAL {placement}")
        parts.append(f"{text} ({wal})" if wal and placement != "with-data" else text)
    cache = f.get("storage.controller.write_cache")
    battery = f.get("storage.controller.battery_backed")
    if cache == "write-back":
        parts.append("battery-backed write cache" if battery else "write-back cache")
    elif cache in ("disabled", "write-through"):
        parts.append("controller write cache off")
    # The emulated commit flush (profile key flush_ms) is part of what the storage did: two
    # runs on one disk at 8 ms and at the device's own flush read alike without it.
    flush = flush_level(
        f.get("storage.flush.emulated.target_ms"), f.get("storage.flush.emulated.traced_only")
    )
    if flush:
        parts.append(flush)
    return "; ".join(parts) or None


def flush_level(target_ms: Any, traced_only: Any) -> str | None:
    """``flush emulated 8 ms``, ``flush traced, no delay`` (flush_ms native-traced) or None
    (the device's own flush): the words titles and storage layouts share."""
    if target_ms:
        return f"flush emulated {value_text(float(target_ms))} ms"
    return "flush traced, no delay" if traced_only else None


def settings(f: dict[str, Any]) -> dict[str, Any]:
    return {
        k.removeprefix("postgres.settings."): v
        for k, v in sorted(f.items())
        if k.startswith("postgres.settings.")
    }


def config(f: dict[str, Any], label: str | None) -> dict[str, Any]:
    """What the site shows for a group without re-deriving it from run files."""
    return {
        "storage": storage(f),
        "os": " ".join(
            str(f[k]) for k in ("server.os.name", "server.os.release") if f.get(k) is not None
        )
        or None,
        "version": f.get("postgres.version"),
        "patches": f.get("postgres.build.patches") or [],
        "workload": f.get("benchmark.workload.name"),
        "scale": f.get("benchmark.scale"),
        "clients": f.get("benchmark.clients"),
        "threads": f.get("benchmark.threads"),
        "mode": f.get("benchmark.query_mode"),
        "settings": settings(f),
        "settings_label": label,
    }


def value_text(value: Any, field: str = "", version: Any = None) -> str:
    """A field value for a sentence or a table cell. Null is a setting's default, in words for
    PostgreSQL ``version`` (``setting_words.value_words``: ``on``, ``5min (default)``,
    ``server default``) and "unset" for anything else; a setting's boolean is ``on``/``off``,
    as PostgreSQL writes it."""
    setting = field.startswith("postgres.settings.")
    if value is None:
        if setting:
            name = field.removeprefix("postgres.settings.")
            return setting_words.value_words(name, version)
        return "unset"
    if isinstance(value, bool):
        if setting:
            return "on" if value else "off"
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    if field.endswith(".array.level"):
        return LEVEL_NAMES.get(str(value), str(value))
    if field.endswith(".array.media"):
        return MEDIA_NAMES.get(str(value), str(value))
    return str(value)


def difference(factors: dict[str, Any], fields: Any) -> str:
    """One side of a comparison in words, covering only what differs: a storage layout as a
    whole, the OS by name and release, settings as ``name=value``, anything else by label."""
    parts: list[str] = []
    fields = sorted(fields)
    storage_too = os_too = workload_too = False
    for f in fields:  # one pass over the fields for what is written as a whole
        storage_too = storage_too or f.startswith("storage.")
        os_too = os_too or f.startswith("server.os.")
        workload_too = workload_too or f.startswith("benchmark.workload.")
    if storage_too:
        parts.append(storage(factors) or "storage not stated")
    if os_too:
        parts.append(
            " ".join(
                str(factors[k])
                for k in ("server.os.name", "server.os.release")
                if factors.get(k) is not None
            )
            or "OS not stated"
        )
    if "postgres.build.patches" in fields:
        patches = factors.get("postgres.build.patches")
        parts.append(f"patched ({value_text(patches)})" if patches else "no patches")
    if workload_too:
        parts.append(f"workload {value_text(factors.get('benchmark.workload.name'))}")
    for field in fields:
        if field.startswith(_WHOLE):
            continue
        if field.startswith("postgres.settings."):
            parts.append(_setting_part(factors, field))
        elif field == "postgres.version":
            parts.append(f"PostgreSQL {value_text(factors.get(field))}")
        else:
            parts.append(f"{label(field)} {value_text(factors.get(field))}")
    return ", ".join(parts)


def _setting_part(factors: dict[str, Any], field: str) -> str:
    """``max_wal_size=1GB``, ``checkpoint_timeout at its default (5min)``, ``fsync=on``."""
    value = factors.get(field)
    if value is None:
        # fsync, full_page_writes, synchronous_commit: ``fsync=on``, the same everywhere
        value = setting_words.EVERY_RELEASE.get(field.removeprefix("postgres.settings."))
    return setting_words.phrase(label(field), value, factors.get("postgres.version"))


#: Fields ``difference`` writes as a whole (a storage layout, an OS...), not one by one.
_WHOLE = ("storage.", "server.os.", "postgres.build.", "benchmark.workload.")


def caveat_text(d: dict[str, Any]) -> str:
    """One entry of ``differs_also`` in words: ``transactions per client (-t) also differs
    (500 vs 1000)``."""
    if d["field"] == "provenance.uncertain":
        a = value_text(d["a"]) if d["a"] else "nothing"
        b = value_text(d["b"]) if d["b"] else "nothing"
        return f"the sources leave different fields uncertain ({a} vs {b})"
    return f"{label(d['field'])} also differs ({value_text(d['a'])} vs {value_text(d['b'])})"
