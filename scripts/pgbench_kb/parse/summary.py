"""The end-of-run text pgbench prints: summary, progress lines, ``-r`` report, aborts, banner.

Every number in the result is copied from the text, never computed, so a reported figure can
always be found in the input. Figures the output does not give are ``None``.

Formats from PostgreSQL 8.0 to 18 are read (see docs/parser.md and the formats reference):
the 14+ banner, ``duration:`` (8.4+), ``latency average:`` (9.4–9.5) and ``=`` (9.6+), both
``tps`` lines up to 13 and the single one from 14, ``SQL script N:`` blocks (9.6+) with their
9.6–17 and 18 layouts, and statement lines with 0, 1 or 2 count columns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pgbench_kb.errors import ParseError
from pgbench_kb.parse.textlines import NUM, Line, num

MAX_MESSAGES = 50


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _count_with_share(label: str) -> re.Pattern[str]:
    """``number of LABEL: N`` with pgbench's optional ``(x.xxx%)`` / ``(x.xxx %)`` share."""
    return _compile(r"^number of " + label + r": (\d+)(?: \(" + NUM + r" ?%\))?$")


# ---------------------------------------------------------------------------------------------
# Line patterns. All are matched against a stripped line.

BANNER = _compile(r"^pgbench \((\d[^\s,()]*)(.*)\)$")
SERVER_IN_BANNER = _compile(r", server (\d[^\s,()]*)")

#: ``(pattern, key, converter)`` for lines that carry one value.
SCALARS: list[tuple[re.Pattern[str], str, Callable[[str], Any]]] = [
    (_compile(r"^transaction type: (.+)$"), "transaction_type", str),
    (_compile(r"^scaling factor: (\d+)$"), "scale", int),
    (_compile(r"^partition method: (\w+)$"), "partition_method", str),
    (_compile(r"^partitions: (\d+)$"), "partitions", int),
    (_compile(r"^query mode: (\w+)$"), "query_mode", str),
    (_compile(r"^number of clients: (\d+)$"), "clients", int),
    (_compile(r"^number of threads: (\d+)$"), "threads", int),
    (_compile(r"^maximum number of tries: (\d+)$"), "max_tries", int),
    (_compile(r"^duration: (\d+) s$"), "duration_s", int),
    (_compile(r"^number of transactions per client: (\d+)$"), "transactions_per_client", int),
    (_count_with_share("failed transactions"), "failed_transactions", int),
    (_count_with_share("serialization failures"), "serialization_failures", int),
    (_count_with_share("deadlock failures"), "deadlock_failures", int),
    (_count_with_share("other failures"), "other_failures", int),
    (_count_with_share("transactions retried"), "transactions_retried", int),
    (_compile(r"^total number of retries: (\d+)$"), "total_retries", int),
    (
        _compile(r"^number of transactions skipped: (\d+)(?: \(" + NUM + r" ?%\))?$"),
        "skipped_transactions",
        int,
    ),
    (_compile(r"^zipfian cache array overflowed (\d+) time\(s\)$"), "zipfian_cache_overflows", int),
    (_compile(r"^latency stddev\s*[=:]\s*(" + NUM + r") ms$"), "latency_stddev_ms", num),
    (_compile(r"^initial connection time = (" + NUM + r") ms$"), "initial_connection_time_ms", num),
    (_compile(r"^average connection time = (" + NUM + r") ms$"), "average_connection_time_ms", num),
]

