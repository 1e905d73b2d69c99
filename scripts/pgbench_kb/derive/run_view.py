"""One run, ready to show: the row lists and search need, and the whole run page.

Every sentence and figure a reader sees is written here (with ``pgbench_kb.numbers``); the Hugo
layouts only place them. Nothing here compares runs: groups and comparisons come from
``pgbench_kb.analyze`` and are only linked.
"""

from __future__ import annotations

import json
import re
import statistics
from functools import cache
from pathlib import Path
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import bottleneck, labels
from pgbench_kb.derive.setup_text import (
    LEVEL_NAMES,
    WAL_PLACEMENT,
    _get,
    describe_storage,
    short_cache,
    short_storage,
)
from pgbench_kb.errors import KbError
from pgbench_kb.runs import tryout
from pgbench_kb.runs.runfile import MAX_RAW_OUTPUT_BYTES, contributed_path, read_bytes_bounded

SCHEMA = Path(__file__).resolve().parents[1] / "runs" / "schemas" / "run.schema.json"

#: Settings initdb writes into every new postgresql.conf, with the value it writes (None: any
#: value, it depends on the machine or the locale). Such a line is not a tuning choice.
INITDB_WRITES: dict[str, str | None] = {
    "max_connections": "100",
    "shared_buffers": "128MB",
    "dynamic_shared_memory_type": None,
    "max_wal_size": "1GB",
    "min_wal_size": "80MB",
    "log_timezone": None,
    "timezone": None,
    "datestyle": None,
    "lc_messages": None,
    "lc_monetary": None,
    "lc_numeric": None,
    "lc_time": None,
    "default_text_search_config": None,
}

PERCENTILE_LABELS = (
    ("min", "min", None),
    ("p50", "median", 0.50),
    ("p90", "p90", 0.90),
    ("p95", "p95", 0.95),
    ("p99", "p99", 0.99),
    ("p999", "p99.9", 0.999),
    ("max", "max", None),
)
#: A percentile is shown only when at least this many logged latencies lie above it; fewer, and
#: "p99.9" of a 5% sample is just the slowest transaction that happened to be logged.
TAIL_LATENCIES_NEEDED = 10

COUNTERS = (
    ("wal_bytes", "WAL written", fmt.size),
    ("wal_records", "WAL records", fmt.figure),
    ("wal_fpi", "WAL full-page images", fmt.figure),
    ("checkpoints_timed", "Checkpoints on timeout", fmt.figure),
    ("checkpoints_requested", "Checkpoints requested", fmt.figure),
    ("buffers_written_checkpoint", "Buffers written by checkpoints", fmt.figure),
    ("buffers_written_bgwriter", "Buffers written by the background writer", fmt.figure),
    ("buffers_written_backend", "Buffers written by backends", fmt.figure),
    ("blocks_read", "Blocks read (not in shared buffers)", fmt.figure),
    ("blocks_hit", "Blocks found in shared buffers", fmt.figure),
    ("temp_bytes", "Temporary files written", fmt.size),
    ("xact_commit", "Transactions committed", fmt.figure),
    ("xact_rollback", "Transactions rolled back", fmt.figure),
    ("deadlocks", "Deadlocks", fmt.figure),
)

#: Sections of the facts table, in reading order; what a run file holds beyond them goes last.
FACT_SECTIONS = (
    ("benchmark", "Benchmark"),
    ("results", "Results"),
    ("postgres", "PostgreSQL"),
    ("server", "Server"),
    ("client", "Client"),
    ("storage", "Storage"),
    ("server_stats", "Server counters"),
    ("repeat", "Repeat"),
    ("provenance", "Provenance"),
)
#: Shown in their own sections of the page, not again in the facts table.
FACTS_SHOWN_ELSEWHERE = {
    "results.progress",
    "results.statements",
    "results.samples",
    "results.os_series",
    "results.wait_events",
    "postgres.settings",
    "raw",
}


