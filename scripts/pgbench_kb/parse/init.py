"""The output of ``pgbench -i`` (initialisation), from 7.4's ``10000 tuples done.`` lines to the
13+ ``done in … s (…)`` summary line.
"""

from __future__ import annotations

import re
from typing import Any

from pgbench_kb.errors import ParseError
from pgbench_kb.parse.textlines import NUM, BadValue, Line, LinePattern, num, to_int

ROWS_PER_SCALE = 100_000

STEPS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^dropping old tables\.\.\."), "drop tables"),
    (re.compile(r"^creating tables\.\.\."), "create tables"),
    (re.compile(r"^creating \d+ partitions\.\.\."), "create partitions"),
    (re.compile(r"^generating data"), "generate data"),
    (re.compile(r"^(?:vacuuming|vacuum)\.\.\."), "vacuum"),
    (re.compile(r"^(?:creating primary keys|set primary keys?)\.\.\."), "primary keys"),
    (re.compile(r"^(?:creating foreign keys|set foreign keys)\.\.\."), "foreign keys"),
]
PARTITIONS = LinePattern(r"^creating {I} partitions\.\.\.", "partitions")
GENERATION = re.compile(r"^generating data \((client|server)-side\)\.\.\.")
TUPLES = LinePattern(
    r"^{I} of {I} tuples \({I}%\)(?: of \w+)? done \(elapsed {N} s, remaining {N} s\)\.?$",
    "rows_done",
    "rows_total",
    "rows_done",
    "elapsed_s",
    "elapsed_s",
)
OLD_TUPLES = LinePattern(r"^{I} tuples done\.$", "rows_done")
DONE_IN = LinePattern(r"^done in {N} s \((.*)\)\.?$", "total_time_s")
#: Lines with numbers, for the error on a malformed one.
NUMBER_LINES = (PARTITIONS, TUPLES, OLD_TUPLES, DONE_IN)
DONE_STEP = re.compile(r"^([a-z][a-z -]*?) (" + NUM + r") s$")
DONE = re.compile(r"(?:^|\.\.\.)done\.$")
INIT_MARKERS = re.compile(
    r"^(?:dropping old tables\.\.\.|creating tables\.\.\.|generating data|\d+ of \d+ tuples \(|"
    r"\d+ tuples done\.|done in " + NUM + r" s \(|set primary keys?\.\.\.|vacuum\.\.\.done\.)"
)


def looks_like_init(lines: list[Line]) -> bool:
    """True when some line is one that only ``pgbench -i`` prints."""
    return any(INIT_MARKERS.match(line.text) for line in lines)


def empty_init() -> dict[str, Any]:
    """The init object with every key present, in the documented order."""
    return {
        "kind": "init",
        "scale": None,
        "rows_total": None,
        "rows_done": None,
        "partitions": None,
        "data_generation": None,
        "steps": [],
        "elapsed_s": None,
        "total_time_s": None,
        "step_times_s": {},
        "completed": False,
        "warnings": [],
        "notes": [],
    }


def _read_done_in(result: dict[str, Any], match: re.Match[str]) -> None:
    result["total_time_s"] = num(match[1], "total_time_s")
    result["completed"] = True
    for part in match[2].split(","):
        step = DONE_STEP.match(part.strip())
        if step:
            name = step[1].replace(" ", "_").replace("-", "_")
            result["step_times_s"][name] = num(step[2], "step_times_s")


def parse_init(lines: list[Line], source: str = "<stdin>") -> dict[str, Any]:
    """Read ``pgbench -i`` output. Unknown lines are ignored; a row-count or timing line with a
    number pgbench never prints (``1,000,000 of …``, 25 digits) is a ParseError naming it."""
    result = empty_init()
    old_format_rows = None
    for line in lines:
        try:
            old_format_rows = _read_init_line(result, line.text, old_format_rows)
        except BadValue as bad:
            raise ParseError(
                bad.reason, path=source, line=line.number, field=bad.field, hint=bad.hint
            ) from None
    _finish(result, old_format_rows)
    return result


def _read_init_line(result: dict[str, Any], text: str, old_format_rows: int | None) -> int | None:
    """One line into ``result``; returns the largest ``N tuples done.`` count so far."""
    for pattern, step in STEPS:
        if pattern.match(text) and step not in result["steps"]:
            result["steps"].append(step)
    if m := PARTITIONS.match(text):
        result["partitions"] = to_int(m[1], "partitions")
    if m := GENERATION.match(text):
        result["data_generation"] = f"{m[1]}-side"
    if m := TUPLES.match(text):
        result["rows_done"] = to_int(m[1], "rows_done")
        result["rows_total"] = to_int(m[2], "rows_total")
        result["elapsed_s"] = num(m[4], "elapsed_s")
    elif m := OLD_TUPLES.match(text):
        old_format_rows = max(old_format_rows or 0, to_int(m[1], "rows_done"))
        result["rows_done"] = old_format_rows
    elif m := DONE_IN.match(text):
        _read_done_in(result, m)
    elif DONE.search(text):
        result["completed"] = True
    elif text.startswith(("NOTICE:", "WARNING:", "pgbench: warning:", "warning:")) or (
        text.lower().startswith("scale option ignored")
    ):
        result["warnings"].append(text)
    else:
        for pattern in NUMBER_LINES:
            if (bad := pattern.bad_value(text)) is not None:
                raise bad
    return old_format_rows


def _finish(result: dict[str, Any], old_format_rows: int | None) -> None:
    total = result["rows_total"]
    if total is None and result["completed"] and old_format_rows is not None:
        # Before 9.3 the last "N tuples done." line is the whole of pgbench_accounts.
        total = old_format_rows
    if total is not None and total % ROWS_PER_SCALE == 0:
        result["scale"] = total // ROWS_PER_SCALE
    if result["steps"] and result["rows_total"] is None and old_format_rows is None:
        result["notes"].append("no row count lines (server-side generation, -q, or a terminal)")