PROCESSED = _compile(r"^number of transactions (?:actually )?processed: (\d+)(?:/(\d+))?$")
ABOVE_LIMIT = _compile(
    r"^number of transactions above the (" + NUM + r") ms latency limit: (\d+)(?:/\d+)?"
    r"(?: \(" + NUM + r" ?%\))?$"
)
LATENCY_AVG = _compile(r"^latency average\s*[=:]\s*(" + NUM + r") ms( \(including failures\))?$")
LAG = _compile(r"^rate limit schedule lag: avg (" + NUM + r") \(max (" + NUM + r")\) ms$")
TPS = _compile(
    r"^tps = (" + NUM + r") \((including connections establishing|excluding connections "
    r"establishing|without initial connection time|including reconnection times)\)$"
)
# A bare ``tps = X`` (seen in hand-edited posts). pgbench prints tps with %f, so six decimals
# prove the number was not cut short.
TPS_BARE = _compile(r"^tps = (\d+\.\d{6})$")
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
SCRIPT_HEADER = _compile(r"^SQL script (\d+): (.+)$")
BLOCK_WEIGHT = _compile(r"^- weight: (\d+) \(targets (" + NUM + r")% of total\)$")
BLOCK_TRANSACTIONS = _compile(
    r"^- (\d+) transactions \((" + NUM + r")% of total(?:, tps = (" + NUM + r"))?\)$"
)
BLOCK_PROCESSED = _compile(
    r"^- number of transactions actually processed: (\d+) \(tps = (" + NUM + r")\)$"
)
BLOCK_LATENCY = _compile(r"^- latency (average|stddev) = (" + NUM + r") ms$")
BLOCK_COUNTS: list[tuple[re.Pattern[str], str]] = [
    (_compile(r"^- number of failed transactions: (\d+)"), "failed_transactions"),
    (_compile(r"^- number of serialization failures: (\d+)"), "serialization_failures"),
    (_compile(r"^- number of deadlock failures: (\d+)"), "deadlock_failures"),
    (_compile(r"^- number of other failures: (\d+)"), "other_failures"),
    (_compile(r"^- number of transactions retried: (\d+)"), "transactions_retried"),
    (_compile(r"^- total number of retries: (\d+)$"), "total_retries"),
    (_compile(r"^- number of transactions skipped: (\d+)"), "skipped_transactions"),
]
ABORT = _compile(
    r"(?:\b[Cc]lient \d+ (?:script \d+ )?aborted\b|\bRun was aborted\b|"
    r"\baborted (?:in|while) establishing connection)"
)
RUN_ABORTED = _compile(r"\bRun was aborted\b")
WARNING = _compile(r"^(?:(?:pgbench: )?warning: |WARNING:\s|NOTICE:\s|[Ss]cale option ignored)")
ERROR = _compile(
    r"^(?:pgbench: (?:error|fatal): |error: |FATAL:\s|ERROR:\s|psql: |"
    r"[Cc]onnection to database .* failed|could not connect to server|"
    r"[Cc]onnection to server .* failed)"
)
ERROR_PREFIX = _compile(r"^(?:pgbench: )?(?:error|fatal): ")

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
    tps: dict[str, tuple[float | None, int]] = field(default_factory=dict)
    errors: list[Line] = field(default_factory=list)
    script: dict[str, Any] | None = None
    in_block: bool = False
    statement_counts: int | None = None
    statement_script: int | None = None
    last_line: int = 0

    def set_once(self, key: str, value: Any, line: Line) -> None:
        """Set a top-level key; a second, different line for the same key means two runs."""
        if key in self.seen:
            raise ParseError(
                f"the input holds more than one run: '{key}' is given on lines "
                f"{self.seen[key]} and {line.number}",
                path=self.source,
                line=line.number,
                hint="give each run's output in its own file",
            )
        self.seen[key] = line.number
        self.result[key] = value

    def add_tps(self, label: str, value: float | None, line: Line) -> None:
        """Keep one ``tps = …`` line by its label; the same label twice means two runs."""
        if label in self.tps:
            raise ParseError(
                f"the input holds more than one run: 'tps = … ({label})' is given on lines "
                f"{self.tps[label][1]} and {line.number}",
                path=self.source,
                line=line.number,
                hint="give each run's output in its own file",
            )
        self.tps[label] = (value, line.number)


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
# For statements run together on one line: a latency with 3 or 6 decimals, its count columns,
# then the command up to the next such group.
STATEMENT_RUNS = {
    n: re.compile(r"(?:^|\s)(\d+\.\d{3}(?:\d{3})?)\s+" + r"(\d+)\s+" * n + r"(?=\S)")
    for n in (0, 1, 2)
}


def _add_statement(state: _State, groups: tuple[str, ...], counts: int) -> None:
    latency = num(groups[0])
    failures = int(groups[1]) if counts >= 1 else None
    retries = int(groups[2]) if counts >= 2 else None
    state.result["statements"].append(
        {
            "latency_ms": latency,
            "failures": failures,
            "retries": retries,
            "command": groups[-1].strip(),
            "script": state.statement_script,
        }
    )


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
        state.statement_script = int(match.group("file"))
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
        script["weight"], script["weight_share_pct"] = int(m[1]), num(m[2])
    elif m := BLOCK_TRANSACTIONS.match(text):
        script["transactions"], script["transactions_share_pct"] = int(m[1]), num(m[2])
        if m[3] is not None:
            script["tps"] = num(m[3])
    elif m := BLOCK_PROCESSED.match(text):
        script["transactions_processed"], script["tps"] = int(m[1]), num(m[2])
    elif m := BLOCK_LATENCY.match(text):
        script["latency_avg_ms" if m[1] == "average" else "latency_stddev_ms"] = num(m[2])
    else:
        for pattern, key in BLOCK_COUNTS:
            if m := pattern.match(text):
                script[key] = int(m[1])
                break
    return True


