"""The end-of-run text pgbench prints: summary, progress lines, ``-r`` report, aborts, banner.

Every number in the result is copied from the text, never computed, so a reported figure can
always be found in the input. Figures the output does not give are ``None``.

Formats from PostgreSQL 8.0 to 18 are read (see docs/parser.md and the formats reference):
the 14+ banner, ``duration:`` (8.4+), ``latency average:`` (9.4–9.5) and ``=`` (9.6+), both
``tps`` lines up to 13 and the single one from 14, ``SQL script N:`` blocks (9.6+) with their
9.6–17 and 18 layouts, and statement lines with 0, 1 or 2 count columns.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pgbench_kb.errors import ParseError
from pgbench_kb.parse.textlines import (
    MAX_LINE_CHARS,
    NUM,
    QUOTE_LIMIT,
    BadValue,
    Line,
    LinePattern,
    first_bad_number,
    num,
    printable,
    quote,
    to_int,
)

MAX_MESSAGES = 50


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _count_with_share(label: str, key: str) -> LinePattern:
    """``number of LABEL: N`` with pgbench's optional ``(x.xxx%)`` / ``(x.xxx %)`` share."""
    return LinePattern(r"^number of " + label + r": {I}(?: \({n} ?%\))?$", key)


# ---------------------------------------------------------------------------------------------
# Line patterns. All are matched against a stripped line.

BANNER = _compile(r"^pgbench \((\d[^\s,()]*)(.*)\)$")
SERVER_IN_BANNER = _compile(r", server (\d[^\s,()]*)")

TRANSACTION_TYPE = _compile(r"^transaction type: (.+)$")
PARTITION_METHOD = _compile(r"^partition method: (\w+)$")
QUERY_MODE = _compile(r"^query mode: (\w+)$")

#: Lines that carry one number: ``(pattern, converter)``, the key being the pattern's field.
SCALARS: list[tuple[LinePattern, Callable[[str, str], Any]]] = [
    (LinePattern(r"^scaling factor: {I}$", "scale"), to_int),
    (LinePattern(r"^partitions: {I}$", "partitions"), to_int),
    (LinePattern(r"^number of clients: {I}$", "clients"), to_int),
    (LinePattern(r"^number of threads: {I}$", "threads"), to_int),
    (LinePattern(r"^maximum number of tries: {I}$", "max_tries"), to_int),
    (LinePattern(r"^duration: {I} s$", "duration_s"), to_int),
    (
        LinePattern(r"^number of transactions per client: {I}$", "transactions_per_client"),
        to_int,
    ),
    (_count_with_share("failed transactions", "failed_transactions"), to_int),
    (_count_with_share("serialization failures", "serialization_failures"), to_int),
    (_count_with_share("deadlock failures", "deadlock_failures"), to_int),
    (_count_with_share("other failures", "other_failures"), to_int),
    (_count_with_share("transactions retried", "transactions_retried"), to_int),
    (LinePattern(r"^total number of retries: {I}$", "total_retries"), to_int),
    (
        LinePattern(
            r"^number of transactions skipped: {I}(?: \({n} ?%\))?$", "skipped_transactions"
        ),
        to_int,
    ),
    (
        LinePattern(r"^zipfian cache array overflowed {I} time\(s\)$", "zipfian_cache_overflows"),
        to_int,
    ),
    (LinePattern(r"^latency stddev\s*[=:]\s*{N} ms$", "latency_stddev_ms"), num),
    (LinePattern(r"^initial connection time = {N} ms$", "initial_connection_time_ms"), num),
    (LinePattern(r"^average connection time = {N} ms$", "average_connection_time_ms"), num),
]

