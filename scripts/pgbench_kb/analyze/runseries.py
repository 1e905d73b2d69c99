"""A run's throughput series, from what the run keeps: pgbench's progress reports (``-P``,
inline in ``results.progress`` or in the raw output that ``results.progress.raw_path``
names) and its aggregate logs (``--aggregate-interval``, kept under ``data/raw/``).

``run_facts`` takes from a run file's data what stability and curves read; ``read_series``
turns it into ``Series``, reading raw files under the root (a regular file inside
``data/raw``, within ``MAX_RAW_BYTES``). Text where a number belongs is a ``RunFileError``
naming the field. The statistics of a series are ``analyze/stability.py``'s.
"""

from __future__ import annotations

import gzip
import io
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pgbench_kb.errors import ParseError, RunFileError
from pgbench_kb.parse import parse_text
from pgbench_kb.runs.build import SERVER_STATS
from pgbench_kb.runs.runfile import contributed_path, read_bytes_bounded, read_stream_bounded

#: Server counters stability does not read (only ``checkpoints_timed`` and
#: ``checkpoints_requested``): the analysis's reading of run files skips them.
SERVER_STATS_UNREAD = tuple(
    name for name in SERVER_STATS if name not in ("checkpoints_timed", "checkpoints_requested")
)
#: Raw files larger than this are not read for a series (an aggregate log has one line per
#: interval: a day at one second is about 8 MiB).
MAX_RAW_BYTES = 256 * 2**20


@dataclass(frozen=True)
class Series:
    """Throughput interval by interval: ``ends_s[i]`` is the elapsed time in seconds at the end
    of interval ``i``, which began at ``ends_s[i - 1]`` (at ``start_s`` for the first one).
    ``tps[i]`` is None when the source did not say."""

    source: str
    start_s: float
    ends_s: tuple[float, ...]
    tps: tuple[float | None, ...]
    latency_ms: tuple[float | None, ...] | None = None

    @property
    def span_s(self) -> float:
        return self.ends_s[-1] - self.start_s if self.ends_s else 0.0


def series_from_progress(progress: Mapping[str, Any] | None) -> Series | None:
    """A ``results.progress`` mapping (inline lists) as a series; None without usable points.
    Text where a number belongs is a ``RunFileError`` naming the field.

    Times are made relative: ``--progress-timestamp`` prints Unix times, and the first report
    closes the first interval of ``interval_s`` seconds either way."""
    if not progress:
        return None
    if not isinstance(progress, Mapping):
        raise _not_numbers("results.progress", "expected a mapping")
    times = _numbers(progress.get("t_s"), "t_s")
    tps = _numbers(progress.get("tps"), "tps")
    latency = _numbers(progress.get("latency_ms"), "latency_ms")
    interval = progress.get("interval_s")
    if interval is not None and (type(interval) not in (int, float)):
        raise _not_numbers("results.progress.interval_s", f"expected a number, got {interval!r}")
    if not times or len(tps) != len(times) or None in times:
        return None
    first = interval or (times[1] - times[0] if len(times) > 1 else None)
    if not first or first <= 0 or any(b <= a for a, b in itertools.pairwise(times)):
        return None
    origin = times[0] - first
    return Series(
        source="progress",
        start_s=0.0,
        ends_s=tuple(t - origin for t in times),  # type: ignore[operator]
        tps=tps,
        latency_ms=latency if len(latency) == len(times) else None,
    )


def _not_numbers(field: str, message: str) -> RunFileError:
    return RunFileError(message, field=field, hint="run kb check on this file")


_PLAIN_NUMBERS = frozenset((int, float))


def _finite_sum(values: Sequence[float]) -> bool:
    """The sum is finite: no NaN or infinity among the values (and no overflow)."""
    try:
        return math.isfinite(math.fsum(values))
    except (OverflowError, ValueError):
        return False


def _numbers(values: Any, name: str) -> tuple[float | None, ...]:
    """A list from a progress series as floats, None for null or not finite; anything but a
    list of numbers and nulls is a ``RunFileError`` for ``results.progress.NAME``."""
    if values is None:
        return ()
    field = f"results.progress.{name}"
    if not isinstance(values, list | tuple):
        raise _not_numbers(field, f"expected a list of numbers, got {values!r:.40}")
    if set(map(type, values)) <= _PLAIN_NUMBERS and _finite_sum(values):
        return tuple(map(float, values))  # the usual case: every value a finite number
    out: list[float | None] = []
    for value in values:
        kind = type(value)
        if kind is float or kind is int:
            out.append(float(value) if math.isfinite(value) else None)
        elif value is None:
            out.append(None)
        else:
            raise _not_numbers(field, f"expected a list of numbers, got {value!r:.40}")
    return tuple(out)


def series_from_parsed_progress(points: Sequence[Mapping[str, Any]]) -> Series | None:
    """The ``progress`` list of a parsed summary (``parse_text``) as a series."""
    if not points:
        return None
    times = [p.get("t_s") for p in points]
    steps = [b - a for a, b in itertools.pairwise(times) if a is not None and b]
    return series_from_progress(
        {
            "interval_s": steps[0] if steps else times[0],
            "t_s": times,
            "tps": [p.get("tps") for p in points],
            "latency_ms": [p.get("latency_ms") for p in points],
        }
    )


