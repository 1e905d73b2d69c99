"""Runs whose latencies get no verdict: read from their transaction logs at analysis time.

The rules are ``runs/latency_zeros.py``'s (more than 1% of logged latencies at 0 µs:
``unreliable``; short latencies measured per transaction with no log: ``unverified``). Here a
run's logs are read (the same parser and reading limits as stability's raw files) and the
result is kept with the run's record (``RunRecord.latency_trust``, and each log's counts in
``RunRecord.log_counts``): ``kb derive`` keeps it in its cache of prepared runs with the rest
of the record, and ``kb compare`` keeps the counts per log in
``ROOT/build/cache/latency-zeros.pickle`` (``remember``), so a log is parsed again only when
it, its recorded sha256 or the code changed.

Such a run's latency figures feed nothing the analysis judges: no latency comparison, group
latency centre, curve latency, claim figure or TPC-C latency test reads them
(``trusted``). The comparisons whose groups hold such runs carry the reason
(``note_comparisons``), and the Comparisons JSON lists the runs (``latency_trust``).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.runseries import parse_raw
from pgbench_kb.errors import RunFileError
from pgbench_kb.runs import latency_zeros as rules
from pgbench_kb.runs.stamps import code_fingerprint, file_stamp

CACHE_DIR = Path("build") / "cache"


#: Per-log counts (zeros, logged transactions) kept in ``ROOT/build/cache/`` when that folder
#: exists, keyed by the log's path, the sha256 its run file records and its file stamp.
CACHE_NAME = "latency-zeros.pickle"
_counts: dict[str, dict[tuple[Any, ...], tuple[int, int]]] = {}


def _known(root: Path) -> dict[tuple[Any, ...], tuple[int, int]]:
    """The counts kept under ``root`` (read once per process and root)."""
    key = str(root)
    if key not in _counts:
        try:
            saved = pickle.loads((root / CACHE_DIR / CACHE_NAME).read_bytes())
        except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError):
            saved = None
        ok = isinstance(saved, dict) and saved.get("code") == code_fingerprint()
        _counts[key] = dict(saved["counts"]) if ok else {}
    return _counts[key]


def log_counts(
    data: Mapping[str, Any], root: Path, path: str
) -> tuple[tuple[tuple[Any, ...], tuple[int, int]], ...]:
    """Each transaction log of a run: (its cache key, (zeros, logged transactions)), read
    under ``root`` unless the cache has it."""
    known = _known(root)
    out = []
    for index, raw in enumerate(data.get("raw") or []):
        if not isinstance(raw, Mapping) or raw.get("kind") != "transaction_log":
            continue
        rel = raw.get("path")
        if not isinstance(rel, str):
            continue
        key = (rel, raw.get("sha256"), file_stamp(root / rel))
        counts = known.get(key)
        if counts is None:
            try:
                parsed = parse_raw(root, rel, path, f"raw[{index}].path")
            except RunFileError:
                continue  # missing or unreadable: kb check names it; nothing to count here
            if parsed.get("kind") != "transaction_log":
                continue  # kb check names a log of the wrong kind
            counts = (int(parsed.get("zero_latencies") or 0), int(parsed.get("transactions") or 0))
        out.append((key, counts))
    return tuple(out)


def remember(root: Path, records: Iterable[Any]) -> None:
    """Keep the per-log counts of ``records`` (``RunRecord.log_counts``) in the cache, when
    ``ROOT/build/cache/`` exists and they differ from what it holds."""
    folder = root / CACHE_DIR
    if not folder.is_dir():
        return
    counts = {key: value for r in records for key, value in getattr(r, "log_counts", ()) or ()}
    if counts == _known(root):
        return
    _counts[str(root)] = counts
    partial = folder / f"{CACHE_NAME}.{os.getpid()}.tmp"
    try:
        partial.write_bytes(
            pickle.dumps(
                {"code": code_fingerprint(), "counts": counts}, protocol=pickle.HIGHEST_PROTOCOL
            )
        )
        partial.replace(folder / CACHE_NAME)
    except OSError:
        partial.unlink(missing_ok=True)


def trust_of_run(
    data: Mapping[str, Any], counts: Sequence[tuple[Any, tuple[int, int]]] | None
) -> dict[str, Any] | None:
    """``LatencyTrust.as_dict()`` of one run file's data, or None when its latencies stand.
    ``counts``: its logs' ``log_counts``, None without a root to read them under. A run whose
    logs could not be read is judged by the rule for runs without a log."""
    if counts is None and rules.has_transaction_log(data):
        return None
    if not counts:
        found = rules.without_log(data, logged=False)
        return found.as_dict() if found is not None else None
    zero = sum(c[0] for _key, c in counts)
    logged = sum(c[1] for _key, c in counts)
    found = rules.from_counts(zero, logged)
    return found.as_dict() if found is not None else None


def trusted(run: Any) -> bool:
    """Whether a run record's latency figures may be judged."""
    return getattr(run, "latency_trust", None) is None


def listed(runs: Iterable[Any], group_of: Mapping[str, str]) -> list[dict[str, Any]]:
    """The ``latency_trust`` list of the Comparisons JSON: one entry per run whose latencies
    get no verdict, by run id."""
    return [
        {"run": run.id, "group": group_of.get(run.id), **run.latency_trust}
        for run in sorted(runs, key=lambda r: r.id)
        if not trusted(run)
    ]


def note_comparisons(comparisons: list[dict[str, Any]], groups: Iterable[Any]) -> None:
    """Each tps comparison with a run of untrusted latency in either group gets
    ``latency_untrusted``: those runs and the reason (the first run's), for the page."""
    untrusted = {g.id: [r for r in g.runs if not trusted(r)] for g in groups}
    untrusted = {gid: runs for gid, runs in untrusted.items() if runs}
    if not untrusted:
        return
    for c in comparisons:
        if c.get("metric", "tps") != "tps":
            continue
        runs = [*untrusted.get(c["a"]["group"], []), *untrusted.get(c["b"]["group"], [])]
        if not runs:
            continue
        reason = reason_of([r.latency_trust for r in runs])
        c["latency_untrusted"] = {"runs": sorted(r.id for r in runs), "reason": reason}


def reason_of(entries: list[Mapping[str, Any]]) -> str:
    """One sentence for several runs' ``latency_trust`` entries: the one run's reason, or the
    range of the shares of 0 µs."""
    shares = [e["share_pct"] for e in entries if isinstance(e.get("share_pct"), int | float)]
    if len(entries) < 2 or not shares:
        return str(entries[0]["reason"])
    low, high = min(shares), max(shares)
    span = fmt.percent(low) if low == high else f"{fmt.percent(low)}–{fmt.percent(high)}"
    return (
        f"latencies unreliable in {fmt.count(len(shares), 'run')}: {span} of logged "
        f"transactions read 0 µs: {rules.CAUSE}"
    )
