"""The output of ``pgbench -i`` (initialisation), from 7.4's ``10000 tuples done.`` lines to the
13+ ``done in … s (…)`` summary line.
"""

from __future__ import annotations

import re
from typing import Any

from pgbench_kb.parse.textlines import NUM, Line, num

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
PARTITIONS = re.compile(r"^creating (\d+) partitions\.\.\.")
GENERATION = re.compile(r"^generating data \((client|server)-side\)\.\.\.")
TUPLES = re.compile(
    r"^(\d+) of (\d+) tuples \((\d+)%\)(?: of \w+)? done \(elapsed (" + NUM + r") s, "
    r"remaining (" + NUM + r") s\)\.?$"
)
OLD_TUPLES = re.compile(r"^(\d+) tuples done\.$")
DONE_IN = re.compile(r"^done in (" + NUM + r") s \((.*)\)\.?$")
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
    result["total_time_s"] = num(match[1])
    result["completed"] = True
    for part in match[2].split(","):
        step = DONE_STEP.match(part.strip())
        if step:
            result["step_times_s"][step[1].replace(" ", "_").replace("-", "_")] = num(step[2])


def parse_init(lines: list[Line]) -> dict[str, Any]:
    """Read ``pgbench -i`` output. Never raises: unknown lines are ignored."""
    result = empty_init()
    old_format_rows = None
    for line in lines:
        text = line.text
        for pattern, step in STEPS:
            if pattern.match(text) and step not in result["steps"]:
                result["steps"].append(step)
        if m := PARTITIONS.match(text):
            result["partitions"] = int(m[1])
        if m := GENERATION.match(text):
            result["data_generation"] = f"{m[1]}-side"
        if m := TUPLES.match(text):
            result["rows_done"], result["rows_total"] = int(m[1]), int(m[2])
            result["elapsed_s"] = num(m[4])
        elif m := OLD_TUPLES.match(text):
            old_format_rows = max(old_format_rows or 0, int(m[1]))
            result["rows_done"] = old_format_rows
        elif m := DONE_IN.match(text):
            _read_done_in(result, m)
        elif DONE.search(text):
            result["completed"] = True
        elif text.startswith(("NOTICE:", "WARNING:", "pgbench: warning:", "warning:")) or (
            text.lower().startswith("scale option ignored")
        ):
            result["warnings"].append(text)
    total = result["rows_total"]
    if total is None and result["completed"] and old_format_rows is not None:
        # Before 9.3 the last "N tuples done." line is the whole of pgbench_accounts.
        total = old_format_rows
    if total is not None and total % ROWS_PER_SCALE == 0:
        result["scale"] = total // ROWS_PER_SCALE
    if result["steps"] and result["rows_total"] is None and old_format_rows is None:
        result["notes"].append("no row count lines (server-side generation, -q, or a terminal)")
    return result
