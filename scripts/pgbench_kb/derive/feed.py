"""``feed.xml``: an Atom feed of new runs and changed answers.

Written by ``kb derive`` (not Hugo) because run pages are laid out apart from the rest of the
site (``kb render``), so Hugo's own feed would not see them. Links are relative: a feed
reader resolves them against the feed's own address, so the feed works at a server's root and
under a sub-path alike, as the pages do.

A run's date is the day its file last changed in git (when it arrived, for a run file that is
never edited), or its recorded date outside a repository. An answer's date is the latest of:
its text (``data/answers.yaml``), the sources' claims (``data/claims.yaml``), and the run files
under its evidence.
"""

from __future__ import annotations

import re
from typing import Any
from xml.sax.saxutils import escape

#: How many runs the feed lists (the newest).
FEED_RUNS = 30
ANSWER_FILES = ("data/answers.yaml", "data/claims.yaml")


def atom_time(day: str | None) -> str:
    """An RFC 3339 time from a date as run files hold it (``2006-06``, ``2026-11-23``, a
    timestamp); the start of that day, month or year, in UTC."""
    text = str(day or "")
    match = re.match(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", text)
    if not match:
        return "1970-01-01T00:00:00Z"
    year, month, dayn = match.group(1), match.group(2) or "01", match.group(3) or "01"
    return f"{year}-{month}-{dayn}T00:00:00Z"


def _entry(kind: str, key: str, title: str, url: str, updated: str, summary: str) -> str:
    return (
        "  <entry>\n"
        f"    <id>urn:pgbench-kb:{kind}:{escape(key)}</id>\n"
        f"    <title>{escape(title)}</title>\n"
        f'    <link rel="alternate" type="text/html" href="{escape(url, {chr(34): "&quot;"})}"/>\n'
        f"    <updated>{updated}</updated>\n"
        f"    <summary>{escape(summary)}</summary>\n"
        "  </entry>\n"
    )


def feed_text(
    rows: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    history: dict[str, Any],
    site_title: str = "pgbench-kb",
) -> str:
    """The Atom document: the changed answers, then the newest runs."""
    files = history.get("files") or {}

    def changed(path: str) -> str | None:
        change = files.get(path)
        return str(change["date"]) if isinstance(change, dict) and change.get("date") else None

    run_day = {
        str(r["id"]): changed(str(r.get("file"))) or str(r.get("recorded_at") or "") for r in rows
    }
    entries = []
    for answer in answers:
        days = [changed(p) for p in ANSWER_FILES]
        days += [run_day.get(run_id) for run_id in answer.get("runs") or []]
        day = max((d for d in days if d), default=None)
        entries.append(
            (
                atom_time(day),
                _entry(
                    "answer", answer["slug"], f"Answer: {answer['title']}", answer["url"],
                    atom_time(day), answer["lead"],
                ),
            )
        )  # fmt: skip
    newest = sorted(rows, key=lambda r: (atom_time(run_day[str(r["id"])]), str(r["id"])))
    for row in reversed(newest[-FEED_RUNS:]):
        updated = atom_time(run_day[str(row["id"])])
        tps = f"{row['tps_shown']} tps" if row.get("tps_shown") else "no tps"
        summary = f"{row['title']} on {row['machine']}: {tps} ({row.get('statistic') or 'one run'})"
        entries.append(
            (updated, _entry("run", str(row["id"]), f"Run: {row['title']}", row["url"], updated,
                             summary))
        )  # fmt: skip
    entries.sort(key=lambda e: e[0], reverse=True)
    latest = entries[0][0] if entries else "1970-01-01T00:00:00Z"
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"  <title>{escape(site_title)}: new runs and changed answers</title>\n"
        "  <id>urn:pgbench-kb:feed</id>\n"
        f"  <updated>{latest}</updated>\n"
        '  <link rel="self" href="feed.xml"/>\n'
        '  <link rel="alternate" type="text/html" href="./"/>\n'
        "  <author><name>pgbench-kb contributors</name></author>\n"
        + "".join(text for _, text in entries)
        + "</feed>\n"
    )