PROCESSED = LinePattern(
    r"^number of transactions (?:actually )?processed: {I}(?:/{I})?$",
    "transactions_processed",
    "transactions_expected",
)
ABOVE_LIMIT = LinePattern(
    r"^number of transactions above the {N} ms latency limit: {I}(?:/{I})?(?: \({n} ?%\))?$",
    "latency_limit_ms",
    "transactions_above_limit",
    "transactions_above_limit",
)
LATENCY_AVG = LinePattern(
    r"^latency average\s*[=:]\s*{N} ms( \(including failures\))?$", "latency_avg_ms"
)
LAG = LinePattern(
    r"^rate limit schedule lag: avg {N} \(max {N}\) ms$",
    "rate_limit_lag_avg_ms",
    "rate_limit_lag_max_ms",
)
TPS_LABELS = (
    "including connections establishing",
    "excluding connections establishing",
    "without initial connection time",
    "including reconnection times",
)
TPS = LinePattern(r"^tps = {N} \((" + "|".join(TPS_LABELS) + r")\)$", "tps")
# A bare ``tps = X`` (seen in hand-edited posts). pgbench prints tps with %f, so six decimals
# prove the number was not cut short (a shorter one is taken as cut, not as a smaller figure).
TPS_BARE = LinePattern(r"^tps = {N}$", "tps")
SIX_DECIMALS = _compile(r"^\d+\.\d{6}$")
PROGRESS = _compile(
    r"^progress: (?P<t>"
    + NUM
    + r") s, (?P<tps>"
    + NUM
    + r") tps, lat (?P<lat>"
    + NUM
    + r") ms stddev (?P<sd>"
    + NUM
    + r")(?: ms)?(?:, (?P<failed>\d+) failed)?"
    r"(?:, lag (?P<lag>" + NUM + r") ms)?(?:, (?P<skipped>\d+) skipped)?"
    r"(?:, (?P<retried>\d+) retried, (?P<retries>\d+) retries)?"
)
STATEMENT_HEADER = _compile(
    r"^(?:- )?statement latencies in milliseconds(?P<cols> and failures|, failures and retries)?"
    r"(?:, file (?P<file>\d+))?:(?P<rest>.*)$"
)
SCRIPT_STATISTICS = _compile(r"^script statistics:$")
SCRIPT_HEADER = LinePattern(r"^SQL script {I}: (.+)$", "scripts")
BLOCK_WEIGHT = LinePattern(
    r"^- weight: {I} \(targets {N}% of total\)$", "weight", "weight_share_pct"
)
BLOCK_TRANSACTIONS = LinePattern(
    r"^- {I} transactions \({N}% of total(?:, tps = {N})?\)$",
    "transactions",
    "transactions_share_pct",
    "tps",
)
BLOCK_PROCESSED = LinePattern(
    r"^- number of transactions actually processed: {I} \(tps = {N}\)$",
    "transactions_processed",
    "tps",
)
BLOCK_LATENCY = LinePattern(r"^- latency (average|stddev) = {N} ms$", "latency_ms")
BLOCK_COUNTS: list[LinePattern] = [
    LinePattern(r"^- number of failed transactions: {I}", "failed_transactions"),
    LinePattern(r"^- number of serialization failures: {I}", "serialization_failures"),
    LinePattern(r"^- number of deadlock failures: {I}", "deadlock_failures"),
    LinePattern(r"^- number of other failures: {I}", "other_failures"),
    LinePattern(r"^- number of transactions retried: {I}", "transactions_retried"),
    LinePattern(r"^- total number of retries: {I}$", "total_retries"),
    LinePattern(r"^- number of transactions skipped: {I}", "skipped_transactions"),
]
BLOCK_LINES = (BLOCK_WEIGHT, BLOCK_TRANSACTIONS, BLOCK_PROCESSED, BLOCK_LATENCY, *BLOCK_COUNTS)
ABORT = _compile(
    r"(?:\b[Cc]lient \d+ (?:script \d+ )?aborted\b|\bRun was aborted\b|"
    r"\baborted (?:in|while) establishing connection)"
)
RUN_ABORTED = _compile(r"\bRun was aborted\b")
WARNING = _compile(r"^(?:(?:pgbench: )?warning: |WARNING:\s|NOTICE:\s|[Ss]cale option ignored)")
# pgbench's name as a message starts with it: ``pgbench:``, or the path it was started by, as
# getopt prints it (``/usr/lib/postgresql/15/bin/pgbench: unrecognized option '--bad-option'``).
_PROGRAM = r"(?:\S*[/\\])?pgbench(?:\.exe)?: "
# What getopt says about a command line it refuses (glibc, BSD and the copy in PostgreSQL).
_GETOPT = (
    r"(?:unrecognized option|invalid option|illegal option|option requires an argument|"
    r"option '[^']*' (?:requires|doesn't allow) an argument|option '[^']*' is ambiguous)"
)
ERROR = _compile(
    r"^(?:" + _PROGRAM + r"(?:error|fatal): |" + _PROGRAM + _GETOPT + r"|error: |FATAL:\s|"
    r"ERROR:\s|psql: |[Cc]onnection to database .* failed|could not connect to server|"
    r"[Cc]onnection to server .* failed)"
)
ERROR_PREFIX = _compile(r"^(?:" + _PROGRAM + r"(?:(?:error|fatal): )?|(?:error|fatal): )")