def progress_entry(m: re.Match[str]) -> dict[str, Any]:
    """One ``-P`` report as the ``progress`` list holds it."""

    def opt_int(name: str) -> int | None:
        value = m.group(name)
        return int(value) if value is not None else None

    lag = m.group("lag")
    return {
        "t_s": num(m.group("t")),
        "tps": num(m.group("tps")),
        "latency_ms": num(m.group("lat")),
        "stddev_ms": num(m.group("sd")),
        "failed": opt_int("failed"),
        "lag_ms": num(lag) if lag is not None else None,
        "skipped": opt_int("skipped"),
        "retried": opt_int("retried"),
        "retries": opt_int("retries"),
    }


def progress_reports(text: str) -> list[dict[str, Any]]:
    """Every ``-P`` report in ``text`` in order — also in the output of a pgbench still running,
    which has no summary yet (the bench harness's live display reads it this way)."""
    return [entry for line in text.splitlines() if (entry := _progress_of(line))]


def _progress_of(line: str) -> dict[str, Any] | None:
    m = PROGRESS.match(line.strip())
    return progress_entry(m) if m else None


def _handle_progress(state: _State, m: re.Match[str]) -> None:
    state.result["progress"].append(progress_entry(m))


def _handle_scalar(state: _State, line: Line) -> bool:
    text = line.text
    for pattern, key, convert in SCALARS:
        if m := pattern.match(text):
            state.set_once(key, convert(m[1]), line)
            if key == "transaction_type":
                state.result["workload"] = workload_of(m[1])
            return True
    if m := PROCESSED.match(text):
        state.set_once("transactions_processed", int(m[1]), line)
        state.result["transactions_expected"] = int(m[2]) if m[2] is not None else None
    elif m := ABOVE_LIMIT.match(text):
        state.set_once("transactions_above_limit", int(m[2]), line)
        state.result["latency_limit_ms"] = num(m[1])
    elif m := LATENCY_AVG.match(text):
        state.set_once("latency_avg_ms", num(m[1]), line)
        state.result["latency_avg_includes_failures"] = True if m[2] else None
    elif m := LAG.match(text):
        state.set_once("rate_limit_lag_avg_ms", num(m[1]), line)
        state.result["rate_limit_lag_max_ms"] = num(m[2])
    elif m := TPS.match(text):
        state.add_tps(m[2], num(m[1]), line)
    elif m := TPS_BARE.match(text):
        state.add_tps("bare", num(m[1]), line)
    elif m := BANNER.match(text):
        state.set_once("pgbench_version", m[1], line)
        server = SERVER_IN_BANNER.search(m[2])
        state.result["server_version"] = server[1] if server else None
    else:
        return False
    return True


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


def read_lines(lines: list[Line], source: str) -> tuple[dict[str, Any], list[Line]]:
    """Collect everything the summary parser knows from ``lines``.

    Returns the (not yet checked) result and the error lines found.
    """
    state = _State(source=source)
    for line in lines:
        state.last_line = line.number
        text = line.text
        if m := SCRIPT_HEADER.match(text):
            state.script = _new_script(int(m[1]), m[2].strip())
            state.result["scripts"].append(state.script)
            state.in_block, state.statement_counts = True, None
            continue
        if SCRIPT_STATISTICS.match(text):
            state.script, state.in_block, state.statement_counts = None, True, None
            continue
        if _handle_block_line(state, line):
            continue
        if m := PROGRESS.match(text):
            _handle_progress(state, m)
            continue
        if m := STATEMENT_HEADER.match(text):
            state.in_block = False
            _handle_statement_header(state, m)
            continue
        if _handle_scalar(state, line):
            state.in_block, state.statement_counts = False, None
            continue
        counts = state.statement_counts
        if counts is not None and (m := STATEMENT_LINES[counts].match(text)):
            _add_statement(state, m.groups(), counts)
            continue
        _handle_messages(state, line)
    _settle_tps(state)
    return state.result, state.errors


def _settle_tps(state: _State) -> None:
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
    """An error line without pgbench's ``pgbench: error:`` prefix."""
    return ERROR_PREFIX.sub("", text).strip()


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
    if (
        not result["aborted"]
        and result["failed_transactions"] is None
        and result["transactions_expected"] is not None
        and result["transactions_processed"] is not None
        and result["transactions_processed"] < result["transactions_expected"]
    ):
        # Before PostgreSQL 12 an aborted client only showed as a short count.
        result["aborted"] = True
        result["notes"].append(
            "fewer transactions processed than expected and no failures counted: "
            "some clients aborted"
        )
    return result
