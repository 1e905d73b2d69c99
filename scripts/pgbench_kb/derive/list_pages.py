"""The machines list, and the home page's data (key findings, recent
runs)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import (
    hardware,
    knowledge,
    labels,
    links,
    machine_noise,
    run_view,
    verdict_sections,
)
from pgbench_kb.derive.source_pages import write_sources
from pgbench_kb.derive.writer import Site

HOME_RECENT = 12


HOME_FINDINGS = 8
#: The most runs a hardware page lists when the machine has a matrix (every configuration,
#: each linking its runs): its newest; the page says how many it has in all. The
#: development machine's page listed 280 runs, 129 KB of its 158 KB.
HARDWARE_RUNS = 30


def write_machines(
    site: Site,
    rows: list[dict[str, Any]],
    placed: dict[str, Any],
    known: dict[str, Any],
    matrix_links: dict[str, dict[str, Any]] | None = None,
) -> None:
    """For each hardware note: its runs (server or client), the comparisons on it, how much
    results move on it (``machine_noise``) and the link to its matrix (``matrix``)."""
    machines: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"runs": [], "comparisons": [], "noise": []}
    )
    for machine, link in (matrix_links or {}).items():
        machines[machine]["matrix"] = link
    for machine, lines in hardware.flush_lines(rows).items():
        machines[machine]["flush"] = lines
    for machine, words in machine_noise.machine_noise(known).items():
        machines[machine]["noise"] = words
    for row in rows:
        for slug in {row["machine"], row["client_machine"]} - {None}:
            machines[str(slug)]["runs"].append(table_row(row))
    for data in machines.values():
        data["runs_total"] = len(data["runs"])
        if data.get("matrix") and len(data["runs"]) > HARDWARE_RUNS:
            data["runs"] = data["runs"][:HARDWARE_RUNS]  # newest first
    without: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    serial: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for family in placed["families"].values():
        for item in family:
            machine = item["machine"].split(" ")[0]
            if item.get("in_series"):
                # Counted, not listed: each question lists them on its page of release series.
                serial[machine][item["url"].split("/")[1]] += 1
                continue
            if not verdict_sections.has_verdict(item):
                # Counted, not listed (issue 31): listed on the family's page without verdicts.
                without[machine][item["url"].split("/")[1]] += 1
                continue
            machines[machine]["comparisons"].append(
                {"title": item["title"], "url": item["url"], "verdict": item["verdict_words"]}
            )
    for machine, pages in without.items():
        machines[machine]["no_verdict"] = {
            "n": sum(pages.values()),
            "pages": [
                {"title": knowledge.FAMILY_TITLES.get(
                    verdict_sections.family_page(page).split("--")[0], page),
                 "url": f"comparisons/{page}/", "n": n}
                for page, n in sorted(pages.items())
            ],
        }  # fmt: skip
    for machine, pages in serial.items():
        machines[machine]["in_series"] = {
            "n": sum(pages.values()),
            "series_url": "comparisons/release-series/",
            "pages": [
                {"title": knowledge.FAMILY_TITLES.get(page.split("--")[0], page),
                 "url": f"comparisons/{page}/", "n": n}
                for page, n in sorted(pages.items())
            ],
        }  # fmt: skip
    site.data(
        "machines",
        {"machines": dict(sorted(machines.items())), "specs": hardware.specs(site.root)},
    )


def raw_words(rows: list[dict[str, Any]]) -> str:
    """What the home page may say of the figures' raw output: how many runs keep the pgbench
    output they were read from, and what the others are (issue 31: 16 of 29 transcribed runs
    had none, so "every figure links to raw output" was not true). It follows the count of
    runs (``341 runs on 5 machines, in 120 configurations.``)."""
    total = len(rows)
    without = [r for r in rows if not r.get("raw_kept")]
    if not without:
        return "Each run keeps the pgbench output it was read from."
    if len(without) == total:
        return "No run keeps the output it was read from."
    kept = total - len(without)
    words = f"{kept} of the {fmt.count(total, 'run')} keep the pgbench output they were read from"
    if all(r.get("origin") == "transcribed" for r in without):
        return words + f" (the other {len(without)}, transcribed from publications, have none)."
    return words + f"; {len(without)} do not."


def table_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "url": row["url"],
        "title": row["title"],
        "date": row["recorded_at"],
        "machine": row["machine"],
        "version": row["postgres_version"],
        "workload": row["workload"],
        "clients": row["clients"],
        "tps": row["tps_shown"],
        "tps_raw": row["tps"],
        "latency": row["latency_shown"],
        "synthetic": row["synthetic"],
    }


def write_lists(
    site: Site,
    rows: list[dict[str, Any]],
    placed: dict[str, Any],
    known: dict[str, Any],
    history: dict[str, Any],
    answers: list[dict[str, Any]] | None = None,
) -> None:
    urls = placed["comparison_urls"]
    all_findings = [f for f in known.get("findings") or [] if isinstance(f, dict)]
    shown = home_findings(all_findings, HOME_FINDINGS)
    findings = [
        {
            "text": str(f.get("text")),
            "url": next(
                (urls[knowledge.page_slug(str(c))] for c in f.get("comparisons") or []
                 if knowledge.page_slug(str(c)) in urls),
                None,
            ),
        }
        for f in shown
    ]  # fmt: skip
    site.data(
        "home",
        {
            "recent": [table_row(r) for r in [r for r in rows if not r.get("smoke")][:HOME_RECENT]],
            "findings": findings,
            "answers": [
                {
                    "label": a["label"],
                    "title": a["title"],
                    "url": a["url"],
                    "lead": a["lead"],
                    "scope": a.get("scope"),
                }
                for a in answers or []
            ],
            "runs": fmt.count(len(rows), "run"),
            "machines": fmt.count(len({r["machine"] for r in rows}), "machine"),
            "groups": fmt.count(len(placed["groups"]), "configuration"),
            "raw_words": raw_words(rows),
        },
    )
    write_sources(site, rows, known, urls)
    site.page(
        "changes/_index.md",
        {
            "title": "Recent changes",
            "description": "What changed in the data, newest first: run files added, changed "
            "or removed, hardware notes, guides, the sources' claims and the answers' text, "
            "from the project's git history.",
            "params": {
                "kind": "changes",
                "changes": [
                    change | {"subject": short_subject(str(change.get("subject") or ""))}
                    for change in history["recent"]
                ],
            },
        },
    )
    # The run and configuration pages, which kb render lays out apart from the sitemap.
    site.data(
        "sitemap",
        {"pages": [r["url"] for r in rows] + [g["url"] for g in placed["groups"]]},
    )
    site.data("git", {"files": history["files"]})
    site.data("links", {"links": links.backlinks(site.root)})
    site.data("fields", {"about": run_view.field_descriptions()})


#: A commit's subject is shown up to this many characters (some are long sentences).
SUBJECT_CHARS = 160


def short_subject(subject: str) -> str:
    """A commit's subject for readers: field paths as words, cut at a word near 160 characters."""
    text = labels.readable(subject)
    if len(text) <= SUBJECT_CHARS:
        return text
    return text[:SUBJECT_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def home_findings(findings: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The key findings (analyze's ``ranking``: one per question and machine, never a compound
    "every step at once" or an unsafe setting), in its order — storage, durability, memory,
    checkpoints, versions, OS, then pgbench's own parameters — taking the first of each topic
    before a second of any, so that one source's many storage rows do not fill the page."""
    key = [f for f in findings if f.get("key")]
    first: list[dict[str, Any]] = []
    seen: set[str] = set()
    for f in key:
        if str(f.get("topic")) not in seen:
            seen.add(str(f.get("topic")))
            first.append(f)
    rest = [f for f in key if not any(f is g for g in first)]
    return (first + rest)[:limit]
