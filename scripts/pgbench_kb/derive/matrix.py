"""The per-machine matrix (``/matrix/<machine>/``, linked from the machine's hardware page):
every configuration measured on one machine as a row, its tps, p95 latency and
per-transaction costs as columns, in the manner of ClickBench.

A configuration measured in several bench sessions is one row, its sessions pooled: each
figure is the median of the sessions' own figures (each session's the median of its runs), and
the row says how many sessions and runs it rests on. The rows of each session, as measured,
are a second table one click away (``sessions``), sorted and coloured the same way.

Everything the table shows is written here, at build time, into the page's front matter: each
cell's figure as the reader reads it (``numbers``) and its value as a number
(``data-value``), so that the table reads without JavaScript. ``static/js/matrix.js`` only
sorts the rows, and colours each cell by its change against the row the reader picks as the
baseline (the change written in the cell too, never by colour alone); the colours say which
way is better for the column (``better``: more tps, less latency, less cost), not that a test
found a difference: the verdicts stay on the comparison pages.

A figure is shown only where ``analyze`` has a trustworthy one (``analyze/figures.py``): a
latency of runs whose logged latencies cannot be trusted (``analyze/latency_trust.py``) is a
"—" with the reason as a numbered note under the table, as is a figure not measured.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.costs import COST_WORDS
from pgbench_kb.analyze.latency_trust import reason_of
from pgbench_kb.analyze.txcosts import COSTS
from pgbench_kb.derive import knowledge, labels
from pgbench_kb.derive.explorer import session_words

#: The columns after tps, in order: (metric, header, which way is better), each only on a
#: machine where a configuration has it or a reason it has none. Costs follow, in ``COSTS``
#: order, each only on a machine where a configuration has it.
LATENCY_COLUMNS = (("latency_p95_ms", "p95 latency (ms)", "lower"),)

#: The most rows a machine's page shows (about 1 KB each): past it, the most recently
#: measured configurations, and the page says how many it leaves to the results explorer.
MOST_ROWS = 100
#: Rows of both tables together (a configuration, and each of its sessions when sessions are
#: pooled): about 1.4 KB each, so that a machine's matrix keeps within 150 KB with what it
#: loads (issue 31); the development machine had 103 with campaign 2's first session.
MOST_TABLE_ROWS = 90


def _most_recent(
    configurations: list[list[dict[str, Any]]], pooled: bool
) -> list[list[dict[str, Any]]]:
    """The most recently measured configurations (oldest first) within ``MOST_ROWS`` and, when
    sessions are pooled, ``MOST_TABLE_ROWS`` rows of both tables."""
    kept: list[list[dict[str, Any]]] = []
    used = 0
    for members in sorted(configurations, key=_latest, reverse=True):
        rows = 1 + (len(members) if pooled else 0)
        if len(kept) == MOST_ROWS or (kept and used + rows > MOST_TABLE_ROWS):
            break
        kept.append(members)
        used += rows
    return kept[::-1]


#: A figure below this has too few digits (analyze keeps six decimals) for a change against
#: it to mean anything: the page sets it against no baseline (``data-coarse``).
COARSE_BELOW = 0.001

NOT_MEASURED = {
    "tps": "no tps figure: the runs of this configuration report none.",
    "latency_p95_ms": "no p95 latency: a p95 is read from a per-transaction log of at least "
    "200 transactions, and the runs of this configuration kept none.",
}
COST_NOT_MEASURED = "not recorded: the run files of this configuration hold no counter it is "
COST_NOT_MEASURED += "computed from."
TRANSCRIBED = "not in the source: the figures of this configuration are transcribed from a "
TRANSCRIBED += "source that gives none the site can use here."


def columns_of(
    groups: list[dict[str, Any]], untrusted: dict[str, Any] | None = None
) -> list[dict[str, str]]:
    """The matrix's figure columns for one machine's groups: tps; p95 latency where one of
    them has it or has runs whose latencies cannot be trusted (``untrusted``, by group id:
    their "—" says why); then each per-transaction cost at least one of them has above zero
    (a cost zero in every configuration, temp bytes of a workload that never spills, sets
    nothing apart)."""
    found = {m for g in groups for m, f in (g.get("figures") or {}).items() if f.get("center")}
    if any((untrusted or {}).get(str(g.get("id"))) for g in groups):
        found |= {m for m, _label, _better in LATENCY_COLUMNS}
    columns = [{"metric": "tps", "label": "tps", "better": "higher"}]
    columns += [{"metric": m, "label": label, "better": better} for m, label, better in
                LATENCY_COLUMNS if m in found]  # fmt: skip
    columns += [
        {"metric": m, "label": COST_WORDS[m][0], "unit": "per transaction", "better": "lower"}
        for m in COSTS
        if m in found and m in COST_WORDS
    ]
    return columns


class Notes:
    """The numbered notes under a table: one per distinct reason, in the order first met."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def number(self, text: str) -> int:
        text = text[:1].upper() + text[1:]
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1

    def listed(self) -> list[dict[str, Any]]:
        return [{"n": i, "text": t} for i, t in enumerate(self.texts, start=1)]


