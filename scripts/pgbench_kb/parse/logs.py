"""pgbench log files: per-transaction (``--log``) and aggregated (``--aggregate-interval``).

Per-transaction logs can hold tens of millions of lines. They are read in one pass, in blocks of
a few MB, parsed a few at a time in threads by polars' CSV reader (only the columns the results
need) and reduced at once to a per-second table; only the latency column is kept (8 bytes a
transaction) and sorted at the end, so percentiles are exact. Aggregate logs are small and read
line by line.

When the fast reader refuses a file (or finds values no pgbench writes), a slow line-by-line
check finds the first bad line so that the error names it.
"""

from __future__ import annotations

import io
import itertools
import math
import re
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.errors import ParseError
from pgbench_kb.parse.detect import TX_WORDS, LogLayout
from pgbench_kb.parse.textlines import INT64_MAX, MAX_DIGITS, QUOTE_LIMIT, quote

#: Percentiles reported for per-transaction logs, as (key, fraction).
PERCENTILES = (
    ("p50", 0.50),
    ("p90", 0.90),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p999", 0.999),
)
#: A run whose log spans more than this is taken as a corrupted timestamp, not a real run.
MAX_SPAN_S = 31 * 24 * 3600
US_PER_S = 1_000_000
#: No transaction takes a day: a longer latency is a damaged line (and a log of such values
#: could overflow the sums).
MAX_LATENCY_US = 86_400 * US_PER_S
#: Schedule lag grows while a rate-limited run falls behind, but not past the longest run.
MAX_LAG_US = MAX_SPAN_S * US_PER_S
#: Unix time in the year 2286; pgbench writes time(NULL).
MAX_EPOCH_S = 10_000_000_000
#: The largest value pgbench can write in each column, and why; other columns are int64.
LIMITS: dict[str, tuple[int, str]] = {
    "latency_us": (MAX_LATENCY_US, "more than a day in µs: no transaction takes that long"),
    "latency_min_us": (MAX_LATENCY_US, "more than a day in µs: no transaction takes that long"),
    "latency_max_us": (MAX_LATENCY_US, "more than a day in µs: no transaction takes that long"),
    "schedule_lag_us": (MAX_LAG_US, f"more than {MAX_SPAN_S // 86400} days in µs"),
    "lag_min_us": (MAX_LAG_US, f"more than {MAX_SPAN_S // 86400} days in µs"),
    "lag_max_us": (MAX_LAG_US, f"more than {MAX_SPAN_S // 86400} days in µs"),
    "time_epoch_s": (MAX_EPOCH_S, "not a Unix time"),
    "interval_start": (MAX_EPOCH_S, "not a Unix time"),
    "time_us": (US_PER_S - 1, "not below 1000000"),
    "retries": (2**32 - 1, "more retries than pgbench counts"),
}
#: Sums of squares are printed from a double (%.0f): they may be wider than int64.
WIDE_DIGITS = {"latency_sum2_us": 40, "lag_sum2_us": 40}
_PID_IN_NAME = re.compile(r"\.(\d+)(?:\.(\d+))?$")
_CHUNK = 8 * 1024 * 1024
#: Blocks parsed at the same time (and so held in memory at once, with the one being read).
_AHEAD = 3


@dataclass(frozen=True)
class LogSource:
    """One log file's data: a path to stream from, or bytes already in memory."""

    name: str
    path: Path | None = None
    data: bytes | None = None

    def open(self) -> io.BufferedIOBase:
        """A binary stream of the log's bytes."""
        if self.path is not None:
            return open(self.path, "rb")
        return io.BytesIO(self.data or b"")


def _ms(us: float | None) -> float | None:
    """Microseconds to milliseconds with µs precision."""
    return None if us is None else round(us / 1000, 3)


def _iter_lines(source: LogSource) -> Iterator[tuple[int, str]]:
    with source.open() as stream:
        for number, raw in enumerate(stream, start=1):
            yield number, raw.decode("latin-1").rstrip("\r\n")


# ---------------------------------------------------------------------------------------------
# Line-by-line checks: used for aggregate logs, and to explain why the fast reader failed.


