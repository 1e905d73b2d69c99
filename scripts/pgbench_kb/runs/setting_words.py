"""What a setting a run left unset means, in words a reader can use (issue 31: titles and
legends read ``checkpoint_timeout=default``, which names no value).

- the major version's list (``runs/settings/pgMAJOR.tsv``) has it: ``at its default (5min)``,
  the built-in default written as ``postgresql.conf`` would;
- the version predates or postdates the setting (``ADDED``, ``REMOVED``, or a list that lacks
  it): ``not in PostgreSQL 15``;
- otherwise: ``at the server's default``.

``value_words`` says the same where a value stands (``commit_delay 0 (default) → 1000``,
``server default → 1000``).

``phrase`` writes a setting and its value for a list of settings: ``max_wal_size=1GB``, or
``checkpoint_timeout at its default (5min)`` when it was left unset.
"""

from __future__ import annotations

from typing import Any

from pgbench_kb.runs.pgsettings import MEMORY_UNITS, major_of, settings_of

#: Settings that came or went in a release kb has no list of, by the major that brought them
#: (release notes of 8.3: checkpoint_completion_target; of 9.5: max_wal_size and min_wal_size
#: replaced checkpoint_segments; of 18:
#: autovacuum_worker_slots).
ADDED = {
    "checkpoint_completion_target": "8.3",
    "max_wal_size": "9.5",
    "min_wal_size": "9.5",
    "autovacuum_worker_slots": "18",
}
#: …and by the major that removed them.
REMOVED = {"checkpoint_segments": "9.5"}
#: Settings whose built-in default is the same in every PostgreSQL release.
EVERY_RELEASE = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"}

#: Time units as postgresql.conf writes them, largest first, in milliseconds.
_TIME_MS = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000), ("ms", 1))
_TIME_OF_UNIT = {"ms": 1, "s": 1000, "min": 60_000}
#: Memory units as postgresql.conf writes them, largest first, in bytes.
_MEMORY = (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("kB", 1024))


def _key(major: str) -> tuple[int, ...]:
    return tuple(int(p) for p in major.split("."))


def conf_value(boot: str, unit: str) -> str:
    """A built-in default in the setting's unit (``300``, ``s``) as postgresql.conf writes it
    (``5min``); ``16384`` of ``8kB`` is ``128MB``; a negative or unitless value as it is."""
    try:
        number = int(boot)
    except ValueError:
        return boot
    if number <= 0 or not unit:
        return boot
    count = int(unit[:-2] or 1) if unit.endswith("kB") else 1
    base = unit[-2:] if unit.endswith("kB") else unit
    if base in MEMORY_UNITS and base in {"B", "kB", "MB", "GB"}:
        total, table = number * count * MEMORY_UNITS[base], _MEMORY
    elif unit in _TIME_OF_UNIT:
        total, table = number * _TIME_OF_UNIT[unit], _TIME_MS
    else:
        return boot
    for name, size in table:
        if total % size == 0:
            return f"{total // size}{name}"
    return f"{number}{unit}"


def default_words(name: str, version: Any) -> str:
    """What ``name`` left unset means on PostgreSQL ``version`` (see the module's text)."""
    if name in EVERY_RELEASE:
        return f"at its default ({EVERY_RELEASE[name]})"
    major = major_of(version)
    if major is None:
        return "at the server's default"
    if name in ADDED and _key(major) < _key(ADDED[name]):
        return f"not in PostgreSQL {major}"
    if name in REMOVED and _key(major) >= _key(REMOVED[name]):
        return f"not in PostgreSQL {major}"
    known = settings_of(major)
    if known is None:
        return "at the server's default"
    setting = known.get(name.lower())
    if setting is None:
        return f"not in PostgreSQL {major}"
    return f"at its default ({conf_value(setting.boot_val, setting.unit)})"


def value_words(name: str, version: Any) -> str:
    """``default_words`` where a value stands: ``5min (default)``, ``on``, ``not in PostgreSQL
    9.4``, ``server default``."""
    words = default_words(name, version)
    if words.startswith("at its default ("):
        value = words.removeprefix("at its default (").removesuffix(")")
        return value if name in EVERY_RELEASE else f"{value} (default)"
    if words == "at the server's default":
        return "server default"
    return words


def phrase(name: str, value: Any, version: Any) -> str:
    """``name=value``, or ``name`` and ``default_words`` when it was left unset (None)."""
    if value is None:
        return f"{name} {default_words(name, version)}"
    if isinstance(value, bool):
        return f"{name}={'on' if value else 'off'}"
    return f"{name}={value}"
