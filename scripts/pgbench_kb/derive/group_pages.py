"""Configuration pages (``content/groups/<id>.md``: a group of repeats), their list, and where
each group and comparison is placed (``place_knowledge``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.latency_trust import reason_of
from pgbench_kb.derive import (
    bottleneck,
    knowledge,
    run_view,
    series_pages,
)
from pgbench_kb.derive.comparison_pages import (
    SPLIT_FROM,
    SPLIT_VERDICTS_FROM,
    comparison_shown,
    latency_shown,
    write_comparison_pages,
    write_curves,
)
from pgbench_kb.derive.cost_shown import costs_shown, is_cost
from pgbench_kb.derive.run_pages import run_url
from pgbench_kb.derive.writer import Site


def write_group_list(site: Site, groups: list[dict[str, Any]]) -> None:
    """``/groups/``: every configuration, by machine and title (the results explorer shows
    them with their figures)."""
    by_machine: dict[str, list[dict[str, str]]] = defaultdict(list)
    for group in groups:
        by_machine[str(group["row"]["machine"])].append(
            {"title": str(group["title"]), "url": str(group["url"])}
        )
    machines = [
        {
            "machine": machine,
            "count": fmt.count(len(listed), "configuration"),
            "groups": sorted(listed, key=lambda g: (g["title"], g["url"])),
        }
        for machine, listed in sorted(by_machine.items())
    ]
    site.page(
        "groups/_index.md",
        {
            "title": "Configurations",
            "description": "Every configuration — a group of repeats of one setup — by machine "
            "and title. The results explorer shows them with their throughput and latency.",
            "params": {"kind": "groups", "machines": machines},
        },
    )


def group_id(group: dict[str, Any]) -> str:
    return knowledge.page_slug(str(group.get("id")))


def place_knowledge(
    site: Site,
    known: dict[str, Any],
    rows: list[dict[str, Any]],
    facets: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Group pages, comparison pages, and for each run the group and comparisons it is in;
    ``facets``: each run's search filters by id (its group's page carries its first run's)."""
    by_id = {str(r["id"]): r for r in rows}
    groups = [g for g in known.get("groups") or [] if isinstance(g, dict)]
    group_urls = {str(g.get("id")): f"groups/{group_id(g)}/" for g in groups}
    run_links: dict[str, dict[str, Any]] = defaultdict(lambda: {"comparisons": []})
    group_words: dict[str, str] = {}
    group_rows = []
    untrusted_by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in known.get("latency_trust") or []:
        untrusted_by_group[str(entry.get("group"))].append(entry)
    #: Each configuration's evidence (its runs' waits and CPU added up), by group id.
    evidence_of: dict[str, dict[str, Any] | None] = {}
    for group in groups:
        members = [by_id[r] for r in group.get("runs") or [] if r in by_id]
        if not members:
            continue
        first = members[0]
        center = knowledge.center_of(group)
        info = {
            "id": str(group.get("id")),
            "url": group_urls[str(group.get("id"))],
            "title": first["title"],
            "n": fmt.count(group.get("n") or len(members), "run"),
            "what": knowledge.figure_words(group),
            "center": fmt.tps(center),
            "center_raw": center,
            "spread": knowledge.spread_words(group.get("spread")),
        }
        untrusted = untrusted_by_group.get(info["id"])
        if untrusted:
            info["latency_note"] = reason_of(untrusted)
        group_words[info["id"]] = first["apart"] or first["machine"]
        evidence_of[info["id"]] = bottleneck.combined(m.get("evidence") for m in members)
        for member in members:
            run_links[str(member["id"])]["group"] = info
            if len(members) > 1:
                # Search finds a configuration by its page, not each of its repeats (they
                # would be near-identical hits, and three times the pages to index).
                run_links[str(member["id"])]["not_searched"] = True
        group_rows.append((group, members, info))
    # Each group's runs (tps), for the comparisons' charts: measured repeats, or the runs a
    # source listed.
    samples = {
        str(g.get("id")): [float(v) for v in g.get("samples") or [] if isinstance(v, int | float)]
        for g in groups
    }
    every = [c for c in known.get("comparisons") or [] if isinstance(c, dict)]
    comparisons = [c for c in every if c.get("metric", "tps") == "tps"]
    latency_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    costs_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in every:
        if c.get("tps_comparison"):
            if is_cost(c):
                costs_of[str(c["tps_comparison"])].append(c)
            else:
                latency_of[str(c["tps_comparison"])].append(latency_shown(c))
    family_of = [
        knowledge.family_of(str(c.get("factor")), c.get("factor_family")) for c in comparisons
    ]
    # Comparisons inside release series are listed on a page of their own per question
    # (derive/series_pages.py): they neither count towards a page's split nor go on it.
    releases = series_pages.series_groups(known)
    sizes: dict[str, int] = defaultdict(int)
    verdicts: dict[str, int] = defaultdict(int)
    machines: dict[str, set[str]] = defaultdict(set)
    for comparison, family in zip(comparisons, family_of, strict=True):
        if not series_pages.in_series(comparison, releases):
            sizes[family] += 1
            verdicts[family] += comparison.get("verdict") != "not_comparable"
            machines[family].add(str(comparison.get("machine")))
    # A family splits per machine when it is large, or when its verdicts from several
    # machines are many: each machine's page then reads in full unless it alone has more
    # than COMPACT_FROM.
    split = {
        family
        for family in sizes
        if sizes[family] > SPLIT_FROM
        or (verdicts[family] > SPLIT_VERDICTS_FROM and len(machines[family]) > 1)
    }
    families: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for comparison, family in zip(comparisons, family_of, strict=True):
        page = family
        serial = series_pages.in_series(comparison, releases)
        if serial:
            page = family + series_pages.IN_SERIES
        elif family in split:
            page = f"{family}--{knowledge.page_slug(str(comparison.get('machine')).split(' ')[0])}"
        shown = comparison_shown(comparison, group_urls, group_words, page, samples)
        if serial:
            shown["in_series"] = True
            shown["url"] = f"comparisons/{page}/#{shown['id']}"
            shown["series_where"] = series_pages.where_words(comparison)
        shown["latency"] = latency_of.get(str(comparison.get("id")), [])
        shown["latency_note"] = (comparison.get("latency_untrusted") or {}).get("reason")
        if waits := bottleneck.comparison_waits(comparison, evidence_of):
            shown["waits"] = waits
        costs = costs_shown(comparison, costs_of.get(str(comparison.get("id")), []))
        if costs is not None:
            shown["costs"] = costs
        families[family].append(shown)
        for side_name in ("a", "b"):
            for run_id in shown[side_name]["runs"]:
                link = {
                    "title": shown["title"],
                    "url": shown["url"],
                    "verdict": shown["verdict_words"],
                }
                if costs is not None and costs["clauses"]:
                    link["costs"] = costs["clauses"]
                run_links[run_id]["comparisons"].append(link)
    for item in known.get("stability") or []:
        if isinstance(item, dict) and item.get("run"):
            texts = [str(x.get("text")) for x in item.get("series") or [] if x.get("text")]
            run_links[str(item["run"])]["stability"] = texts
    for group, members, info in group_rows:
        first_facets = (facets or {}).get(str(members[0]["id"]))
        write_group(site, group, members, info, run_links, first_facets,
                    bottleneck.sentence(evidence_of.get(info["id"])))  # fmt: skip
    write_comparison_pages(site, families, known)
    curves = write_curves(site, known, group_urls)
    urls = {c["id"]: c["url"] for family in families.values() for c in family}
    return {
        "groups": [info | {"row": members[0]} for _g, members, info in group_rows],
        "families": families,
        "run_links": run_links,
        "comparison_urls": urls,
        "curves": curves,
    }