def _line_problem(fields: list[str], layout: LogLayout) -> str | None:
    """What is wrong with one split log line, or None."""
    columns = layout.columns
    if len(fields) != len(columns):
        return f"has {len(fields)} fields where this log has {len(columns)}"
    for value, name in zip(fields, columns, strict=True):
        if name == "latency_us" and value in TX_WORDS:
            continue
        if not value.isascii() or not value.isdigit():
            return f"{quote(value, 40)} in column {name} is not a whole number"
        digits = WIDE_DIGITS.get(name, MAX_DIGITS)
        if len(value) > digits:
            return (
                f"{quote(value, 40)} in column {name} has {len(value)} digits; pgbench writes "
                f"at most {digits} there"
            )
        number = int(value)
        if name not in WIDE_DIGITS and number > INT64_MAX:
            return f"{name} is {value}, larger than a 64-bit integer"
        limit = LIMITS.get(name)
        if limit is not None and number > limit[0]:
            return f"{name} is {value}, {limit[1]}"
    return None


def _bad_line(source: LogSource, number: int, layout: LogLayout, problem: str) -> ParseError:
    return ParseError(
        f"not a pgbench {layout.kind.replace('_', ' ')} line: {problem}",
        path=source.name,
        line=number,
        hint="the file looks damaged or mixes different files",
    )


def _find_bad_line(sources: Sequence[LogSource], layout: LogLayout) -> ParseError | None:
    for source in sources:
        for number, line in _iter_lines(source):
            if not line.strip():
                continue
            problem = _line_problem(line.split(" "), layout)
            if problem is not None:
                return _bad_line(source, number, layout, problem)
    return None


def _failure(sources: Sequence[LogSource], layout: LogLayout, detail: str) -> ParseError:
    located = _find_bad_line(sources, layout)
    if located is not None:
        return located
    if len(detail) > QUOTE_LIMIT:
        detail = detail[:QUOTE_LIMIT] + "…"
    return ParseError(
        f"could not read the {layout.kind.replace('_', ' ')}: {detail}",
        path=sources[0].name,
        hint="the file looks damaged",
    )


def check_same_run(sources: Sequence[LogSource]) -> None:
    """Refuse per-thread files whose names say they come from different pgbench processes."""
    pids: dict[str, str] = {}
    seen: set[str] = set()
    for source in sources:
        if source.name in seen:
            raise ParseError("the same file is given twice", path=source.name)
        seen.add(source.name)
        match = _PID_IN_NAME.search(Path(source.name).name)
        if match:
            pids.setdefault(match[1], source.name)
    if len(pids) > 1:
        first, second = list(pids.items())[:2]
        raise ParseError(
            f"the log files come from different runs: {first[1]} and {second[1]} were written "
            f"by pgbench processes {first[0]} and {second[0]}",
            path=second[1],
            hint="give the per-thread files of one run (pgbench_log.PID and pgbench_log.PID.N)",
        )


# ---------------------------------------------------------------------------------------------
# Per-transaction logs.


def _chunks(source: LogSource) -> Iterator[bytes]:
    """The source's bytes in blocks of about ``_CHUNK`` that end at a line end.

    A block's cut-off last line is read again with the next block (the stream seeks back), so
    each byte is copied at most once.
    """
    with source.open() as stream:
        while True:
            block = stream.read(_CHUNK)
            if not block:
                return
            if len(block) < _CHUNK:
                yield block
                return
            cut = block.rfind(b"\n") + 1
            if cut == 0:  # one line longer than a block: not a log line; keep it whole
                block += stream.readline()
                cut = len(block)
            elif cut < len(block):
                stream.seek(cut - len(block), io.SEEK_CUR)
                block = block[:cut]
            yield block


#: The columns the results are computed from; only these are converted and checked.
USED = ("latency_us", "time_epoch_s", "time_us", "schedule_lag_us", "retries")
_EXTRA = "extra"


def _only_blank_lines_are_odd(part: bytes, layout: LogLayout) -> bool:
    """True when every line of ``part`` is well formed or blank (blank lines read as nulls)."""
    for raw in part.decode("latin-1").splitlines():
        if raw.strip() and _line_problem(raw.split(" "), layout) is not None:
            return False
    return True