def series_from_aggregate_logs(parsed_logs: Sequence[Mapping[str, Any]]) -> Series | None:
    """Aggregate logs of one run (one parsed log per pgbench thread) as one series: the
    transactions of the threads summed interval by interval, aligned on each interval's start.
    """
    counts: dict[int, int] = {}
    length: int | None = None
    for log in parsed_logs:
        interval = log.get("interval_s")
        per_interval = log.get("transactions_per_interval")
        start = log.get("start_epoch_s")
        if not interval or per_interval is None or start is None:
            continue
        if length is not None and interval != length:
            return None
        length = interval
        for i, count in enumerate(per_interval):
            key = start + i * interval
            counts[key] = counts.get(key, 0) + count
    if not counts or length is None:
        return None
    first, last = min(counts), max(counts)
    starts = range(first, last + 1, length)
    return Series(
        source="aggregate_log",
        start_s=0.0,
        ends_s=tuple(float(s - first + length) for s in starts),
        tps=tuple(counts.get(s, 0) / length for s in starts),
    )


def finite_number(value: Any) -> float | None:
    """A finite int or float as a float; anything else (None, NaN, a bool, text) as None."""
    kind = type(value)
    if (kind is float or kind is int) and math.isfinite(value):
        return float(value)
    if kind is not bool and isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def rounded(value: float | None, digits: int = 6) -> float | None:
    """``value`` to ``digits`` decimals (the figures of an analysis), None kept."""
    return None if value is None else round(value, digits)


def run_facts(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The part of a run file that stability and curves read, as a small run-shaped dict
    (``id``, ``machine``, ``benchmark.duration_s``, ``results`` figures, progress and
    percentiles, the checkpoint counters, the raw files holding series); None when the run has
    no series and no percentiles. The loader keeps it with each run, so run files are read
    once."""
    results = data.get("results") or {}
    raws = [dict(r) for r in data.get("raw") or [] if isinstance(r, Mapping)]
    progress = results.get("progress")
    percentiles = results.get("latency_percentiles_ms")
    has_logs = any(r.get("kind") == "aggregate_log" for r in raws)
    if not progress and not percentiles and not has_logs:
        return None
    stats = data.get("server_stats") or {}
    return {
        "id": data.get("id"),
        "machine": data.get("machine"),
        "benchmark": {"duration_s": (data.get("benchmark") or {}).get("duration_s")},
        "results": {
            "tps": results.get("tps"),
            "latency_avg_ms": results.get("latency_avg_ms"),
            "latency_percentiles_ms": percentiles,
            "latency_percentiles_from": results.get("latency_percentiles_from"),
            "progress": progress,
            "checkpoints": results.get("checkpoints"),
        },
        "server_stats": {
            "checkpoints_timed": stats.get("checkpoints_timed"),
            "checkpoints_requested": stats.get("checkpoints_requested"),
        },
        # All entries, so that an error names the same raw[i] as the run file.
        "raw": raws if (has_logs or (progress or {}).get("raw_path")) else [],
    }


def read_series(
    run: Mapping[str, Any], root: Path | None, run_path: str | None = None
) -> list[Series]:
    """Every series a run has: its progress reports (inline, or from the raw output that
    ``raw_path`` names) and its aggregate logs. Raw files are read under ``root`` (not at all
    when it is None); one that is missing or unreadable is a ``RunFileError`` naming the run
    file (``run_path``), the field and the raw file."""
    found: list[Series] = []
    progress = (run.get("results") or {}).get("progress")
    raws = list(run.get("raw") or [])
    where = run_path or f"run {run.get('id')}"
    if progress:
        raw_path = progress.get("raw_path")
        one = None
        if not raw_path:
            one = series_from_progress(progress)
        elif root is not None:
            field = "results.progress.raw_path"
            parsed = _parse_raw(root, raw_path, where, field)
            one = series_from_parsed_progress(parsed.get("progress") or [])
        if one is not None:
            found.append(one)
    if root is not None:
        logs = [
            _parse_raw(root, r["path"], where, f"raw[{i}].path")
            for i, r in enumerate(raws)
            if r.get("kind") == "aggregate_log" and r.get("path")
        ]
        one = series_from_aggregate_logs(logs) if logs else None
        if one is not None:
            found.append(one)
    return found


def _parse_raw(root: Path, rel: str, where: str, field: str) -> dict[str, Any]:
    """A raw file of a run, parsed (gunzipped first when its name ends in .gz)."""
    hint = "run kb check, which names what is missing or changed"

    def refuse(message: str) -> RunFileError:
        return RunFileError(f"{rel}: {message}", path=where, field=field, hint=hint)

    if PurePosixPath(rel).is_absolute() or ".." in PurePosixPath(rel).parts:
        raise refuse("the raw file's path leaves the project")
    try:
        # A regular file inside data/raw, never a link (what kb check accepts: issue #22).
        path = contributed_path(root, rel)
        data = read_bytes_bounded(path, max_bytes=MAX_RAW_BYTES, hint=hint)
        if rel.endswith(".gz"):
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
                data = read_stream_bounded(stream, max_bytes=MAX_RAW_BYTES, name=rel, hint=hint)
    except RunFileError as exc:
        raise refuse(exc.message) from None
    except FileNotFoundError:
        raise refuse("cannot read: No such file or directory") from None
    except (OSError, EOFError) as exc:
        raise refuse(f"not a readable gzip file ({exc})") from None
    try:
        return parse_text(data.decode("utf-8", "replace"), source=rel)
    except ParseError as exc:
        line = f"line {exc.line}: " if exc.line is not None else ""
        raise refuse(f"{line}{exc.message}") from None


#: A raw file of a run parsed, as stability reads it (``analyze/latency_trust.py`` reads the
#: transaction logs through it).
parse_raw = _parse_raw