WORKLOADS = {
    "tpc-b (sort of)": "tpcb-like",
    "simple update": "simple-update",
    "update only accounts": "simple-update",
    "update only pgbench_accounts": "simple-update",
    "select only": "select-only",
    "multiple scripts": "multiple",
}

SUMMARY_KEYS = (
    "transaction_type",
    "scale",
    "clients",
    "transactions_processed",
    "tps",
    "tps_including_connections",
    "tps_including_reconnections",
    "query_mode",
    "duration_s",
    "transactions_per_client",
    "latency_avg_ms",
    "threads",
)


def empty_summary() -> dict[str, Any]:
    """The summary object with every key present, in the documented order."""
    return {
        "kind": "summary",
        "pgbench_version": None,
        "server_version": None,
        "transaction_type": None,
        "workload": None,
        "scale": None,
        "partition_method": None,
        "partitions": None,
        "query_mode": None,
        "clients": None,
        "threads": None,
        "max_tries": None,
        "duration_s": None,
        "transactions_per_client": None,
        "transactions_processed": None,
        "transactions_expected": None,
        "failed_transactions": None,
        "serialization_failures": None,
        "deadlock_failures": None,
        "other_failures": None,
        "transactions_retried": None,
        "total_retries": None,
        "skipped_transactions": None,
        "latency_limit_ms": None,
        "transactions_above_limit": None,
        "zipfian_cache_overflows": None,
        "latency_avg_ms": None,
        "latency_avg_includes_failures": None,
        "latency_stddev_ms": None,
        "rate_limit_lag_avg_ms": None,
        "rate_limit_lag_max_ms": None,
        "initial_connection_time_ms": None,
        "average_connection_time_ms": None,
        "tps": None,
        "tps_including_connections": None,
        "tps_including_reconnections": None,
        "aborted": False,
        "abort_messages": [],
        "warnings": [],
        "progress": [],
        "progress_timestamps": None,
        "statements": [],
        "scripts": [],
        "notes": [],
    }


def workload_of(transaction_type: str) -> str:
    """The pgbench ``-b`` name for a ``transaction type:`` value, or ``custom``."""
    inner = transaction_type.strip()
    if inner.startswith("<builtin:") and inner.endswith(">"):
        inner = inner[len("<builtin:") : -1].strip()
    return WORKLOADS.get(inner.lower(), "custom")


@dataclass
class _State:
    """What the line-by-line reader has collected so far."""

    source: str
    result: dict[str, Any] = field(default_factory=empty_summary)
    seen: dict[str, int] = field(default_factory=dict)
    tps: dict[str, tuple[float | None, int, str]] = field(default_factory=dict)
    errors: list[Line] = field(default_factory=list)
    script: dict[str, Any] | None = None
    in_block: bool = False
    statement_counts: int | None = None
    statement_script: int | None = None
    last_line: int = 0

    def two_runs(self, what: str, first: int, line: Line) -> ParseError:
        """The error for a line that a single run's output prints only once, seen twice."""
        return ParseError(
            f"the input holds more than one run: {what} is given on lines {first} and "
            f"{line.number}",
            path=self.source,
            line=line.number,
            hint="give each run's output in its own file",
        )

    def set_once(self, key: str, value: Any, line: Line) -> None:
        """Set a top-level key; a second, different line for the same key means two runs."""
        if key in self.seen:
            raise self.two_runs(f"'{key}'", self.seen[key], line)
        self.seen[key] = line.number
        self.result[key] = value

    def figure(self, token: str, key: str, line: Line) -> float | None:
        """A printed figure; nan/inf (which JSON cannot hold) become null with a note."""
        value = num(token, key)
        if value is None:
            self.result["notes"].append(
                f"line {line.number}: {key} is printed as {quote(token, 40)}; kept as null"
            )
        return value

    def add_tps(self, label: str, token: str, line: Line) -> None:
        """Keep one ``tps = …`` line by its label; the same label twice means two runs."""
        if label in self.tps:
            raise self.two_runs(f"'tps = … ({label})'", self.tps[label][1], line)
        self.tps[label] = (num(token, "tps"), line.number, token)