class _BadData(Exception):
    """A block of the log holds something pgbench never writes (found by the fast reader)."""


@dataclass
class _TxTotals:
    """What one pass over a per-transaction log keeps: small tables, one latency column."""

    latencies: list[Any]
    per_second: list[Any]
    words: dict[str, int]


def _read_transactions(sources: Sequence[LogSource], layout: LogLayout) -> _TxTotals:
    """One streaming pass: each block is parsed (used columns only) and reduced at once."""
    import polars as pl

    narrow = {"client_id": pl.Int32, "script_no": pl.Int32, "time_us": pl.Int32}
    # One column more than the layout, read as text: it must be empty on every line, which
    # notices a line with a field too many at almost no cost (unread columns are skipped).
    schema = pl.Schema(
        {name: narrow.get(name, pl.Int64) for name in layout.columns} | {_EXTRA: pl.String}
    )
    used = [n for n in layout.columns if n in USED]
    highs = [pl.col(n).max().alias(n) for n in used if n in LIMITS]
    lat = pl.col("latency_us")
    aggregates = [lat.count().alias("ok"), pl.len().alias("rows")]
    if "time_us" in used:
        aggregates += [
            pl.col("time_us").max().alias("end_us_max"),
            (pl.col("time_us").cast(pl.Int64) - lat.fill_null(0)).min().alias("start_us_min"),
        ]
    if "schedule_lag_us" in used:
        lag = pl.col("schedule_lag_us")
        # Summed as floats: lags of up to 31 days each could pass int64 (exact to 2^53 µs).
        aggregates += [lag.cast(pl.Float64).sum().alias("lag_sum"), lag.max().alias("lag_max")]
        aggregates += [lag.count().alias("lag_n")]
    if "retries" in used:
        aggregates += [pl.col("retries").sum().alias("retries")]
        aggregates += [(pl.col("retries") > 0).sum().alias("retried")]
    lows = [pl.col(n).min().alias(f"min_{n}") for n in used]
    others = [n for n in used if n != "latency_us"]

    def reduce_block(part: bytes) -> tuple[Any, Any, dict[str, int]]:
        """One block → its per-second table, its latencies, and its counts of status words."""
        if b"+" in part:  # polars reads "+5" as 5; pgbench writes no signs
            raise _BadData("a '+' sign")
        # A field that is not a whole number (the words for skipped and failed transactions
        # included) is read as null; nulls are then explained below or refused.
        frame = pl.read_csv(
            part,
            has_header=False,
            separator=" ",
            schema=schema,
            columns=[*(layout.columns.index(n) for n in used), len(layout.columns)],
            ignore_errors=True,
            missing_columns="insert",
            quote_char=None,
            raise_if_empty=False,
        )
        if frame[_EXTRA].null_count() != frame.height:
            raise _BadData("a line has a field too many")
        frame = frame.drop(_EXTRA)
        for name, top in frame.select(highs).row(0, named=True).items() if highs else ():
            if top is not None and top > LIMITS[name][0]:
                raise _BadData(f"{name} {top} is {LIMITS[name][1]}")
        if sum(frame[n].null_count() for n in others):
            if not _only_blank_lines_are_odd(part, layout):
                raise _BadData("a line has missing fields")
            frame = frame.filter(~pl.all_horizontal(pl.all().is_null()))
        missing = frame["latency_us"].null_count()
        words: dict[str, int] = {}
        if missing:
            words = {w: part.count(f" {w} ".encode()) for w in TX_WORDS}
            if sum(words.values()) != missing:
                raise _BadData("a latency field is empty")
        if "time_epoch_s" in used:
            reduced = frame.group_by("time_epoch_s").agg(*aggregates, *lows)
        else:
            reduced = frame.select(*aggregates, *lows)
        latencies = frame["latency_us"]
        return reduced, latencies.drop_nulls() if missing else latencies, words

    totals = _TxTotals([], [], dict.fromkeys(TX_WORDS, 0))
    blocks = (part for source in sources for part in _chunks(source))
    for reduced, latencies, words in _in_parallel(reduce_block, blocks):
        totals.per_second.append(reduced)
        totals.latencies.append(latencies)
        for word, count in words.items():
            totals.words[word] += count
    return totals