@cache
def schema_descriptions() -> dict[str, str]:
    """Dotted run-file path → its description in the published schema (through each ``$ref`` to
    ``$defs``, ``anyOf``/``oneOf`` alternatives and list items: ``server.cpu.model`` and
    ``benchmark.workload.scripts.builtin`` are described too)."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs = schema.get("$defs") or {}
    found: dict[str, str] = {}

    def resolved(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = defs.get(ref.removeprefix("#/$defs/"))
            if isinstance(target, dict):
                return {**resolved(target), **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    def walk(node: dict[str, Any], path: str, depth: int = 0) -> None:
        node = resolved(node)
        if path and node.get("description") and path not in found:
            found[path] = node["description"]
        if depth > 12:  # a recursive $def would otherwise never end
            return
        for key, child in (node.get("properties") or {}).items():
            if isinstance(child, dict):
                walk(child, f"{path}.{key}" if path else key, depth + 1)
        for alternative in [*(node.get("anyOf") or []), *(node.get("oneOf") or [])]:
            if isinstance(alternative, dict):
                walk(alternative, path, depth + 1)
        # A list's items: ``benchmark.workload.scripts.1.builtin`` is described by
        # ``benchmark.workload.scripts.builtin`` (``_schema_path`` drops the item's number).
        if isinstance(node.get("items"), dict):
            walk(node["items"], path, depth + 1)

    walk(schema, "")
    return found


def _scalar(value: Any) -> str:
    if type(value) is str:  # most facts: the one case worth a shortcut
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return fmt.figure(value) or str(value)
    return str(value)


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """(dotted path, value) of every non-null leaf, list items numbered from 1; the parts of
    the run shown in their own sections are left out."""
    out: list[tuple[str, Any]] = []
    if path not in FACTS_SHOWN_ELSEWHERE:
        _add_leaves(value, path, out)
    return out


#: Leaf types written as they are (anything else is looked at more closely).
_PLAIN = frozenset((str, int, float, bool))


def _add_leaves(value: Any, path: str, out: list[tuple[str, Any]]) -> None:
    """``_leaves`` of ``value`` (at ``path``, not one shown elsewhere) appended to ``out``;
    null children are passed over before their path is even written, plain ones appended
    without a call of their own."""
    if isinstance(value, dict):
        children: Any = value.items()
    elif isinstance(value, list):
        if not value:
            return
        if all(not isinstance(v, dict | list) for v in value):
            out.append((path, ", ".join(_scalar(v) for v in value)))
            return
        children = enumerate(value, start=1)
    else:
        if value is not None:
            out.append((path, value))
        return
    for key, child in children:
        if child is None:
            continue
        child_path = f"{path}.{key}"
        if child_path in FACTS_SHOWN_ELSEWHERE:
            continue
        if type(child) in _PLAIN:
            out.append((child_path, child))
        else:
            _add_leaves(child, child_path, out)


@cache
def _schema_path(path: str) -> str:
    return re.sub(r"\.\d+(?=\.|$)", "", path)


def _declared(path: str, declared: set[str]) -> bool:
    parts = path.split(".")
    return any(".".join(parts[:i]) in declared for i in range(1, len(parts) + 1))


def facts(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Every recorded (non-null) fact of the run file, by section: field, value, whether a
    person declared it or it was detected (by the harness, or parsed from the output)."""
    declared = set(_get(run, "provenance.declared") or [])
    described = schema_descriptions()
    known = [key for key, _ in FACT_SECTIONS]
    rest = [key for key in run if key not in known and isinstance(run[key], dict | list)]
    sections = []
    for key, title in [*FACT_SECTIONS, *((k, k) for k in rest)]:
        if key in FACTS_SHOWN_ELSEWHERE:
            continue
        rows = [
            _fact_row(path, value, declared and _declared(path, declared), described)
            for path, value in _leaves(run.get(key), key)
        ]
        if rows:
            sections.append({"title": title, "rows": rows})
    top = [
        _fact_row(k, run[k], False, described)
        for k in run
        if not isinstance(run[k], dict | list) and run[k] is not None
    ]
    return [{"title": "Run", "rows": top}, *sections]


