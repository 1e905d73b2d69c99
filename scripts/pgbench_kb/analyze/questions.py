"""Which question a comparison answers: the comparison pages of the site (RAID level, WAL
placement, commit_delay, durability, memory, checkpoints, versions, clients…), by the field
(or family of fields) it compares.

The site files each comparison on one of these pages (``derive/knowledge.py`` re-exports
them); the family-wise adjustment (``analyze/multiplicity.py``) takes the tests of one page ×
machine × metric as one family, so "a question" means the same thing on a page and in a test.
"""

from __future__ import annotations

#: The comparison pages, in menu order: (slug, title, what it is about, factor prefixes).
#: A comparison goes to the first family one of whose prefixes starts its factor (for a
#: combined factor ``a+b``: the family of its first field).
FAMILIES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("raid-level", "RAID level", "RAID levels of the data array", ("storage.data.array.level",)),
    (
        "write-cache",
        "Write cache and battery",
        "the controller's write cache, with or without a battery",
        ("storage.controller",),
    ),
    (
        "commit-flush",
        "Commit flush latency",
        "how long the storage takes to flush a commit (emulated slower on the same device)",
        ("storage.flush",),
    ),
    ("wal-placement", "WAL placement", "where the write-ahead log lives", ("storage.wal",)),
    (
        "filesystem",
        "Filesystem",
        "the filesystem of the data directory",
        (
            "storage.data.filesystem",
            "storage.data.journal",
            "storage.data.mount_options",
            "storage.data.fs_properties",
        ),
    ),
    ("storage-layout", "Storage layout", "disks, media and arrays", ("storage",)),
    (
        "commit-delay",
        "commit_delay",
        "grouping commits with commit_delay and commit_siblings",
        ("postgres.settings.commit_delay", "postgres.settings.commit_siblings"),
    ),
    (
        "durability",
        "Durability settings",
        "fsync, synchronous_commit and related settings",
        (
            "postgres.settings.fsync",
            "postgres.settings.synchronous_commit",
            "postgres.settings.full_page_writes",
            "postgres.settings.wal_sync_method",
            "postgres.settings.wal_level",
        ),
    ),
    (
        "memory",
        "Memory settings",
        "shared_buffers, work_mem and other memory settings",
        (
            "postgres.settings.shared_buffers",
            "postgres.settings.work_mem",
            "postgres.settings.effective_cache_size",
            "postgres.settings.maintenance_work_mem",
            "postgres.settings.max_fsm",
            "postgres.settings.temp_buffers",
            "postgres.settings.huge",
        ),
    ),
    (
        "checkpoints",
        "Checkpoints",
        "checkpoint spacing, WAL size and WAL buffers",
        (
            "postgres.settings.checkpoint",
            "postgres.settings.max_wal_size",
            "postgres.settings.min_wal_size",
            "postgres.settings.wal_buffers",
            "postgres.settings.bgwriter",
        ),
    ),
    (
        "postgres-version",
        "PostgreSQL version",
        "releases and builds of PostgreSQL",
        (
            "postgres.version",
            "postgres.build",
        ),
    ),
    ("os", "Operating system", "operating systems and kernels", ("server.os", "server.tuning")),
    (
        "query-mode",
        "Query mode",
        "simple, extended and prepared protocol",
        ("benchmark.query_mode",),
    ),
    (
        "clients",
        "Clients",
        "how throughput changes with the number of clients",
        (
            "benchmark.clients",
            "benchmark.threads",
        ),
    ),
    ("other-settings", "Other settings", "settings not covered above", ("postgres.settings",)),
    (
        "tuning-steps",
        "Tuning steps",
        "several settings (and sometimes storage) changed together, one tuning step at a time",
        (),
    ),
    ("workload", "Workload", "workloads and scripts", ("benchmark.workload",)),
    ("machines", "Machines", "one configuration on two machines", ()),
    ("other", "Other factors", "everything else that was compared", ("",)),
)
#: analyze's families of fields changed together → the page that shows them, when the fields
#: themselves do not all belong to one page.
ANALYZE_FAMILY_PAGES = {
    "storage": "storage-layout",
    "version": "postgres-version",
    "build": "postgres-version",
    "version+settings": "postgres-version",
    "os": "os",
    "os+storage": "os",
    "settings": "tuning-steps",
    "settings+storage": "tuning-steps",
    "workload": "workload",
    "machine": "machines",
}


def _field_page(field: str) -> str:
    for slug, _title, _about, prefixes in FAMILIES:
        if prefixes and any(field.startswith(p) for p in prefixes):
            return slug
    return "other"


def family_of(factor: str, analyze_family: str | None = None) -> str:
    """The comparison page for a factor (``a+b`` for fields changed together)."""
    if factor == "machine":
        return "machines"
    pages = {_field_page(f) for f in (factor or "").split("+")}
    if len(pages) == 1:
        return pages.pop()
    return ANALYZE_FAMILY_PAGES.get(analyze_family or "", "other")
