"""What kind of input this is: binary data, a pgbench log file (and which layout), or text.

Log layouts are told apart by their number of columns and, where that is ambiguous, by what
the values look like (see ``sniff_log``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: How much of a file is read to decide what it is.
HEAD_BYTES = 256 * 1024
#: How many log lines are looked at to decide the layout.
SNIFF_LINES = 2000

#: Words pgbench writes instead of a latency in a per-transaction log.
TX_WORDS = ("skipped", "failed", "serialization", "deadlock", "other")
_LOG_LINE = re.compile(r"^\d+(?: (?:\d+|" + "|".join(TX_WORDS) + r"))+$")
_CONTROL = frozenset(range(0, 32)) - {9, 10, 12, 13}
EPOCH_MIN = 100_000_000  # 1973: anything smaller in the first column is a client id

TX_BASE = ("client_id", "transaction_no", "latency_us", "script_no", "time_epoch_s", "time_us")
AGG_BASE = (
    "interval_start",
    "transactions",
    "latency_sum_us",
    "latency_sum2_us",
    "latency_min_us",
    "latency_max_us",
)
AGG_LAG = ("lag_sum_us", "lag_sum2_us", "lag_min_us", "lag_max_us")
AGG_LAYOUTS = {
    6: AGG_BASE,  # 9.3
    10: AGG_BASE + AGG_LAG,  # 9.4+ with -R
    11: AGG_BASE + AGG_LAG + ("skipped",),  # 9.5-14 with -R -L
    15: AGG_BASE
    + AGG_LAG
    + ("skipped", "retried", "retries", "serialization_failures", "deadlock_failures"),  # 15-18
    16: AGG_BASE
    + AGG_LAG
    + (
        "skipped",
        "retried",
        "retries",
        "serialization_failures",
        "deadlock_failures",
        "other_failures",
    ),  # 19devel
}


@dataclass(frozen=True)
class LogLayout:
    """The columns of a pgbench log file, by name, and what was guessed to name them."""

    kind: str  # "transaction_log" or "aggregate_log"
    columns: tuple[str, ...]
    notes: tuple[str, ...] = ()


def looks_binary(head: bytes) -> bool:
    """True for data that is not text: NUL bytes, or many control bytes."""
    if not head:
        return False
    if b"\x00" in head:
        return True
    sample = head[:65536]
    controls = sum(1 for b in sample if b in _CONTROL)
    if controls > len(sample) * 0.02:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut multi-byte character at the end of the sample is fine; invalid bytes inside are
        # fine too if they are few (Latin-1 text). Many of them mean binary data.
        if exc.start < len(sample) - 4:
            high = sum(1 for b in sample if b >= 0x80)
            return high > len(sample) * 0.3
    return False


def decode_text(data: bytes) -> str:
    """Bytes as text: UTF-8, or Latin-1 when that fails (never raises)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def head_lines(text: str, limit: int = SNIFF_LINES) -> list[str]:
    """The first ``limit`` non-empty lines of ``text``, without complete-line guarantees."""
    lines: list[str] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped:
            lines.append(stripped)
            if len(lines) >= limit:
                break
    return lines


def _seventh_is_retries(rows: list[list[str]]) -> bool:
    """Tell a 7th column of retries (15+ with --max-tries) from schedule lag in µs (-R).

    Retries are small counts with few distinct values (0 up to max_tries - 1); a lag in
    microseconds takes many different values.
    """
    values = {r[6] for r in rows}
    if not all(v.isdigit() and len(v) <= 3 for v in values):
        return False  # not small counts; a word or a damaged value is reported later
    return max(int(v) for v in values) < 100 and len(values) <= 10


def _at_least(digits: str, bound: int) -> bool:
    """``int(digits) >= bound`` without converting thousands of digits (a damaged line)."""
    digits = digits.lstrip("0")
    if len(digits) != len(str(bound)):
        return len(digits) > len(str(bound))
    return int(digits) >= bound


def sniff_log(lines: list[str]) -> LogLayout | None:
    """The layout of a pgbench log whose first lines are ``lines``, or None if it is not one.

    The first line and nearly all others must be space-separated integers (or the words pgbench
    writes for skipped and failed transactions); the layout follows the most common column count.
    A last line that was cut short is allowed.
    """
    if not lines:
        return None
    complete = lines[:-1] if len(lines) > 1 else lines
    if not _LOG_LINE.match(complete[0]):
        return None
    rows = [line.split(" ") for line in complete if _LOG_LINE.match(line)]
    # A damaged line or two is reported later with its line number; mostly other text is not a log.
    if len(rows) < 0.9 * len(complete):
        return None
    widths = [len(row) for row in rows]
    width = max(set(widths), key=widths.count)
    rows = [row for row in rows if len(row) == width]
    first = rows[0]
    numeric_first = all(f.isdigit() for f in first)
    if numeric_first and width in AGG_LAYOUTS and _at_least(first[0], EPOCH_MIN):
        return LogLayout("aggregate_log", AGG_LAYOUTS[width])
    if width == 3:
        return LogLayout("transaction_log", TX_BASE[:3])
    if width == 6:
        return LogLayout("transaction_log", TX_BASE)
    if width == 7:
        if _seventh_is_retries(rows):
            return LogLayout(
                "transaction_log",
                (*TX_BASE, "retries"),
                ("7th column read as retries (a few small counts), not schedule lag",),
            )
        return LogLayout(
            "transaction_log",
            (*TX_BASE, "schedule_lag_us"),
            ("7th column read as schedule lag in µs (-R), not retries",),
        )
    if width == 8:
        return LogLayout("transaction_log", (*TX_BASE, "schedule_lag_us", "retries"))
    return None