def _in_parallel(work: Any, items: Iterator[bytes], ahead: int = _AHEAD) -> Iterator[Any]:
    """``work(item)`` for each item, in order, with at most ``ahead`` items in flight.

    polars releases the GIL while it parses, so two blocks are parsed at once on two cores; the
    bound keeps memory to a few blocks however large the log is (``Executor.map`` would read the
    whole file ahead).
    """
    with ThreadPoolExecutor(max_workers=ahead) as pool:
        pending: deque[Future[Any]] = deque()
        for item in items:
            pending.append(pool.submit(work, item))
            if len(pending) > ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _merge(totals: _TxTotals, layout: LogLayout) -> tuple[Any, Any]:
    """The per-second table and the sorted latencies of the whole log."""
    import polars as pl

    if not totals.per_second:
        return pl.DataFrame({"ok": [0], "rows": [0]}), pl.DataFrame()
    per_second = pl.concat(totals.per_second)
    lows = [per_second[c].min() for c in per_second.columns if c.startswith("min_")]
    if any(low is not None and low < 0 for low in lows):
        raise _BadData("a negative value")
    if "time_epoch_s" in layout.columns:
        combine = {
            "ok": pl.col("ok").sum(),
            "rows": pl.col("rows").sum(),
            "end_us_max": pl.col("end_us_max").max(),
            "start_us_min": pl.col("start_us_min").min(),
            "lag_sum": pl.col("lag_sum").sum(),
            "lag_max": pl.col("lag_max").max(),
            "lag_n": pl.col("lag_n").sum(),
            "retries": pl.col("retries").sum(),
            "retried": pl.col("retried").sum(),
        }
        per_second = per_second.group_by("time_epoch_s").agg(
            expr.alias(name) for name, expr in combine.items() if name in per_second.columns
        )
    if not totals.latencies:
        return per_second, pl.Series("latency_us", [], dtype=pl.Int64)
    latencies = pl.concat(totals.latencies)
    totals.latencies.clear()
    return per_second, latencies.sort()


def _percentiles(ordered: Any) -> dict[str, float | None]:
    """Exact nearest-rank percentiles, min, max, mean and standard deviation, in ms.

    ``ordered`` is every latency of the log, sorted: the p-th percentile is the value at rank
    ceil(p × n), so it is always a latency that was logged.
    """
    keys = ("min", *(k for k, _ in PERCENTILES), "max", "avg", "stddev")
    total = len(ordered)
    if total == 0:
        return dict.fromkeys(keys, None)
    result: dict[str, float | None] = {"min": _ms(ordered[0])}
    for key, fraction in PERCENTILES:
        rank = max(1, math.ceil(fraction * total - 1e-9))
        result[key] = _ms(ordered[rank - 1])
    result["max"] = _ms(ordered[-1])
    if int(ordered[-1]) * total <= INT64_MAX:
        result["avg"] = _ms(int(ordered.sum()) / total)
    else:  # an integer sum could wrap around
        result["avg"] = _ms(float(ordered.cast(float).sum()) / total)
    result["stddev"] = _ms(ordered.std(ddof=0))
    return result


def _zeros(ordered: Any) -> int:
    """How many latencies are exactly 0 µs (``ordered`` is sorted: a search, not a pass)."""
    return int(ordered.search_sorted(1, side="left")) if len(ordered) else 0