def _new_script(index: int, name: str) -> dict[str, Any]:
    return {
        "index": index,
        "name": name,
        "weight": None,
        "weight_share_pct": None,
        "transactions": None,
        "transactions_share_pct": None,
        "transactions_processed": None,
        "tps": None,
        "failed_transactions": None,
        "serialization_failures": None,
        "deadlock_failures": None,
        "other_failures": None,
        "transactions_retried": None,
        "total_retries": None,
        "skipped_transactions": None,
        "latency_avg_ms": None,
        "latency_stddev_ms": None,
    }


def _statement_pattern(counts: int) -> re.Pattern[str]:
    ints = r"(\d+)\s+" * counts
    return re.compile(r"^(" + NUM + r")\s+" + ints + r"(\S.*)$")


STATEMENT_LINES = {n: _statement_pattern(n) for n in (0, 1, 2)}
# A statement line whose latency (printed with a decimal point) or counts are in a form pgbench
# never prints: ``1,234.5  0  BEGIN;``. Only for the error message.
_LOOSE_LATENCY = r"(?P<v0>[-+]?\d[\d,]*\.\d+(?:[eE][-+]?\d+)?)\s+"
LOOSE_STATEMENT_LINES = {
    n: re.compile(
        "^"
        + _LOOSE_LATENCY
        + "".join(rf"(?P<v{i + 1}>[-+]?\d[\d,.]*)\s+" for i in range(n))
        + r"\S"
    )
    for n in (0, 1, 2)
}
# For statements run together on one line: a latency with 3 or 6 decimals, its count columns,
# then the command up to the next such group.
STATEMENT_RUNS = {
    n: re.compile(r"(?:^|\s)(\d+\.\d{3}(?:\d{3})?)\s+" + r"(\d+)\s+" * n + r"(?=\S)")
    for n in (0, 1, 2)
}


def _add_statement(state: _State, groups: tuple[str, ...], counts: int) -> None:
    latency = num(groups[0], "statements")
    failures = to_int(groups[1], "statements") if counts >= 1 else None
    retries = to_int(groups[2], "statements") if counts >= 2 else None
    state.result["statements"].append(
        {
            "latency_ms": latency,
            "failures": failures,
            "retries": retries,
            "command": groups[-1].strip(),
            "script": state.statement_script,
        }
    )


def _bad_statement(text: str, counts: int) -> BadValue | None:
    """The malformed number of a statement line that the strict pattern refused, if any."""
    m = LOOSE_STATEMENT_LINES[counts].match(text)
    if m is None:
        return None
    for index in range(counts + 1):
        value = m.group(f"v{index}")
        if index == 0:
            bad = first_bad_number(value, "statements")
        else:
            bad = None if value.isdigit() and len(value) <= 19 else BadValue(value, "statements")
        if bad is not None:
            return bad
    return None


