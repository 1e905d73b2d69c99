"""The sources page: each source's runs and its claims, checked."""

from __future__ import annotations

from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import (
    knowledge,
)
from pgbench_kb.derive.writer import Site


def claims_of(known: dict[str, Any], urls: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Each source's conclusions as ``analyze`` checked them, by source title."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for claim in known.get("claims") or []:
        if not isinstance(claim, dict):
            continue
        checks = [c for c in claim.get("checks") or [] if isinstance(c, dict)]
        by_source.setdefault(str(claim.get("source")), []).append(
            {
                "claim": str(claim.get("claim")),
                "verdict": str(claim.get("verdict")),
                # The figures as analyze wrote them (set-aside rows, rankings and published
                # figures included), then what the claim says a reader must know beside them.
                "checked": ". ".join(
                    str(part).strip().rstrip(".")
                    for part in (claim.get("checked"), claim.get("notes"))
                    if part
                )
                or "; ".join(
                    f"{fmt.change(c.get('change_pct'))} on {c.get('version') or 'its version'}"
                    for c in checks
                    if c.get("change_pct") is not None
                ),
                "reason": claim.get("reason"),
                "paths": path_tables(checks),
                "url": next(
                    (
                        urls[knowledge.page_slug(str(c.get("comparison")))]
                        for c in checks
                        if knowledge.page_slug(str(c.get("comparison"))) in urls
                    ),
                    None,
                ),
            }
        )
    return by_source


def _names(claim_source: str, title: str) -> bool:
    """Whether a claim's ``source`` names the runs' source ``title``: the title itself, or the
    title followed by a description in parentheses ("PgBench (a wiki page)")."""
    return claim_source == title or claim_source.split(" (")[0] == title


def path_tables(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A path claim's steps as tables, one per path (``analyze/claim_path.py``): each step's
    tps, its own change and the change since the first step."""
    return [
        {
            "title": f"On {c.get('version')}" if c.get("version") else "The path",
            "rows": [
                {
                    "label": str(step.get("label")),
                    "tps": fmt.tps(step.get("tps")),
                    "step": fmt.change(step.get("step_pct")) or "start",
                    "cumulative": fmt.change(step.get("cumulative_pct")) if number else "—",
                    "aside": bool(step.get("set_aside")),
                }
                for number, step in enumerate(c["steps"])
            ],
        }
        for c in checks
        if c.get("steps")
    ]


def write_sources(
    site: Site, rows: list[dict[str, Any]], known: dict[str, Any], urls: dict[str, str]
) -> None:
    by_title: dict[str, dict[str, Any]] = {}
    for row in rows:
        title = row["source_title"]
        if not title:
            continue
        entry = by_title.setdefault(title, {"title": title, "runs": [], "machines": set()})
        entry["runs"].append(
            {
                "title": row["title"],
                "url": row["url"],
                "tps": row["tps_shown"],
                "locator": row["source_locator"],
            }
        )
        entry["machines"].add(str(row["machine"]))
    claims = claims_of(known, urls)
    # an imported result tree's claims are its own section's business, never "no run"
    imported_titles = {str(r["imported_set"]["title"]) for r in rows if r.get("imported_set")}
    sources = [
        {
            "title": e["title"],
            "claims": next(
                (found for name, found in claims.items() if _names(name, e["title"])), []
            ),
            "machines": sorted(e["machines"]),
            "taken": f"{fmt.count(len(e['runs']), 'run')} transcribed: the figures, and the "
            "settings and setup as far as the source stated them; where in the source each "
            "comes from is listed with it",
            "runs": e["runs"],
        }
        for e in by_title.values()
    ]
    # A source whose conclusions are checked here but none of whose figures a run can hold
    # (percentages only, response times in prose): listed with its claims and why no run.
    sources += [
        {
            "title": name,
            "claims": found,
            "machines": [],
            "taken": "no run taken from it: only its conclusions are listed, each with why "
            "it cannot be checked",
            "runs": [],
        }
        for name, found in claims.items()
        if not any(_names(name, title) for title in {*by_title, *imported_titles})
    ]
    sources.sort(key=lambda s: s["title"])
    site.page(
        "sources/_index.md",
        {
            "title": "Sources",
            "description": "Publications whose results were transcribed, result trees whose "
            "pgbench outputs were imported, and what was taken from each.",
            "params": {
                "kind": "sources",
                "sources": sources,
                "imported": imported_sets(rows, claims),
            },
        },
    )


def imported_sets(
    rows: list[dict[str, Any]], claims: dict[str, list[dict[str, Any]]] | None = None
) -> list[dict[str, Any]]:
    """Each published result tree runs were imported from (``kb import TREE``): who published
    it, at which commit, under what terms, what was taken, and the claims made of its figures
    (``claims_of``, by the source each names)."""
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        found = row.get("imported_set")
        if not found:
            continue
        key = (str(found["title"]), str(found["revision"]))
        entry = by_key.setdefault(key, {**found, "runs": 0, "kept_runs": 0, "machines": set()})
        entry["runs"] += 1
        entry["kept_runs"] += 1 if found["kept"] else 0
        entry["machines"].add(str(row["machine"]))
    listed = []
    for (title, revision), e in sorted(by_key.items()):
        if e["kept_runs"] == e["runs"]:
            raw = "each output is kept with its run"
        elif e["kept_runs"] == 0:
            raw = (
                "the outputs are not copied here: each run gives its output's address at that "
                "commit and its sha256"
            )
        else:
            raw = f"{fmt.count(e['kept_runs'], 'output')} kept, the others referenced by address"
        listed.append(
            {
                "title": title,
                "author": e["author"],
                "year": e["year"],
                "home": e["home"],
                "revision": revision,
                "terms": e["terms"],
                "machines": sorted(e["machines"]),
                "claims": next(
                    (found for name, found in (claims or {}).items() if _names(name, title)), []
                ),
                "taken": f"{fmt.count(e['runs'], 'run')} imported from the author's pgbench "
                f"outputs at commit {revision[:12]}: the figures as pgbench printed them, the "
                f"settings and setup as far as the author's scripts give them; {raw}",
            }
        )
    return listed
