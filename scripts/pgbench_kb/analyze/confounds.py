"""Confounds a tuner knows, in words: what else a comparison changes besides its factor.

``differs_also`` lists incidental fields that differ; these are differences *inside* the
compared factor (or the workload it runs) that change what the comparison measures:

* ``disks_added``: WAL moved to an array of its own while the data array keeps its disks, so
  the machine has more disks on one side (4 → 6): the gain may be the spindles, not the
  placement. When the total is the same on both sides, the comparison is the same disks
  arranged two ways (``same_disks``), the cleanest answer to "WAL on its own disks?".
* ``compound_storage``: the data array changes in more than one way at once (RAID level,
  disk count, media, rpm, disk model), so no single one of them can take the credit — except
  when the same disks are arranged two ways, where the layout as a whole is what is compared.
* ``branch_contention``: a TPC-B-like workload (tpcb-like, simple-update) with fewer branches
  (the scale) than clients: every transaction updates one branch row, so many clients queue on
  each other's row locks and the result measures that queue more than the factor.
* ``unsafe``: a side runs with a setting that can lose or corrupt data after a crash
  (``fsync = off``, ``full_page_writes = off``): a reference point, never a recommendation.
* ``inert_commit_delay``: a side sets ``commit_delay`` but records a ``commit_siblings`` no
  client count can reach. PostgreSQL delays a commit only when at least ``commit_siblings``
  *other* transactions are active, and C clients leave at most C − 1: the delay never applied,
  so the comparison measures noise, not commit_delay. Named wherever either side's delay
  cannot fire and the comparison changes commit_delay, commit_siblings, or whether the delay
  can fire at all (more clients on one side): "commit_siblings 2 → 4" at 4 clients only
  switches the delay off (#31). (Only a recorded ``commit_siblings`` counts: where a source
  does not state it, nothing is assumed.)

Each entry is ``{"kind", "text"}``; the text is a sentence fragment written from the groups'
own fields. ``labelled`` puts it after "Confound:" (something else changed with the factor) or,
for ``unsafe``, after "Warning:" (nothing else changed; the setting is one not to run).
"""

from __future__ import annotations

from typing import Any

#: Builtin workloads that update one of ``scale`` branch rows in every transaction.
BRANCH_UPDATING = ("tpcb-like", "simple-update")

#: Settings that make a server unsafe against crashes when off.
UNSAFE_OFF = ("postgres.settings.fsync", "postgres.settings.full_page_writes")

_ARRAY = {
    "storage.data.array.level": "RAID level",
    "storage.data.array.disks": "disk count",
    "storage.data.array.media": "media",
    "storage.data.array.rpm": "rpm",
    "storage.data.array.disk_model": "disk model",
}


def total_disks(factors: dict[str, Any]) -> int | None:
    """Data disks plus the WAL array's when WAL has an array of its own; None when unknown."""
    data = factors.get("storage.data.array.disks")
    if not isinstance(data, int):
        return None
    if factors.get("storage.wal.placement") in (None, "with-data"):
        return data
    wal = factors.get("storage.wal.array.disks")
    return data + wal if isinstance(wal, int) else None


def is_off(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.lower() in ("off", "false", "0"))


def unsafe_settings(factors: dict[str, Any]) -> list[str]:
    """``fsync = off`` and the like, set on this group."""
    return [
        f"{path.rsplit('.', 1)[1]} = off"
        for path in UNSAFE_OFF
        if path in factors and is_off(factors[path])
    ]


def _whole(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def inert_commit_delay(factors: dict[str, Any]) -> str | None:
    """Why a group's commit_delay never applied, or None (see ``inert_commit_delay`` above)."""
    delay = _whole(factors.get("postgres.settings.commit_delay"))
    siblings = _whole(factors.get("postgres.settings.commit_siblings"))
    clients = _whole(factors.get("benchmark.clients"))
    if not delay or siblings is None or clients is None or siblings < clients:
        return None
    return (
        f"commit_siblings {siblings} ≥ clients {clients}, so the delay never applied (a commit "
        f"waits only when at least commit_siblings other transactions are active, and {clients} "
        f"client{'s' if clients != 1 else ''} leave at most {clients - 1} others)"
    )


def _wal_fields(fields: frozenset[str]) -> bool:
    return any(f.startswith("storage.wal.") for f in fields)


def same_disks(a: Any, b: Any, fields: frozenset[str]) -> bool:
    """WAL placement changes and the total number of disks does not: the same disks arranged
    two ways."""
    if "storage.wal.placement" not in fields:
        return False
    ta, tb = total_disks(a.factors), total_disks(b.factors)
    return ta is not None and ta == tb


def confounds_of(a: Any, b: Any, fields: frozenset[str]) -> list[dict[str, str]]:
    """What the comparison of groups ``a`` and ``b`` on ``fields`` changes besides its
    factor (see the module's docstring)."""
    out: list[dict[str, str]] = []
    if _wal_fields(fields):
        ta, tb = total_disks(a.factors), total_disks(b.factors)
        if ta is not None and tb is not None and ta != tb:
            out.append(
                {
                    "kind": "disks_added",
                    "text": f"the machine has {_disks(ta)} on one side and {tb} on the other, so "
                    "the difference may come from the added spindles rather than from where "
                    "WAL is written",
                }
            )
    changed = [name for path, name in _ARRAY.items() if path in fields]
    if len(changed) > 1 and not same_disks(a, b, fields):
        out.append(
            {
                "kind": "compound_storage",
                "text": "the data array changes in "
                + _and(changed)
                + " at once, so no one of them can take the credit",
            }
        )
    for side, group in (("A", a), ("B", b)):
        scale = group.factors.get("benchmark.scale")
        clients = group.factors.get("benchmark.clients")
        workload = group.factors.get("benchmark.workload.name")
        if (
            workload in BRANCH_UPDATING
            and isinstance(scale, int | float)
            and isinstance(clients, int)
            and scale < clients
        ):
            out.append(
                {
                    "kind": "branch_contention",
                    "text": f"{workload} at scale {scale:g} with {clients} clients (side {side}) "
                    "has fewer branch rows than clients, so clients queue on each other's row "
                    "locks and that queue is part of what is measured",
                }
            )
            break
    inert = {side: inert_commit_delay(group.factors) for side, group in (("A", a), ("B", b))}
    delay_fields = {"postgres.settings.commit_delay", "postgres.settings.commit_siblings"}
    if delay_fields & fields or bool(inert["A"]) != bool(inert["B"]):
        for side, why in inert.items():
            if why:
                out.append(
                    {"kind": "inert_commit_delay", "text": f"commit_delay inert in {side}: {why}"}
                )
    unsafe = sorted(set(unsafe_settings(a.factors)) | set(unsafe_settings(b.factors)))
    if unsafe:
        out.append(
            {
                "kind": "unsafe",
                "text": _and(unsafe) + " can lose or corrupt data in a crash: an unsafe "
                "reference point, not a setting to run",
            }
        )
    return out


def labelled(entries: list[dict[str, Any]]) -> list[str]:
    """The sentences a reader sees: ``Confound: a; b.`` for what else changed with the factor,
    ``Warning: c.`` for an unsafe setting; each text once, in the order given."""
    out = []
    for label, unsafe in (("Confound", False), ("Warning", True)):
        texts = list(
            dict.fromkeys(str(e["text"]) for e in entries if (e.get("kind") == "unsafe") == unsafe)
        )
        if texts:
            out.append(f"{label}: " + "; ".join(texts) + ".")
    return out


def _disks(n: int) -> str:
    return "1 disk" if n == 1 else f"{n} disks"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
