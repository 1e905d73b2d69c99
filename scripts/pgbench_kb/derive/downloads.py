"""The downloads: every run as CSV and JSON, and the comparisons as ``kb compare --json``."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from pgbench_kb import jsontext
from pgbench_kb import numbers as fmt
from pgbench_kb.derive import (
    prepared,
)
from pgbench_kb.derive.writer import GENERATED_NOTE, Site

CSV_FIELDS = (
    "id", "file", "origin", "synthetic", "machine", "client_machine", "recorded_at",
    "workload", "scale", "clients", "threads", "duration_s", "transactions_per_client",
    "query_mode", "postgres_version", "settings_profile", "os", "storage", "tps",
    "latency_avg_ms", "statistic", "group",
)  # fmt: skip


#: What a spreadsheet reads as the start of a formula (OWASP's CSV injection rule: `=`, `+`,
#: `-`, `@`, tab and carriage return).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def csv_cell(value: Any) -> Any:
    """``value`` safe for a spreadsheet: text starting like a formula gets a leading ``'``
    (shown as text, not run), except a plain number (``-5``, ``+1.5e3``).

    Regression (#33, attack 8): free-text fields reached downloads/runs.csv as formulas
    (``=HYPERLINK(…)``) that a spreadsheet ran when the file was opened."""
    if value is None:
        return ""
    formula = isinstance(value, str) and value.startswith(FORMULA_STARTS)
    if formula and not PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_text(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_cell(row.get(k)) for k in CSV_FIELDS})
    return buffer.getvalue()


def comparisons_text(known: dict[str, Any]) -> str:
    """The download of every comparison, interaction and finding (``kb compare --json``)."""
    found = {k: v for k, v in known.items() if k != "groups"}
    found.setdefault("format", "pgbench-kb/comparisons/1")
    return jsontext.lenient(found)


def runs_json(runs: list[prepared.Prepared]) -> str:
    """The download of every run file, as JSON."""
    head = json.dumps(
        {"format": "pgbench-kb/runs/1", "generated": GENERATED_NOTE, "runs": []}, ensure_ascii=False
    )
    return head[:-2] + ", ".join(run.download for run in runs) + "]}"


def write_downloads(site: Site, rows: list[dict[str, Any]]) -> None:
    """The CSV of every run and the downloads' page; ``runs_json``'s file is made beside the
    run pages, ``comparisons_text``'s early (``Site.early``)."""
    site.static("downloads/runs.csv", csv_text(sorted(rows, key=lambda r: str(r["id"]))))
    site.page(
        "downloads/_index.md",
        {
            "title": "Downloads",
            "description": "Every run as JSON and CSV, and the comparisons as JSON.",
            "params": {
                "kind": "downloads",
                "files": [
                    {
                        "href": "downloads/runs.json",
                        "name": "runs.json",
                        "about": f"all {fmt.count(len(rows), 'run file')}, as JSON (every field)",
                    },
                    {
                        "href": "downloads/runs.csv",
                        "name": "runs.csv",
                        "about": "one line per run: the fields lists show, for a spreadsheet",
                    },
                    {
                        "href": "downloads/comparisons.json",
                        "name": "comparisons.json",
                        "about": "comparisons, interactions and findings (format "
                        "pgbench-kb/comparisons/1, the output of kb compare --json)",
                    },
                ],
            },
        },
    )