def _cell(value: Any, *, note: int | None = None) -> dict[str, Any]:
    """A cell: ``value`` the number (``raw``: as the page's ``data-value``, empty without
    one), ``text`` as the reader reads it, ``note`` the number of its note or None."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return {"value": None, "raw": "", "text": "—", "note": note}
    # Seven significant digits: the page shows four, sorting and the change against a baseline
    # need no more, and a machine's matrix keeps within its weight (issue 31: 150 KB).
    cell = {"value": value, "raw": f"{float(value):.7g}", "text": fmt.figure(value), "note": note}
    if 0 < abs(value) < COARSE_BELOW:
        # 0.000003 full-page images a transaction: kept to six decimals by analyze, it has
        # one or two digits, and 0.000004 against it would read as +33%.
        cell["coarse"] = True
    return cell


def row_cells(
    group: dict[str, Any],
    columns: list[dict[str, str]],
    untrusted: list[dict[str, Any]],
    notes: Notes,
) -> list[dict[str, Any]]:
    """One configuration's cells, in the columns' order."""
    figures = group.get("figures") or {}
    cells = []
    for column in columns:
        metric = column["metric"]
        if metric == "tps":
            center = knowledge.center_of(group)
            note = None if center is not None else notes.number(NOT_MEASURED["tps"])
            cells.append(_cell(center, note=note))
            continue
        value = (figures.get(metric) or {}).get("center")
        note = None
        if metric.startswith("latency_") and untrusted:
            reason = reason_of(untrusted).rstrip(".") + "."
            if value is not None:
                reason += " The figure is the median of its other runs."
            note = notes.number(labels.readable(reason))
        elif value is None and group.get("origin") == "transcribed":
            note = notes.number(TRANSCRIBED)
        elif value is None:
            note = notes.number(NOT_MEASURED.get(metric, COST_NOT_MEASURED))
        cells.append(_cell(value, note=note))
    return cells


#: A pooled figure that some of its configuration's sessions lack.
FROM_SOME = "the median of the sessions that have this figure; the others have none."


def _latest(groups: list[dict[str, Any]]) -> str:
    """When the newest run of ``groups`` was recorded: run ids begin with it
    (``20261127T014210Z-…``, a source's ``200606-…``)."""
    return max(str(r) for g in groups for r in (g.get("runs") or [""]))


def configuration_key(group: dict[str, Any]) -> str:
    """What makes groups one configuration measured in several sessions: the same machine,
    origin, source and factors (the session is not a factor: ``incidental``)."""
    return json.dumps(
        [group.get("machine"), group.get("origin"), group.get("source"), group.get("factors")],
        sort_keys=True,
        default=str,
    )


def pooled_cell(cells: list[dict[str, Any]], notes: Notes) -> dict[str, Any]:
    """One column of a configuration from its sessions' cells: the median of their figures;
    with none, the first session's "—" and its note; a note when some sessions lack it, or
    when a session's figure has one (latencies of runs that cannot be trusted)."""
    values = [c["value"] for c in cells if c["value"] is not None]
    if not values:
        return cells[0]
    note = next((c["note"] for c in cells if c["value"] is not None and c["note"]), None)
    if len(values) < len(cells):
        note = notes.number(FROM_SOME)
    # Six decimals, as analyze keeps them: the median of 0.000003 and 0.000004 is no figure
    # with a digit more than either.
    return _cell(round(statistics.median(values), 6), note=note)


def pooled_words(groups: list[dict[str, Any]]) -> str:
    """What a configuration's row rests on: its one session, or ``median of 2 bench sessions
    (2026-11-27 07:17 UTC; 2026-11-27 08:22 UTC), 12 runs``."""
    runs = sum(len(g.get("runs") or []) for g in groups)
    if len(groups) == 1:
        return f"{session_words(groups[0].get('session'))}, {fmt.count(runs, 'run')}"
    sessions = sorted(session_words(g.get("session")) for g in groups)
    kind = "session"
    if all(s.startswith("bench session ") for s in sessions):
        sessions, kind = [s.removeprefix("bench session ") for s in sessions], "bench session"
    return (
        f"median of {fmt.count(len(groups), kind)} ({'; '.join(sessions)}), "
        f"{fmt.count(runs, 'run')}"
    )


def configuration_rows(
    groups: list[dict[str, Any]],
    by_group: dict[str, dict[str, Any]],
    notes: Notes,
) -> list[dict[str, Any]]:
    """One row per configuration (``configuration_key``), its sessions' rows (``by_group``,
    group id → its row) pooled by ``pooled_cell``; it links to its latest session's page."""
    configurations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for group in groups:
        configurations[configuration_key(group)].append(group)
    rows = []
    for members in configurations.values():
        members.sort(key=lambda g: _latest([g]))
        sessions = [by_group[str(g["id"])] for g in members]
        latest = sessions[-1]
        rows.append(
            {
                "key": f"c-{latest['key']}",
                "title": latest["title"],
                "session": pooled_words(members),
                "sessions": len(members),
                "url": latest["url"],
                "cells": [
                    pooled_cell([s["cells"][i] for s in sessions], notes)
                    for i in range(len(latest["cells"]))
                ],
            }
        )
    rows.sort(key=lambda r: (r["title"], r["key"]))
    return rows


def machine_matrix(
    machine: str,
    groups: list[dict[str, Any]],
    placed: dict[str, dict[str, Any]],
    untrusted: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """The page's data for one machine: ``columns``; ``rows``, one per configuration (title,
    what it rests on, its page, its cells); ``sessions``, one row per configuration and
    session; ``notes``; ``total`` (its configurations) and ``total_sessions``: more than the
    rows when it has over ``MOST_ROWS`` (or its tables over ``MOST_TABLE_ROWS`` rows), the most
    recently measured kept."""
    configurations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for group in groups:
        configurations[configuration_key(group)].append(group)
    total, total_sessions = len(configurations), len(groups)
    pooled = any(len(members) > 1 for members in configurations.values())
    if total > MOST_ROWS or (pooled and total + total_sessions > MOST_TABLE_ROWS):
        groups = [
            g for members in _most_recent(list(configurations.values()), pooled) for g in members
        ]
    columns = columns_of(groups, untrusted)
    notes = Notes()
    sessions = []
    for group in groups:
        info = placed[str(group["id"])]
        sessions.append(
            {
                "key": knowledge.page_slug(str(group["id"])),
                "group": str(group["id"]),
                "title": info["title"],
                "session": session_words(group.get("session")),
                "url": info["url"],
                "cells": row_cells(group, columns, untrusted.get(str(group["id"])) or [], notes),
            }
        )
    rows = configuration_rows(groups, {s.pop("group"): s for s in sessions}, notes)
    sessions.sort(key=lambda r: (r["title"], r["session"], r["key"]))
    return {
        "machine": machine,
        "total": total,
        "total_sessions": total_sessions,
        "columns": columns,
        "rows": rows,
        "sessions": sessions,
        "pooled": any(r["sessions"] > 1 for r in rows),
        "notes": notes.listed(),
    }


def matrices(known: dict[str, Any], placed_groups: list[dict[str, Any]]) -> dict[str, Any]:
    """Machine slug → its matrix, for every machine with two configurations or more."""
    placed = {str(g["id"]): g for g in placed_groups}
    by_machine: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for group in known.get("groups") or []:
        if isinstance(group, dict) and str(group.get("id")) in placed:
            by_machine[str(group.get("machine"))].append(group)
    untrusted: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in known.get("latency_trust") or []:
        untrusted[str(entry.get("group"))].append(entry)
    return {
        knowledge.page_slug(machine): machine_matrix(machine, groups, placed, untrusted)
        for machine, groups in sorted(by_machine.items())
        if len(groups) >= 2
    }


def write_matrices(site: Any, known: dict[str, Any], placed: dict[str, Any]) -> dict[str, Any]:
    """One page per machine; returns machine → ``{url, n, shown}`` for its hardware page's
    link (``n`` configurations, ``shown`` in the table)."""
    found = matrices(known, placed["groups"])
    links = {}
    for slug, data in found.items():
        n = data["total"]
        site.page(
            f"matrix/{slug}.md",
            {
                "title": f"Every configuration on {data['machine']}, side by side",
                "description": f"{fmt.count(n, 'configuration')} measured on "
                f"{data['machine']}: tps, p95 latency and what each transaction cost, each "
                "figure set against a configuration you pick.",
                "params": {
                    "kind": "matrix",
                    "not_searched": True,
                    "hardware": f"hardware/{slug}/",
                    **data,
                },
            },
        )
        links[data["machine"]] = {"url": f"matrix/{slug}/", "n": n, "shown": len(data["rows"])}
    if found:
        site.page(
            "matrix/_index.md",
            {
                "title": "Configurations side by side, machine by machine",
                "description": "One table per machine: every configuration measured on it, "
                "with its figures set against one you pick.",
                "params": {"kind": "matrices", "not_searched": True},
            },
        )
    return links