def _fact_row(path: str, value: Any, declared: bool, described: dict[str, str]) -> dict[str, str]:
    """One fact as the page lists it: field and value; ``declared`` only when a person declared
    it (detected is the rule); ``key``, the field's path in the schema, only when it differs
    from the field (a list item) and the schema describes it. The descriptions themselves are
    written once, into ``data/fields.json`` (``field_descriptions``), not into every page."""
    shown = _scalar(value)
    if path.startswith("provenance."):
        shown = labels.readable(shown)  # the lists of fields declared, masked, uncertain
    row = {"field": path, "label": labels.field_label(path), "value": shown}
    if declared:
        row["how"] = "declared"
    key = _schema_path(path)
    if key != path and key in described:
        row["key"] = key
    return row


def field_descriptions() -> dict[str, str]:
    """What ``data/fields.json`` holds: each run-file field's description, by its schema path
    (the facts table shows it on hovering the field's name)."""
    return {k: labels.readable(v) for k, v in sorted(schema_descriptions().items())}


def _quoted(name: Any) -> str | None:
    return f"“{name}”" if name else None


def split_settings(
    settings: dict[str, Any] | None, block_size: Any = None, *, transcribed: bool = False
) -> dict[str, Any]:
    """Settings a person chose, apart from the lines initdb writes into every new cluster;
    each as its postgresql.conf line (``shared_buffers = 23987  # 8 kB pages ≈ 187 MB``).
    ``known`` is false when the run does not record them (``postgres.settings: null``), or when
    a transcribed run's source states none (a setting a source leaves out is not stated, not
    at its default: setup_text._setting_words); that is not the same as every setting at its
    default."""
    changed: list[dict[str, str]] = []
    initdb: list[dict[str, str]] = []
    size = block_size if isinstance(block_size, int) else None
    for name, value in sorted((settings or {}).items()):
        row = {"name": name, "line": labels.conf_line(name, value, size)}
        written = name in INITDB_WRITES and INITDB_WRITES[name] in {None, str(value)}
        (initdb if written else changed).append(row)
    known = settings is not None and not (transcribed and not settings)
    return {"changed": changed, "initdb": initdb, "known": known}


