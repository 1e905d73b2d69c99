"""Release series as a reader sees them (``analyze/releases.py``): one table per series on
``/comparisons/release-series/`` — a row per release with its tps, the step from the release
before with its verdict, the settings that change with it, and whether it crosses bench
sessions — and, for each question, the comparisons whose two sides both belong to a release
series, counted on the question's page and listed one line each on ``/comparisons/FAMILY--series/``
(a series of twenty releases at twelve client counts and modes makes hundreds of comparisons:
listed in full they would bury the question's other comparisons)."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import knowledge
from pgbench_kb.derive.writer import Site

#: The page of the release series.
SERIES_PAGE = "release-series"
#: The slug suffix of a question's page of the comparisons inside release series.
IN_SERIES = "--series"

_SESSION = re.compile(r"^bench (\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)\d\d(Z?)-")


def series_groups(known: dict[str, Any]) -> set[str]:
    """The ids of the groups that are a release of some release series."""
    return {
        str(row.get("group"))
        for series in known.get("series") or []
        if isinstance(series, dict)
        for row in series.get("rows") or []
        if isinstance(row, dict)
    }


def in_series(comparison: dict[str, Any], groups: set[str]) -> bool:
    """Whether both sides of a comparison belong to release series (its steps, and the clients
    or query-mode comparisons between their releases)."""
    a, b = comparison.get("a") or {}, comparison.get("b") or {}
    return str(a.get("group")) in groups and str(b.get("group")) in groups


def where_words(comparison: dict[str, Any]) -> str:
    """What a comparison inside a release series holds equal that tells it from the others:
    ``PostgreSQL 9.6.24, -M prepared, 16 clients``."""
    held = comparison.get("held_equal") or {}
    parts = [str(comparison.get("machine"))]
    if held.get("postgres.version") is not None:
        parts.append(f"PostgreSQL {held['postgres.version']}")
    if held.get("benchmark.query_mode") is not None:
        parts.append(f"-M {held['benchmark.query_mode']}")
    if isinstance(held.get("benchmark.clients"), int):
        parts.append(str(fmt.count(held["benchmark.clients"], "client")))
    return ", ".join(parts)


def session_start(session: str) -> str:
    """``bench 20241015T112730-73baa2b9`` → ``2024-10-15 11:27`` (an imported tree's session
    starts at its directory's time, which carries no zone; the bench's own carry UTC)."""
    found = _SESSION.match(session)
    if not found:
        return session
    y, m, d, hh, mm, zone = found.groups()
    return f"{y}-{m}-{d} {hh}:{mm}" + (" UTC" if zone else "")


def _value(value: Any, setting: str) -> str:
    """A setting's value as the site writes settings (``knowledge._value``), or ``not set``."""
    if value is None:
        return "not set"
    return knowledge._value(value, f"postgres.settings.{setting}")


def _settings_words(step: dict[str, Any]) -> str | None:
    changes = [
        f"{c.get('setting')} {_value(c.get('a'), str(c.get('setting')))} → "
        f"{_value(c.get('b'), str(c.get('setting')))}"
        for c in step.get("settings_change") or []
        if isinstance(c, dict)
    ]
    if not changes:
        return None
    words = ", ".join(changes)
    for renamed in step.get("renamed") or []:
        words += f" ({renamed})"
    return words


#: A step's verdict in a row, short (the page's opening says what each means).
STEP_WORDS = {
    "higher": "higher",
    "lower": "lower",
    "within_noise": "within the noise",
    "spread_unknown": "spread unknown",
}


def verdict_words(verdict: Any, significant: Any, crosses: bool, *, short: bool = False) -> str:
    """A step's verdict as its row reads it (``short``), or the first → last change's."""
    if verdict == "not_comparable":
        if crosses:
            return (
                "crosses sessions: not judged"
                if short
                else ("crosses bench sessions: shown, not judged")
            )
        return "no verdict"
    if short:
        words = STEP_WORDS.get(str(verdict), str(verdict))
    else:
        words = knowledge.VERDICT_WORDS.get(str(verdict), str(verdict))
    if verdict in ("higher", "lower") and significant is False:
        words += ", not once adjusted"
    return words