def _read_statements_run_together(state: _State, text: str, counts: int) -> None:
    """Statement lines that lost their line breaks, e.g. ``0.001 0 \\set a 1 0.002 0 BEGIN;``."""
    matches = list(STATEMENT_RUNS[counts].finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        command = text[match.end() : end].strip()
        if command:
            _add_statement(state, (*match.groups(), command), counts)


def _handle_statement_header(state: _State, match: re.Match[str]) -> None:
    cols = match.group("cols")
    state.statement_counts = 0 if not cols else (2 if "retries" in cols else 1)
    if match.group("file"):
        state.statement_script = to_int(match.group("file"), "statements")
    elif state.script is not None:
        state.statement_script = state.script["index"]
    else:
        state.statement_script = None
    rest = match.group("rest").strip()
    if rest:
        _read_statements_run_together(state, rest, state.statement_counts)


def _handle_block_line(state: _State, line: Line) -> bool:
    """A `` - …`` line of a ``SQL script N:`` block; True when it was one."""
    text = line.text
    script = state.script
    if not text.startswith("- ") or not state.in_block:
        return False
    header = STATEMENT_HEADER.match(text)
    if header:
        _handle_statement_header(state, header)
        return True
    if script is None:
        # "script statistics:" (9.6–10, one script): only the statement report matters.
        return True
    if m := BLOCK_WEIGHT.match(text):
        script["weight"] = to_int(m[1], "weight")
        script["weight_share_pct"] = num(m[2], "weight_share_pct")
    elif m := BLOCK_TRANSACTIONS.match(text):
        script["transactions"] = to_int(m[1], "transactions")
        script["transactions_share_pct"] = num(m[2], "transactions_share_pct")
        if m[3] is not None:
            script["tps"] = num(m[3], "tps")
    elif m := BLOCK_PROCESSED.match(text):
        script["transactions_processed"] = to_int(m[1], "transactions_processed")
        script["tps"] = num(m[2], "tps")
    elif m := BLOCK_LATENCY.match(text):
        key = "latency_avg_ms" if m[1] == "average" else "latency_stddev_ms"
        script[key] = num(m[2], key)
    else:
        for pattern in BLOCK_COUNTS:
            if m := pattern.match(text):
                script[pattern.fields[0]] = to_int(m[1], pattern.fields[0])
                break
        else:
            _refuse_bad_value(BLOCK_LINES, text)
    return True


def _refuse_bad_value(patterns: tuple[LinePattern, ...], text: str) -> None:
    """Raise ``BadValue`` when ``text`` is one of these lines with a number pgbench never prints."""
    for pattern in patterns:
        bad = pattern.bad_value(text)
        if bad is not None:
            raise bad


def progress_entry(m: re.Match[str]) -> dict[str, Any]:
    """One ``-P`` report as the ``progress`` list holds it (``BadValue`` for a damaged number)."""

    def opt_int(name: str) -> int | None:
        value = m.group(name)
        return to_int(value, "progress") if value is not None else None

    lag = m.group("lag")
    return {
        "t_s": num(m.group("t"), "progress"),
        "tps": num(m.group("tps"), "progress"),
        "latency_ms": num(m.group("lat"), "progress"),
        "stddev_ms": num(m.group("sd"), "progress"),
        "failed": opt_int("failed"),
        "lag_ms": num(lag, "progress") if lag is not None else None,
        "skipped": opt_int("skipped"),
        "retried": opt_int("retried"),
        "retries": opt_int("retries"),
    }


def progress_reports(text: str) -> list[dict[str, Any]]:
    """Every ``-P`` report in ``text`` in order — also in the output of a pgbench still running,
    which has no summary yet (the bench harness's live display reads it this way). A damaged
    line, or one longer than any pgbench prints (``MAX_LINE_CHARS``), is left out."""
    reports = []
    for line in text.splitlines():
        if len(line) > MAX_LINE_CHARS:
            continue
        with contextlib.suppress(BadValue):
            if entry := _progress_of(line):
                reports.append(entry)
    return reports


def _progress_of(line: str) -> dict[str, Any] | None:
    m = PROGRESS.match(line.strip())
    return progress_entry(m) if m else None


PROGRESS_START = "progress: "


def _handle_progress(state: _State, m: re.Match[str], text: str) -> None:
    # The pattern reads what it knows and leaves the rest (a later version's fields); a number
    # it stopped at because of its form is an error, not a field to skip.
    bad = first_bad_number(text[m.end() :], "progress")
    if bad is not None:
        raise bad
    state.result["progress"].append(progress_entry(m))


def _handle_scalar(state: _State, line: Line) -> bool:
    text = line.text
    for pattern, convert in SCALARS:
        if m := pattern.match(text):
            key = pattern.fields[0]
            value = state.figure(m[1], key, line) if convert is num else convert(m[1], key)
            state.set_once(key, value, line)
            return True
    if m := TRANSACTION_TYPE.match(text):
        state.set_once("transaction_type", m[1], line)
        state.result["workload"] = workload_of(m[1])
    elif m := PARTITION_METHOD.match(text):
        state.set_once("partition_method", m[1], line)
    elif m := QUERY_MODE.match(text):
        state.set_once("query_mode", m[1], line)
    elif m := PROCESSED.match(text):
        processed = to_int(m[1], "transactions_processed")
        expected = to_int(m[2], "transactions_expected") if m[2] is not None else None
        state.set_once("transactions_processed", processed, line)
        state.result["transactions_expected"] = expected
    elif m := ABOVE_LIMIT.match(text):
        limit = state.figure(m[1], "latency_limit_ms", line)
        state.set_once("transactions_above_limit", to_int(m[2], "transactions_above_limit"), line)
        state.result["latency_limit_ms"] = limit
    elif m := LATENCY_AVG.match(text):
        state.set_once("latency_avg_ms", state.figure(m[1], "latency_avg_ms", line), line)
        state.result["latency_avg_includes_failures"] = True if m[2] else None
    elif m := LAG.match(text):
        state.set_once(
            "rate_limit_lag_avg_ms", state.figure(m[1], "rate_limit_lag_avg_ms", line), line
        )
        state.result["rate_limit_lag_max_ms"] = state.figure(m[2], "rate_limit_lag_max_ms", line)
    elif m := TPS.match(text):
        state.add_tps(m[2], m[1], line)
    elif (m := TPS_BARE.match(text)) and SIX_DECIMALS.match(m[1]):
        state.add_tps("bare", m[1], line)
    elif m := BANNER.match(text):
        state.set_once("pgbench_version", m[1], line)
        server = SERVER_IN_BANNER.search(m[2])
        state.result["server_version"] = server[1] if server else None
    else:
        return False
    return True


#: Every line with numbers that the summary reader knows, for ``_refuse_bad_value``.
KNOWN_LINES = (
    *(pattern for pattern, _ in SCALARS),
    PROCESSED,
    ABOVE_LIMIT,
    LATENCY_AVG,
    LAG,
    TPS,
    TPS_BARE,
    SCRIPT_HEADER,
)
#: The start of every line in ``KNOWN_LINES``: a quick test before trying each loose pattern.
_KNOWN_START = _compile(
    r"^(?:scaling factor|partitions|number of |maximum number|duration|total number|zipfian|"
    r"latency |initial connection|average connection|rate limit|tps =|SQL script )"
)


def _handle_messages(state: _State, line: Line) -> None:
    """Abort, warning and error lines, which can appear anywhere."""
    text = line.text
    result = state.result
    if ABORT.search(text):
        result["aborted"] = True
        if len(result["abort_messages"]) < MAX_MESSAGES:
            result["abort_messages"].append(text)
    elif WARNING.match(text) and len(result["warnings"]) < MAX_MESSAGES:
        result["warnings"].append(text)
    if ERROR.match(text):
        state.errors.append(line)


def _read_line(state: _State, line: Line) -> None:
    """One line into ``state`` (``BadValue`` for a known line with a malformed number)."""
    text = line.text
    if m := SCRIPT_HEADER.match(text):
        state.script = _new_script(to_int(m[1], "scripts"), m[2].strip())
        state.result["scripts"].append(state.script)
        state.in_block, state.statement_counts = True, None
        return
    if SCRIPT_STATISTICS.match(text):
        state.script, state.in_block, state.statement_counts = None, True, None
        return
    if _handle_block_line(state, line):
        return
    if m := PROGRESS.match(text):
        _handle_progress(state, m, text)
        return
    if m := STATEMENT_HEADER.match(text):
        state.in_block = False
        _handle_statement_header(state, m)
        return
    if _handle_scalar(state, line):
        state.in_block, state.statement_counts = False, None
        return
    counts = state.statement_counts
    if counts is not None:
        if m := STATEMENT_LINES[counts].match(text):
            _add_statement(state, m.groups(), counts)
            return
        if (bad := _bad_statement(text, counts)) is not None:
            raise bad
    if _KNOWN_START.match(text):
        _refuse_bad_value(KNOWN_LINES, text)
    elif text.startswith(PROGRESS_START) and (bad := first_bad_number(text, "progress")):
        raise bad
    _handle_messages(state, line)


def read_lines(lines: list[Line], source: str) -> tuple[dict[str, Any], list[Line]]:
    """Collect everything the summary parser knows from ``lines``.

    Returns the (not yet checked) result and the error lines found. A line pgbench prints with a
    number in a form pgbench never prints (``number of clients: 1,000``) is a ParseError that
    names the line, not a figure left out.
    """
    state = _State(source=source)
    for line in lines:
        state.last_line = line.number
        try:
            _read_line(state, line)
        except BadValue as bad:
            raise ParseError(
                bad.reason, path=source, line=line.number, field=bad.field, hint=bad.hint
            ) from None
    _settle_tps(state, source)
    return state.result, state.errors


def _settle_tps(state: _State, source: str) -> None:
    result = state.result
    tps = state.tps
    including = tps.get("including connections establishing")
    excluding = tps.get("excluding connections establishing") or tps.get(
        "without initial connection time"
    )
    reconnect = tps.get("including reconnection times")
    bare = tps.get("bare")
    result["tps_including_connections"] = including[0] if including else None
    result["tps_including_reconnections"] = reconnect[0] if reconnect else None
    chosen = excluding or reconnect or bare
    result["tps"] = chosen[0] if chosen else None
    for entry in (including, chosen):
        if entry is None or entry[0] is not None:
            continue
        _, number, token = entry
        if result["transactions_processed"] == 0:
            result["notes"].append(f"line {number}: tps is printed as {quote(token, 40)}")
            continue
        raise ParseError(
            f"{quote(token, 40)} is not a figure of a run that processed transactions",
            path=source,
            line=number,
            field="tps",
            hint="the line looks edited; paste the output as pgbench printed it",
        )


def has_summary(result: dict[str, Any]) -> bool:
    """True when ``result`` holds any line that only a run summary prints."""
    return any(result.get(key) is not None for key in SUMMARY_KEYS)


def error_reason(errors: list[Line]) -> Line | None:
    """The most telling error line: the first one, preferring connection failures."""
    for line in errors:
        if "connection" in line.text.lower() and "failed" in line.text.lower():
            return line
    return errors[0] if errors else None


def clean_error(text: str) -> str:
    """An error line for a message: without pgbench's ``pgbench: error:`` prefix, printable,
    and cut when very long."""
    text = ERROR_PREFIX.sub("", text).strip()
    if len(text) > QUOTE_LIMIT:
        text = text[:QUOTE_LIMIT] + "…"
    return printable(text)


def check_summary(
    result: dict[str, Any], errors: list[Line], source: str, last_line: int
) -> dict[str, Any]:
    """Refuse a summary that lacks its tps line (unless nothing ran); fill derived flags."""
    if result["tps"] is None and result["transactions_processed"] != 0:
        if result["tps_including_connections"] is not None:
            message = (
                "the summary has 'tps = … (including connections establishing)' but not the "
                "'excluding' line that follows it; the output looks cut short"
            )
        else:
            message = "the summary has no 'tps = …' line; the output looks cut short"
        reason = error_reason(errors)
        if reason is not None:
            message += f"; pgbench reported on line {reason.number}: {clean_error(reason.text)}"
        raise ParseError(
            message,
            path=source,
            line=last_line or None,
            hint="give the whole pgbench output, down to its tps line",
        )
    if result["tps"] is None:
        result["notes"].append("no transaction was processed, so pgbench printed no tps")
    progress = result["progress"]
    if progress:
        result["progress_timestamps"] = any(
            p["t_s"] is not None and p["t_s"] > 100_000_000 for p in progress
        )
    expected, processed = result["transactions_expected"], result["transactions_processed"]
    if not result["aborted"] and expected is not None and processed is not None:
        # In every version a short count shows aborted clients: before PostgreSQL 12 it is the
        # only sign, and from 12 the abort lines go to stderr, which saved output may lack.
        # Processed leaves out skipped transactions (11+, -R with -L) and failed ones (15+), so
        # only a count short of all three together means clients stopped early.
        done = processed + (result["skipped_transactions"] or 0)
        done += result["failed_transactions"] or 0
        if done < expected:
            result["aborted"] = True
            result["notes"].append(
                "fewer transactions processed, skipped or failed than expected: "
                "some clients aborted"
            )
    return result