def ordered_percentiles(
    percentiles: dict[str, Any] | None, source: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Latency percentiles in reading order (min first, max last): the known ones, and of
    those computed from a log only the ones that enough logged latencies support."""
    percentiles = percentiles or {}
    count = (source or {}).get("latencies")
    shown = []
    for key, label, fraction in PERCENTILE_LABELS:
        value = percentiles.get(key)
        if not isinstance(value, int | float):
            continue
        too_few = isinstance(count, int) and fraction is not None
        if too_few and count * (1 - fraction) < TAIL_LATENCIES_NEEDED:
            continue
        shown.append({"label": label, "ms": value, "shown": fmt.ms(float(value))})
    return shown


def describe_percentile_source(source: dict[str, Any] | None) -> str | None:
    """``from 619 logged transactions (about 5.2% of all)``, when the run file says."""
    count = (source or {}).get("latencies")
    if not isinstance(count, int):
        return None
    rate = (source or {}).get("sampling_rate")
    share = ""
    if isinstance(rate, int | float) and 0 < rate < 1:
        share = f" (about {fmt.percent(rate * 100)} of all)"
    return f"from {fmt.count(count, 'logged transaction')}{share}"


def describe_statistic(results: dict[str, Any]) -> str:
    statistic = results.get("statistic") or "single"
    runs = results.get("of_runs") or 1
    if statistic == "single" or runs == 1:
        return "one run"
    # A run file standing for several runs holds a statistic its source published.
    return f"published {statistic} of {fmt.count(runs, 'run')}"


def sample_spread(results: dict[str, Any]) -> dict[str, Any] | None:
    """The tps samples behind a published median or mean, with min, max and variation."""
    samples = [s for s in (_get(results, "samples.tps") or []) if isinstance(s, int | float)]
    if len(samples) < 2:
        return None
    mean = statistics.fmean(samples)
    cv = statistics.stdev(samples) / mean * 100 if mean else None
    return {
        "range": f"{fmt.figure(float(min(samples)))} to {fmt.tps(max(samples))}",
        "cv": fmt.percent(cv) if cv is not None else None,
        "values": ", ".join(fmt.figure(float(s)) or "" for s in samples),
    }


def statements(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for item in results.get("statements") or []:
        if not isinstance(item, dict):
            continue
        rows.append(
            {
                "script": _scalar(item["script"]) if item.get("script") is not None else None,
                "latency": fmt.ms(item.get("latency_ms")),
                "failures": fmt.figure(item.get("failures")),
                "retries": fmt.figure(item.get("retries")),
                "command": str(item.get("command") or ""),
            }
        )
    return rows


def counters(run: dict[str, Any]) -> list[dict[str, str]]:
    stats = run.get("server_stats") or {}
    rows = []
    for key, label, how in COUNTERS:
        shown = how(stats.get(key))
        if shown is not None:
            rows.append({"label": label, "field": f"server_stats.{key}", "value": shown})
    return rows


def raw_output(run: dict[str, Any], root: Path) -> dict[str, Any] | None:
    """The pgbench output the figures were read from, as text, and its path."""
    for item in run.get("raw") or []:
        if isinstance(item, dict) and item.get("kind") == "output" and item.get("path"):
            # Only a regular file inside data/raw, at most MAX_RAW_OUTPUT_BYTES (what kb check
            # accepts): a path with '..', a link or /dev/zero is not read (issue #22).
            try:
                path = contributed_path(root, str(item["path"]))
                data = read_bytes_bounded(path, max_bytes=MAX_RAW_OUTPUT_BYTES, hint="")
            except (OSError, KbError):
                return {"path": str(item["path"]), "text": None}
            return {"path": str(item["path"]), "text": data.decode("utf-8", errors="replace")}
    return None


def major_version(version: Any) -> str | None:
    """``8.0`` → ``8.0``, ``10.1`` → ``10``, ``17devel`` → ``17``: the release a reader means."""
    text = str(version or "")
    match = re.match(r"^(\d+)(?:\.(\d+))?", text)
    if not match:
        return None
    major, minor = match.groups()
    return major if int(major) >= 10 or minor is None else f"{major}.{minor}"


def facets(run: dict[str, Any], row: dict[str, Any]) -> dict[str, str]:
    """What search filters on (Pagefind ``data-pagefind-filter``), one word or phrase each."""
    storage = run.get("storage") or {}
    level = _get(storage, "data.array.level")
    wal = _get(storage, "wal.placement")
    found = {
        "PostgreSQL": (
            f"PostgreSQL {v}" if (v := major_version(row["postgres_version"])) else None
        ),
        "RAID level": LEVEL_NAMES.get(level, level) if level else None,
        "WAL placement": WAL_PLACEMENT.get(wal, wal) if wal else None,
        "Write cache": short_cache(storage.get("controller")),
        "OS": _get(run, "server.os.name"),
        "Filesystem": _get(storage, "data.filesystem"),
        "Workload": row["workload"],
        "Origin": "synthetic" if run.get("synthetic") else row["origin"],
        "Machine": row["machine"],
        **source_facets(run),
    }
    return {name: str(value) for name, value in found.items() if value}


#: The source facet of runs measured with this project's harness (no publication behind them).
HARNESS_SOURCE = "pgbench-kb's bench"


def source_facets(run: dict[str, Any]) -> dict[str, str | None]:
    """Where a run comes from, for search and the explorer (issue 32): the publication or
    result tree (its title) and its author, or this project's bench and whoever contributed
    the run; an author the source does not name is left out, not guessed."""
    provenance = run.get("provenance") or {}
    source = provenance.get("source") or {}
    if source:
        return {"Source": source.get("title"), "Author": source.get("author")}
    if provenance.get("harness"):
        return {"Source": HARNESS_SOURCE, "Author": provenance.get("contributor")}
    return {"Source": None, "Author": None}


def imported_set(run: dict[str, Any]) -> dict[str, Any] | None:
    """The published result tree a measured run was imported from (``kb import TREE``): its
    title, author, year, terms, commit and home address; None for any other run."""
    source = (run.get("provenance") or {}).get("source") or {}
    if run.get("origin") != "measured" or source.get("kind") != "measurement":
        return None
    url = str(source.get("url") or "")
    return {
        "title": source.get("title"),
        "author": source.get("author"),
        "year": source.get("year"),
        "terms": source.get("terms"),
        "revision": source.get("revision"),
        "home": url.split("/blob/")[0] if "/blob/" in url else url or None,
        "kept": any(item.get("kind") == "output" for item in run.get("raw") or []),
    }


def run_row(run: dict[str, Any], path: Path) -> dict[str, Any]:
    """The flat fields a list, a table row, a facet or the CSV download needs."""
    bench = run.get("benchmark") or {}
    results = run.get("results") or {}
    postgres = run.get("postgres") or {}
    provenance = run.get("provenance") or {}
    source = provenance.get("source") or {}
    os_facts = _get(run, "server.os") or {}
    row = {
        "id": run.get("id"),
        "file": path.as_posix(),
        "origin": run.get("origin"),
        "synthetic": bool(run.get("synthetic")),
        "machine": run.get("machine"),
        "client_machine": _get(run, "client.machine"),
        "recorded_at": str(provenance.get("recorded_at")),
        "contributor": provenance.get("contributor"),
        "source_title": source.get("title") if run.get("origin") == "transcribed" else None,
        "source_locator": source.get("locator") if run.get("origin") == "transcribed" else None,
        "imported_set": imported_set(run),
        "workload": (bench.get("workload") or {}).get("name"),
        "scale": bench.get("scale"),
        "clients": bench.get("clients"),
        "threads": bench.get("threads"),
        "duration_s": bench.get("duration_s"),
        "transactions_per_client": bench.get("transactions_per_client"),
        "query_mode": bench.get("query_mode"),
        "postgres_version": postgres.get("version"),
        "settings_profile": postgres.get("settings_profile"),
        "os": " ".join(str(v) for v in (os_facts.get("name"), os_facts.get("release")) if v)
        or None,
        "storage": describe_storage(run.get("storage")),
        "storage_short": short_storage(run.get("storage")),
        "tps": results.get("tps"),
        "latency_avg_ms": results.get("latency_avg_ms"),
        "statistic": describe_statistic(results),
        "group": _get(run, "repeat.group"),
        "smoke": tryout.is_smoke(run),
        "label": tryout.label(run),
    }
    evidence = bottleneck.run_summary(run)
    if evidence is not None:  # only then: the rows of older runs stay as they were
        row["evidence"] = evidence
    row["tps_shown"] = fmt.figure(row["tps"]) if row["tps"] is not None else None
    row["latency_shown"] = fmt.figure(row["latency_avg_ms"])
    row["clients_shown"] = fmt.count(row["clients"], "client")
    return row


def workload_words(row: dict[str, Any]) -> str:
    """``tpcb-like · 100 clients``"""
    parts = [row["workload"] or "custom script", row["clients_shown"]]
    return " · ".join(p for p in parts if p)


def run_title(row: dict[str, Any], apart: list[str]) -> str:
    """Short: what was run and what sets the run apart from its machine's other runs."""
    title = workload_words(row)
    return f"{title} · {', '.join(apart)}" if apart else f"{title} · {row['machine']}"


def figures(run: dict[str, Any], row: dict[str, Any]) -> list[dict[str, str]]:
    """The headline figures, each one line."""
    results = run.get("results") or {}
    shown = []

    def add(label: str, value: str | None, note: str | None = None) -> None:
        if value is not None:
            shown.append({"label": label, "value": value, "note": note or ""})

    if row.get("label"):
        kind, _, why = str(row["label"]).partition(": ")
        add("Kind of run", kind, why)
    add("Throughput", fmt.tps(row["tps"]) or "not reported", row["statistic"])
    if why := under_one_tps(row):
        add("Under one transaction a second", *why)
    add("Including connection time", fmt.tps(results.get("tps_including_connections")))
    spread = sample_spread(results)
    if spread:
        add("Runs behind it", spread["values"] + " tps", f"range {spread['range']}")
        add("Variation between runs", spread["cv"], "coefficient of variation")
    add("Lowest tps reported", fmt.tps(results.get("tps_min")))
    add("Highest tps reported", fmt.tps(results.get("tps_max")))
    add("Latency, average", fmt.ms(results.get("latency_avg_ms")) or "not reported")
    add("Latency, standard deviation", fmt.ms(results.get("latency_stddev_ms")))
    add("Transactions", fmt.figure(results.get("transactions_processed")))
    add("Failed transactions", fmt.figure(results.get("failed_transactions") or None))
    add("Skipped transactions", fmt.figure(results.get("skipped_transactions") or None))
    add("Initial connection time", fmt.ms(results.get("initial_connection_time_ms")))
    if results.get("aborted"):
        add("Aborted", "yes", "pgbench stopped early: the figures are incomplete")
    return shown


def under_one_tps(row: dict[str, Any]) -> tuple[str, str] | None:
    """Why a throughput below 1 tps is right, when it is (the talk's COPY runs read 0.1994 tps
    beside 5,015 ms and looked swapped): each client's transactions took seconds, and clients
    ÷ the average latency gives the tps pgbench reported (within 2%). None otherwise."""
    tps, latency, clients = row.get("tps"), row.get("latency_avg_ms"), row.get("clients")
    if not (isinstance(tps, int | float) and 0 < tps < 1 and latency and clients):
        return None
    if abs(clients * 1000 / latency / tps - 1) > 0.02:
        return None
    return (
        f"each transaction took {fmt.ms(latency)} on average",
        f"{row['clients_shown']} ÷ {fmt.seconds(latency / 1000)} = {fmt.tps(tps)}: "
        "the two figures agree",
    )


def latency_trust_rows(trust: dict[str, Any] | None) -> list[dict[str, str]]:
    """A figure row saying why the run's latencies get no verdict (analyze/latency_trust.py)."""
    if not trust:
        return []
    return [{"label": "Latency figures", "value": "not judged", "note": str(trust["reason"])}]


def setup(run: dict[str, Any], row: dict[str, Any]) -> list[dict[str, str]]:
    bench = run.get("benchmark") or {}
    workload = ", ".join(
        p
        for p in (
            row["workload"] or "custom script",
            f"scale {fmt.figure(row['scale'])}" if row["scale"] is not None else None,
            row["clients_shown"],
            fmt.count(row["threads"], "thread"),
            fmt.seconds(row["duration_s"]),
            fmt.count(row["transactions_per_client"], "transaction") + " per client"
            if row["transactions_per_client"]
            else None,
            f"{row['query_mode']} protocol" if row["query_mode"] else None,
        )
        if p
    )
    build = _get(run, "postgres.build") or {}
    version = row["postgres_version"] or "version not stated"
    if build.get("patches"):
        version += " with " + ", ".join(str(p) for p in build["patches"])
    rows = [
        ("Storage", row["storage"]),
        ("Operating system", row["os"]),
        ("PostgreSQL", version),
        ("Build", build.get("source")),
        # The name of the set of settings the bench or source compared ('defaults' is the
        # bench profile's set without changes), never a claim about the settings themselves:
        # the settings section lists those. Regression (issue 35): "Settings: defaults" stood
        # beside "Settings that differ from PostgreSQL's defaults".
        ("Settings set compared", _quoted(row["settings_profile"])),
        ("Workload", workload),
        ("Command", bench.get("command")),
    ]
    return [{"label": label, "value": str(value)} for label, value in rows if value]