def write_group(
    site: Site,
    group: dict[str, Any],
    members: list[dict[str, Any]],
    info: dict[str, Any],
    run_links: dict[str, dict[str, Any]],
    facets: dict[str, str] | None = None,
    sentence: str | None = None,
) -> None:
    """A configuration's page; ``sentence``: its bottleneck sentence (``bottleneck``), when
    its runs recorded what the machine and the backends were doing."""
    first = members[0]
    comparisons = []
    seen = set()
    for member in members:
        for item in run_links[str(member["id"])]["comparisons"]:
            if item["url"] not in seen:
                seen.add(item["url"])
                comparisons.append(item)
    site.page(
        f"groups/{group_id(group)}.md",
        {
            "title": info["title"],
            "params": {
                "kind": "group",
                "group": info,
                "setup": [
                    {"label": "Machine", "value": str(first["machine"])},
                    {"label": "Storage", "value": first["storage"] or "not described"},
                    {"label": "PostgreSQL", "value": first["postgres_version"] or "not stated"},
                    {"label": "Workload", "value": run_view.workload_words(first)},
                    *(
                        [{"label": "Latency", "value": f"not judged: {info['latency_note']}"}]
                        if info.get("latency_note")
                        else []
                    ),
                ],
                "runs": [
                    {
                        "id": m["id"],
                        "url": run_url(str(m["id"])),
                        "date": m["recorded_at"],
                        "tps": m["tps_shown"],
                        "latency": m["latency_shown"],
                    }
                    for m in members
                ],
                "comparisons": comparisons,
                "machine": first["machine"],
                # A lone run is found by its own, fuller page; a configuration of repeats by
                # this one, with the same search filters as its runs.
                "not_searched": len(members) < 2,
                "facets": facets or {},
            }
            | ({"bottleneck": sentence} if sentence else {}),
        },
    )