def _sampling_hint(head_rows: list[list[str]]) -> tuple[bool | None, float | None]:
    """Guess from transaction numbers whether ``--sampling-rate`` thinned the log.

    pgbench numbers each client's transactions 1, 2, 3…; a sampled log keeps a random few.
    """
    by_client: dict[str, list[int]] = {}
    for row in head_rows:
        if len(row) < 2 or len(row[1]) > MAX_DIGITS:
            continue
        if row[0].isdigit() and row[1].isdigit():
            by_client.setdefault(row[0], []).append(int(row[1]))
    kept = spanned = 0
    for numbers in by_client.values():
        if len(numbers) >= 2:
            kept += len(numbers) - 1
            spanned += max(numbers) - min(numbers)
    if spanned == 0:
        return None, None
    rate = kept / spanned
    if rate >= 0.95:
        return False, None
    # Three decimals, as ever; a rate below a thousandth (a high-tps run sampled for 1,000
    # latencies) keeps two significant digits, never 0.0 (a bench at 80,000 tps logged at
    # 0.00031 was refused with "sampling_rate must be greater than 0, got 0.0").
    return True, round(rate, 3) if rate >= 0.001 else float(f"{rate:.2g}")


def parse_transaction_log(
    sources: Sequence[LogSource], layout: LogLayout, head_rows: list[list[str]]
) -> dict[str, Any]:
    """Read per-transaction log files of one run into the documented result."""
    import polars as pl

    if any(len(value) > MAX_DIGITS for row in head_rows for value in row):
        raise _failure(sources, layout, "a number longer than any pgbench writes")
    try:
        totals = _read_transactions(sources, layout)
    except (pl.exceptions.PolarsError, _BadData) as exc:
        raise _failure(sources, layout, str(exc).splitlines()[0] if str(exc) else "") from None
    except BaseException as exc:  # a Rust panic arrives as pyo3's PanicException
        if type(exc).__name__ != "PanicException":
            raise
        raise _failure(sources, layout, "the reader stopped on malformed data") from None
    try:
        per_second, latencies = _merge(totals, layout)
    except _BadData as exc:
        raise _failure(sources, layout, str(exc)) from None
    return _transaction_result(sources, layout, head_rows, per_second, latencies, totals.words)


def _sum(frame: Any, column: str) -> int | float:
    value = frame[column].sum()
    if value is None:
        return 0
    return value if isinstance(value, float) else int(value)


def _transaction_result(
    sources: Sequence[LogSource],
    layout: LogLayout,
    head_rows: list[list[str]],
    per_group: Any,
    latencies: Any,
    words: dict[str, int],
) -> dict[str, Any]:
    rows = _sum(per_group, "rows")
    if rows == 0:
        raise ParseError("the log file has no lines", path=sources[0].name)
    if "time_us" in layout.columns and per_group.height:
        top = per_group["end_us_max"].max()
        if top is not None and top >= US_PER_S:
            raise _failure(sources, layout, "a microseconds field is 1000000 or more")
    ok = _sum(per_group, "ok")
    failed = words["failed"] + words["serialization"] + words["deadlock"] + words["other"]
    sampled, rate = _sampling_hint(head_rows)
    notes = list(layout.notes)
    result: dict[str, Any] = {
        "kind": "transaction_log",
        "transactions": ok,
        "failed": failed,
        "skipped": words["skipped"],
        "serialization_failures": words["serialization"],
        "deadlock_failures": words["deadlock"],
        "other_failures": words["other"],
        "rows": rows,
        "latency_ms": _percentiles(latencies),
        "percentile_method": "nearest-rank",
        "zero_latencies": _zeros(latencies),
        "duration_s": None,
        "start_epoch_s": None,
        "tps_per_second": None,
        "retries": _sum(per_group, "retries") if "retries" in layout.columns else None,
        "retried": _sum(per_group, "retried") if "retries" in layout.columns else None,
        "schedule_lag_ms": _lag(per_group) if "schedule_lag_us" in layout.columns else None,
        "sampled": sampled,
        "estimated_sampling_rate": rate,
        "columns": list(layout.columns),
        "files": [s.name for s in sources],
        "notes": notes,
    }
    if "time_epoch_s" in layout.columns:
        _add_timeline(result, per_group, sources)
    else:
        notes.append("this log format (before 8.3) has no timestamps: no duration or series")
    if sampled:
        notes.append(
            "transaction numbers have gaps: the log looks sampled (--sampling-rate), so counts "
            "and tps_per_second are of logged rows, not of all transactions"
        )
    return result


