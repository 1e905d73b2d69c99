"""Findings ranked for tuners: which question a finding answers, and which finding leads.

A tuner reading the knowledge base asks about the hardware and the server first — storage,
durability, memory, checkpoints, versions, the operating system — and about pgbench's own
parameters (workload, scale, clients) last: those say how the benchmark behaves, not how to
set up a server. Each finding gets

* ``topic``: one of ``TOPICS`` (the order in which they are read);
* ``question``: what it answers (``storage.wal.placement``, ``postgres.settings.commit_delay``,
  ``tuning steps``…), so near-duplicates — the same question on the same machine — can be told
  apart from new knowledge;
* ``rank``: a sortable tuple, lower first;
* ``key``: whether it is the one finding shown for its question and machine where only the
  best are listed (the home page): the same disks arranged two ways first (against the fastest
  single-array layout of those disks: the fair answer to "WAL on its own disks?"), then a
  comparison without confounds before one with (added disks, several storage changes at once,
  fewer branches than clients), a clear verdict before an unknown spread, nothing else
  differing before caveats. A compound change ("every step at once") or a side with an unsafe
  setting (``fsync = off``, ``full_page_writes = off``) is never a key finding.
"""

from __future__ import annotations

from typing import Any

TOPICS = (
    "storage",
    "durability",
    "memory",
    "checkpoints",
    "versions",
    "os",
    "settings",
    "machines",
    "benchmark",
)

_DURABILITY = (
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "commit_delay",
    "commit_siblings",
    "wal_sync_method",
    "wal_buffers",
    "wal_compression",
    "wal_level",
)
_MEMORY = ("shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem")
_CHECKPOINTS = (
    "checkpoint_timeout",
    "checkpoint_segments",
    "checkpoint_completion_target",
    "max_wal_size",
    "min_wal_size",
    "bgwriter_",
)

#: Questions in the order a storage finding answers them (the first field present wins).
_STORAGE_QUESTIONS = (
    "storage.wal.placement",
    "storage.data.array.level",
    "storage.controller.write_cache",
    "storage.controller.battery_backed",
    "storage.data.array.rpm",
    "storage.data.array.disks",
    "storage.data.array.media",
    "storage.data.filesystem",
)


def _setting_topic(name: str) -> str:
    if name in _DURABILITY:
        return "durability"
    if name in _MEMORY:
        return "memory"
    if any(name == c or (c.endswith("_") and name.startswith(c)) for c in _CHECKPOINTS):
        return "checkpoints"
    return "settings"


def topic_of(factor: str) -> str:
    """The topic of a comparison's ``factor`` (fields joined by ``+``)."""
    fields = factor.split("+")
    if fields[0] == "machine":
        return "machines"
    if any(f.startswith("storage.") for f in fields) and not any(
        f.startswith(("server.os", "postgres.settings")) for f in fields
    ):
        return "storage"
    if any(f.startswith(("postgres.version", "postgres.build")) for f in fields):
        return "versions"
    if any(f.startswith("server.os") for f in fields):
        return "os"
    settings = [f.removeprefix("postgres.settings.") for f in fields if f.startswith("postgres.")]
    if settings and all(f.startswith("postgres.settings.") for f in fields):
        topics = {_setting_topic(s) for s in settings}
        return topics.pop() if len(topics) == 1 else "settings"
    if all(f.startswith("benchmark.") for f in fields):
        return "benchmark"
    return "settings"


def question_of(factor: str) -> str:
    """What a comparison answers, to tell near-duplicates apart."""
    fields = factor.split("+")
    if fields[0] == "machine":
        return "machine"
    if all(f.startswith("storage.") for f in fields):
        return next((q for q in _STORAGE_QUESTIONS if q in fields), "storage layout")
    if len(fields) == 1:
        return fields[0]
    if all(f.startswith("postgres.settings.") for f in fields):
        return "tuning steps"
    if any(f.startswith("postgres.version") for f in fields):
        return "postgres.version"
    if any(f.startswith("server.os") for f in fields):
        return "server.os"
    if all(f.startswith("benchmark.workload") for f in fields):
        return "benchmark.workload"
    return "+".join(fields)


def unsafe(c: dict[str, Any]) -> bool:
    return any(x["kind"] == "unsafe" for x in c.get("confounds") or [])


def place(c: dict[str, Any]) -> dict[str, Any]:
    """``topic``, ``question``, ``unsafe`` and ``rank`` of the finding written for ``c``."""
    topic = topic_of(c["factor"])
    clean = not c["differs_also"] and not c.get("confounds")
    rank = (
        TOPICS.index(topic),
        not c.get("same_disks"),
        -_single_array(c),
        bool(c.get("confounds")),
        c["verdict"] not in ("higher", "lower"),
        c.get("kind") == "span",
        unsafe(c),
        not clean,
        -_runs(c),
        c["id"],
    )
    return {
        "topic": topic,
        "question": question_of(c["factor"]),
        "unsafe": unsafe(c),
        "rank": list(rank),
        "leads": c.get("kind") != "span" and not unsafe(c),
    }


def _single_array(c: dict[str, Any]) -> float:
    """For the same disks arranged two ways: the tps of the side that keeps WAL with the data
    (one array). The strongest such layout is the fair alternative to a separate WAL array, so
    its comparison answers "WAL on its own disks?" first."""
    if not c.get("same_disks"):
        return 0.0
    for side in (c["a"], c["b"]):
        value = side.get("value")
        if isinstance(value, dict) and value.get("storage.wal.placement") == "with-data":
            return float(side["center"])
    return 0.0


def _runs(c: dict[str, Any]) -> int:
    return int(c["a"]["n"] or 0) + int(c["b"]["n"] or 0)


def mark_key(findings: list[dict[str, Any]]) -> None:
    """Set ``key`` on every finding: true for the best-ranked finding of each question and
    machine among those that may lead (comparison findings only)."""
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for f in findings:
        f["key"] = False
        if f.get("kind") != "comparison" or not f.get("leads"):
            continue
        slot = (f["question"], f["machine"])
        if slot not in best or f["rank"] < best[slot]["rank"]:
            best[slot] = f
    for f in best.values():
        f["key"] = True