def _row(row: dict[str, Any], sessions: dict[str, int]) -> dict[str, Any]:
    interval = row.get("ci95")
    step = row.get("step")
    out: dict[str, Any] = {
        "version": str(row.get("version")),
        "tps": fmt.tps(row.get("center")),
        "n": row.get("n"),
        "range": (
            f"{fmt.figure(interval[0])}–{fmt.figure(interval[1])}"
            if isinstance(interval, list) and len(interval) == 2
            else "—"
        ),
        "session": sessions.get(str(row.get("session")), 0),
        "id": None,
        "step": None,
    }
    if isinstance(step, dict):
        crosses = bool(step.get("crosses_sessions"))
        verdict = step.get("verdict")
        out["step"] = {
            "change": fmt.change(step.get("change_pct")) or "—",
            "verdict": str(verdict) if verdict else "none",
            "words": verdict_words(verdict, step.get("significant"), crosses, short=True),
            "settings": bool(step.get("settings_change")),
        }
        if step.get("comparison"):
            out["id"] = knowledge.page_slug(str(step["comparison"]))
    return out


def series_title(series: dict[str, Any]) -> str:
    held = series.get("held_equal") or {}
    clients = held.get("benchmark.clients")
    parts = [
        str(held.get("benchmark.workload.name") or "workload not stated"),
        f"-M {held['benchmark.query_mode']}" if held.get("benchmark.query_mode") else None,
        fmt.count(clients, "client") if isinstance(clients, int) else None,
    ]
    return f"{series.get('machine')}: " + ", ".join(p for p in parts if p)


def series_shown(series: dict[str, Any]) -> dict[str, Any]:
    """One series as its table shows it."""
    sessions = {s: n for n, s in enumerate(series.get("sessions") or [], start=1)}
    rows = [_row(r, sessions) for r in series.get("rows") or [] if isinstance(r, dict)]
    overall = series.get("overall") or {}
    crosses = bool(overall.get("crosses_sessions"))
    held = series.get("held_equal") or {}
    return {
        "id": knowledge.page_slug(str(series.get("id"))),
        "title": series_title(series),
        "machine": str(series.get("machine")),
        "threads": held.get("benchmark.threads"),
        "rows": rows,
        "sessions": [{"n": n, "start": session_start(s)} for s, n in sessions.items()],
        "overall": {
            "a": str(overall.get("a")),
            "b": str(overall.get("b")),
            "change": fmt.change(overall.get("change_pct")) or "—",
            "ratio": fmt.ratio(overall.get("ratio")) or "—",
            "verdict": str(overall.get("verdict")),
            "words": verdict_words(overall.get("verdict"), None, crosses),
        },
        "steps": _step_counts(series),
    }