def _lag(per_group: Any) -> dict[str, float | None]:
    count = _sum(per_group, "lag_n")
    if count == 0:
        return {"avg": None, "max": None}
    return {"avg": _ms(_sum(per_group, "lag_sum") / count), "max": _ms(per_group["lag_max"].max())}


def _add_timeline(result: dict[str, Any], per_group: Any, sources: Sequence[LogSource]) -> None:
    seconds = per_group.sort("time_epoch_s")
    first, last = int(seconds["time_epoch_s"][0]), int(seconds["time_epoch_s"][-1])
    if last == 0:
        result["notes"].append("all timestamps are 0 (pgbench on Windows): no duration or series")
        return
    if last - first > MAX_SPAN_S:
        raise ParseError(
            f"the log's timestamps span {last - first} s (from {first} to {last}), more than "
            f"{MAX_SPAN_S // 86400} days; a timestamp looks corrupted or the files mix runs",
            path=sources[0].name,
            hint="give the log files of one run",
        )
    epoch_us = seconds["time_epoch_s"] * US_PER_S
    start = int((epoch_us + seconds["start_us_min"]).min())
    end = int((epoch_us + seconds["end_us_max"]).max())
    result["duration_s"] = round((end - start) / US_PER_S, 6)
    result["start_epoch_s"] = first
    series = [0] * (last - first + 1)
    for second, count in zip(seconds["time_epoch_s"], seconds["ok"], strict=True):
        series[int(second) - first] = int(count)
    result["tps_per_second"] = series


# ---------------------------------------------------------------------------------------------
# Aggregate logs.


@dataclass
class _Interval:
    """One interval's figures, summed over the per-thread files."""

    count: int = 0
    latency_sum: int = 0
    latency_sum2: int = 0
    latency_min: int | None = None
    latency_max: int | None = None
    lag_sum: int = 0
    lag_count: int = 0
    lag_max: int | None = None


_AGG_COUNTS = (
    "skipped",
    "retried",
    "retries",
    "serialization_failures",
    "deadlock_failures",
    "other_failures",
)


def _interval_problem(values: list[int], lag: bool) -> str | None:
    """What makes one aggregate line impossible (sums and extremes that cannot go together)."""
    n, total, squares, low, high = values[1:6]
    if n == 0:
        return None if total == 0 else f"latency sum {total} with 0 transactions"
    if low > high:
        return f"minimum latency {low} above maximum {high}"
    # Sums and extremes are each rounded to whole µs: allow up to 1 µs per transaction.
    if not (low - 1) * n <= total <= (high + 1) * n:
        return f"latency sum {total} does not fit {n} transactions between {low} and {high} µs"
    if not max(low - 1, 0) ** 2 * n <= squares <= (high + 1) ** 2 * n:
        return (
            f"latency sum of squares {squares} does not fit {n} transactions between {low} "
            f"and {high} µs"
        )
    if lag and values[6] > (values[9] + 1) * n:
        return f"lag sum {values[6]} is above {n} transactions of the maximum lag {values[9]} µs"
    return None


def parse_aggregate_log(sources: Sequence[LogSource], layout: LogLayout) -> dict[str, Any]:
    """Read aggregate log files of one run into the documented result (intervals merged)."""
    intervals: dict[int, _Interval] = {}
    counts = {name: 0 for name in _AGG_COUNTS if name in layout.columns}
    index = {name: i for i, name in enumerate(layout.columns)}
    lag_written = False
    for source in sources:
        for number, line in _iter_lines(source):
            if not line.strip():
                continue
            fields = line.split(" ")
            problem = _line_problem(fields, layout)
            if problem is not None:
                raise _bad_line(source, number, layout, problem)
            values = [int(f) for f in fields]
            problem = _interval_problem(values, "lag_sum_us" in index)
            if problem is not None:
                raise ParseError(
                    f"impossible aggregate log line: {problem}",
                    path=source.name,
                    line=number,
                    hint="the file looks damaged or was cut short",
                )
            entry = intervals.setdefault(values[0], _Interval())
            n = values[1]
            entry.count += n
            entry.latency_sum += values[2]
            entry.latency_sum2 += values[3]
            if n > 0:
                low, high = values[4], values[5]
                entry.latency_min = (
                    low if entry.latency_min is None else min(entry.latency_min, low)
                )
                entry.latency_max = (
                    high if entry.latency_max is None else max(entry.latency_max, high)
                )
            if "lag_sum_us" in index:
                if any(values[index[c]] for c in ("lag_sum_us", "lag_max_us")):
                    lag_written = True
                entry.lag_sum += values[index["lag_sum_us"]]
                entry.lag_count += n
                lag_max = values[index["lag_max_us"]]
                entry.lag_max = lag_max if entry.lag_max is None else max(entry.lag_max, lag_max)
            for name in counts:
                counts[name] += values[index[name]]
    if not intervals:
        raise ParseError("the log file has no lines", path=sources[0].name)
    return _aggregate_result(sources, layout, intervals, counts, lag_written)


def _interval_length(starts: list[int]) -> int | None:
    steps = [b - a for a, b in itertools.pairwise(starts) if b > a]
    if not steps:
        return None
    return max(set(steps), key=steps.count)


def _aggregate_result(
    sources: Sequence[LogSource],
    layout: LogLayout,
    intervals: dict[int, _Interval],
    counts: dict[str, int],
    lag_written: bool,
) -> dict[str, Any]:
    starts = sorted(intervals)
    if starts[-1] - starts[0] > MAX_SPAN_S:
        raise ParseError(
            f"the log's intervals span {starts[-1] - starts[0]} s (from {starts[0]} to "
            f"{starts[-1]}), more than {MAX_SPAN_S // 86400} days; a timestamp looks corrupted",
            path=sources[0].name,
            hint="give the log files of one run",
        )
    entries = [intervals[s] for s in starts]
    total = sum(e.count for e in entries)
    length = _interval_length(starts)
    latency: dict[str, float | None] = {"avg": None, "min": None, "max": None, "stddev": None}
    if total:
        mean = sum(e.latency_sum for e in entries) / total
        square_mean = sum(e.latency_sum2 for e in entries) / total
        latency = {
            "avg": _ms(mean),
            "min": _ms(min(e.latency_min for e in entries if e.latency_min is not None)),
            "max": _ms(max(e.latency_max for e in entries if e.latency_max is not None)),
            "stddev": _ms(math.sqrt(max(square_mean - mean * mean, 0.0))),
        }
    notes = list(layout.notes)
    lag = None
    if "lag_sum_us" in layout.columns and lag_written:
        lag_n = sum(e.lag_count for e in entries)
        lag = {
            "avg": _ms(sum(e.lag_sum for e in entries) / lag_n) if lag_n else None,
            "max": _ms(max(e.lag_max or 0 for e in entries)),
        }
    failure_columns = [
        c for c in ("serialization_failures", "deadlock_failures", "other_failures") if c in counts
    ]
    failed = sum(counts[c] for c in failure_columns) if failure_columns else None
    if failed == 0:
        failed = None
        notes.append("failure columns are all 0; pgbench fills them only with --failures-detailed")
    if length is None:
        notes.append("only one interval: its length is unknown, so no tps per interval")
    else:
        notes.append("the last interval may be partial (the run ended inside it)")
    return {
        "kind": "aggregate_log",
        "intervals": len(starts),
        "interval_s": length,
        "start_epoch_s": starts[0],
        "transactions": total,
        "latency_ms": latency,
        "tps_per_interval": (
            [round(e.count / length, 3) for e in entries] if length is not None else None
        ),
        "transactions_per_interval": [e.count for e in entries],
        "failed": failed,
        "skipped": counts.get("skipped"),
        "retried": counts.get("retried"),
        "retries": counts.get("retries"),
        "serialization_failures": counts.get("serialization_failures"),
        "deadlock_failures": counts.get("deadlock_failures"),
        "other_failures": counts.get("other_failures"),
        "schedule_lag_ms": lag,
        "columns": list(layout.columns),
        "files": [s.name for s in sources],
        "notes": notes,
    }