def _step_counts(series: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for row in series.get("rows") or []:
        step = row.get("step") if isinstance(row, dict) else None
        if not isinstance(step, dict):
            continue
        verdict = str(step.get("verdict"))
        if verdict in ("higher", "lower") and step.get("significant") is False:
            verdict = "not_significant"
        counts[verdict] += 1
    return dict(counts)


def about_series(series: list[dict[str, Any]]) -> str:
    """The page's opening: what a series holds equal, the client that drove it, and which steps
    are judged."""
    machines = sorted({str(s.get("machine")) for s in series})
    clients = sorted({v for s in series for v in s.get("pgbench_versions") or []})
    workloads = sorted(
        {str((s.get("held_equal") or {}).get("benchmark.workload.name")) for s in series}
    )
    if len(clients) == 1:
        client = f"by the same pgbench client ({clients[0]})"
    else:
        client = f"by pgbench {', '.join(clients) or 'of a version not stated'}"
    return (
        f"{fmt.count(len(series), 'series', 'series')} of releases on "
        f"{', '.join(machines)}: each is one workload ({', '.join(workloads)}, as pgbench's "
        "“transaction type:” line names it), one query mode and one number of clients, run on "
        f"each release {client}, with the settings each release was given. A row is a "
        "release: the median tps of its repeats and the 95% interval of their geometric mean. "
        "A step is that release against the one before it (“not once adjusted”: not "
        "significant once adjusted for the other steps of that machine, Holm); it is judged "
        "on the repeats' noise "
        "when both ran in one bench session (for a published result tree, one invocation of "
        "its author's script), and shown but not judged when they ran in two and nothing "
        "measured how far that machine's sessions move a result."
    )


def settings_steps(series: list[dict[str, Any]]) -> list[str]:
    """The steps whose settings change with the release, each said once for every series
    (``8.0.26 → 8.2.23: …``): the rows only mark them."""
    said: dict[str, None] = {}
    for one in series:
        rows = [r for r in one.get("rows") or [] if isinstance(r, dict)]
        for before, row in itertools.pairwise(rows):
            words = _settings_words(row.get("step") or {})
            if words:
                said.setdefault(f"{before.get('version')} → {row.get('version')}: {words}", None)
    return list(said)


def write_series_page(site: Site, known: dict[str, Any]) -> int:
    """The release-series page; the number of series on it."""
    series = [s for s in known.get("series") or [] if isinstance(s, dict)]
    if not series:
        return 0
    site.page(
        f"comparisons/{SERIES_PAGE}.md",
        {
            "title": "Release series",
            "description": about_series(series),
            "params": {
                "kind": "release-series",
                "series": [series_shown(s) for s in series],
                "settings_steps": settings_steps(series),
            },
        },
    )
    return len(series)


def in_series_note(slug: str, n: int) -> dict[str, Any] | None:
    """What a question's page says of its comparisons inside release series."""
    if not n:
        return None
    return {
        "n": n,
        "url": f"comparisons/{slug}{IN_SERIES}/",
        "series_url": f"comparisons/{SERIES_PAGE}/",
        "listed": f"the {fmt.count(n, 'comparison')}, one line each",
        "words": f"{fmt.count(n, 'more comparison')} of this question "
        f"{'pairs' if n == 1 else 'pair'} releases of a release series, or clients and query "
        "modes among them: each series is one table of its releases and steps.",
    }


def write_in_series_page(site: Site, slug: str, title: str, items: list[dict[str, Any]]) -> None:
    """The comparisons of one question inside release series, one short line each (its
    anchor is the comparison's, so links to it land here)."""
    rows = [
        {
            "id": c["id"],
            "title": c["title"],
            "where": c.get("series_where") or c["machine"],
            "change": fmt.change(c.get("change_pct")) or "—",
            "verdict": str(c.get("verdict")),
            "words": knowledge.VERDICT_WORDS.get(str(c.get("verdict")), str(c.get("verdict"))),
        }
        for c in items
    ]
    site.page(
        f"comparisons/{slug}{IN_SERIES}.md",
        {
            "title": f"{title}: comparisons inside release series",
            "description": f"{fmt.count(len(rows), 'comparison')} between releases of a release "
            "series, or between clients or query modes of one release of it: each with its "
            "change and verdict, one line each. The series themselves are tables of their "
            "releases.",
            "params": {
                "kind": "comparisons-in-series",
                "question": {"title": title, "url": f"comparisons/{slug}/"},
                "series_url": f"comparisons/{SERIES_PAGE}/",
                "series_listed": rows,
            },
        },
    )


def series_curves_note(n: int) -> dict[str, Any] | None:
    """What the curves page says of the curves of release series' releases."""
    if not n:
        return None
    return {
        "n": n,
        "url": f"comparisons/curves{IN_SERIES}/",
        "series_url": f"comparisons/{SERIES_PAGE}/",
        "listed": f"the {fmt.count(n, 'curve')}, one line each",
        "words": f"{fmt.count(n, 'more curve')} of throughput against clients or scale "
        f"{'belongs' if n == 1 else 'belong'} to releases of a release series: their points "
        "are in the series' tables, one per number of clients.",
    }


def write_series_curves(site: Site, curves: list[dict[str, Any]]) -> None:
    """The curves of release series' releases, one line each: title and sentence."""
    site.page(
        f"comparisons/curves{IN_SERIES}.md",
        {
            "title": "Throughput curves inside release series",
            "description": f"{fmt.count(len(curves), 'curve')} of releases of a release series, "
            "each as the sentence that says where it peaks and falls off; the figures are in "
            "the series' tables, one per number of clients.",
            "params": {
                "kind": "comparisons-in-series",
                "question": {"title": "Throughput curves", "url": "comparisons/curves/"},
                "series_url": f"comparisons/{SERIES_PAGE}/",
                "curves_listed": [
                    {"id": c["id"], "title": c["title"], "text": c["text"]} for c in curves
                ],
            },
        },
    )
