"""Answer pages (``/answers/<slug>/``): one per question a tuner brings (RAID level, WAL
placement, write cache, commit_delay, durability, memory, checkpoints, versions, OS and
filesystem, clients and scale), and the answers the home page leads with.

The words come from ``data/answers.yaml`` (the question, the lead's sentence around its
placeholders, the mechanism with its sources); every figure comes from what ``analyze`` found —
the sources' claims checked against the runs and the comparisons of the question's families.
A lead assumes things of the claims it names (``expects``): when a verdict changes, the build
stops with the line to rewrite instead of publishing a sentence the figures no longer bear.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import knowledge, verdict_sections
from pgbench_kb.derive.answer_leads import ClaimFigures, LeadFields, SeriesFigures, SetFigures
from pgbench_kb.derive.answers_file import ANSWERS_FILE, answer_error, load_answers, read_answers
from pgbench_kb.derive.writer import Site

__all__ = ["ANSWERS_FILE", "LEAD_WORDS", "build_answers", "load_answers", "write_answers"]

#: The longest a lead may be once filled (the home page shows each one).
LEAD_WORDS = 45
#: The field a set's ``workload`` selects by, and the evidence is grouped by.
WORKLOAD = "benchmark.workload.name"


def incidental(comparison: dict[str, Any]) -> bool:
    """Whether a comparison's sides were run differently (another run length, warm-up or
    pgbench, in another session): two profiles that happen to share a configuration. Such a
    pair has no verdict and answers no question; answers leave it out and say how many."""
    return bool((comparison.get("sessions") or {}).get("how_run_differs"))


def compared_inside(comparison: dict[str, Any]) -> bool:
    """Whether a comparison pairs across sessions two configurations that were also compared
    inside one session: the one inside is the evidence; answers leave this one out and say how
    many."""
    return bool((comparison.get("sessions") or {}).get("compared_inside"))


def left_out_of_answers(comparison: dict[str, Any]) -> bool:
    """Whether answers leave a comparison out (and count it): see the two above."""
    return incidental(comparison) or compared_inside(comparison)


#: The emulated commit flush a comparison's two sides share (none: the device's own).
EMULATED_FLUSH = "storage.flush.emulated.target_ms"
#: Both sides under the tracer with no added delay (flush_ms native-traced): not native.
TRACED_ONLY = "storage.flush.emulated.traced_only"


def _at_flush(comparison: dict[str, Any], flush: Any) -> bool:
    """Whether a comparison ran at a set's ``flush``: ``native`` (no emulated flush nor tracer on
    either side) or an emulated target in ms held equal; any comparison without the key."""
    if flush is None:
        return True
    held_equal = comparison.get("held_equal") or {}
    held = held_equal.get(EMULATED_FLUSH)
    if flush == "native":
        return (
            held is None
            and not held_equal.get(TRACED_ONLY)
            and not str(comparison.get("factor", "")).startswith("storage.flush")
        )
    return held is not None and float(held) == float(flush)


def _selected(items: list[dict[str, Any]], spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons of a set: of its machine, factor, workload, commit flush and fields held
    equal (incidental pairs are already out)."""
    return [
        c for c in items
        if (not spec.get("machine") or str(c.get("machine")).split(" ")[0] == spec["machine"])
        and str(c.get("factor", "")).startswith(str(spec.get("factor") or ""))
        and (
            not spec.get("workload")
            or (c.get("held_equal") or {}).get(WORKLOAD) == spec["workload"]
        )
        and _at_flush(c, spec.get("flush"))
        and all(
            (c.get("held_equal") or {}).get(field) == value
            for field, value in (spec.get("held") or {}).items()
        )
    ]  # fmt: skip


def build_answers(
    known: dict[str, Any], placed: dict[str, Any], root: Path
) -> list[dict[str, Any]]:
    """Every answer, its lead filled and its evidence placed (what the page and the home show)."""
    loaded = read_answers(root)
    data = loaded.data
    groups = {str(g.get("id")): g for g in known.get("groups") or [] if isinstance(g, dict)}
    claims = {str(c.get("id")): c for c in known.get("claims") or [] if isinstance(c, dict)}
    raw = {
        str(c.get("id")): c
        for c in known.get("comparisons") or []
        if isinstance(c, dict) and c.get("metric", "tps") == "tps"
    }
    pairs = {
        frozenset((str(c["a"].get("group")), str(c["b"].get("group")))): str(c.get("verdict"))
        for c in raw.values()
        if c.get("kind") != "span"
    }
    pooled = {str(p.get("id")): p for p in known.get("pooled") or [] if isinstance(p, dict)}
    costs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in known.get("comparisons") or []:
        if isinstance(c, dict) and str(c.get("metric")).endswith("_per_txn"):
            costs[str(c.get("tps_comparison"))].append(c)
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    left_out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for comparison in raw.values():
        family = knowledge.family_of(str(comparison.get("factor")), comparison.get("factor_family"))
        (left_out if left_out_of_answers(comparison) else by_family)[family].append(comparison)
    shown = {c["id"]: c for items in placed["families"].values() for c in items}
    sources = data.get("sources") or {}
    cites = data.get("cites") or {}
    answers = []
    for index, answer in enumerate(data["answers"]):
        where, slug = f"answers.{index}", str(answer["slug"])
        values: dict[str, Any] = {}
        for j, cid in enumerate(answer.get("claims") or []):
            if cid not in claims:
                raise answer_error(
                    loaded,
                    f"{where}.claims.{j}",
                    f"answer {slug}: claim {cid!r} is not in data/claims.yaml",
                    "use a claim id of data/claims.yaml",
                )
            values[cid] = ClaimFigures(claims[cid], groups, sources, pairs)
        for cid, expected in (answer.get("expects") or {}).items():
            verdict = (claims.get(cid) or {}).get("verdict")
            if verdict != expected:
                raise answer_error(
                    loaded,
                    f"{where}.expects.{cid}",
                    f"answer {slug}: the lead assumes claim {cid} {expected!r}, but the runs "
                    f"now say {verdict!r}",
                    "rewrite the lead for what the figures say, then update expects",
                )
        evidence_raw = [c for f in answer["families"] for c in by_family.get(f, [])]
        if answer.get("same_disks"):
            # The same disks arranged two ways first, the largest difference (the one against
            # the fastest single array) first.
            same = [c for c in by_family.get("storage-layout", []) if c.get("same_disks")]
            same.sort(key=lambda c: -abs(float(c.get("change_pct") or 0)))
            evidence_raw = same + evidence_raw
        for name, spec in (answer.get("sets") or {}).items():
            family_items = by_family.get(str(spec.get("family")), [])
            values[name] = SetFigures(
                _selected(family_items, spec),
                groups,
                left_out=len(_selected(left_out.get(str(spec.get("family")), []), spec)),
                pooled=pooled,
                costs=costs,
            )
        series = None
        if answer.get("series"):
            spec = answer["series"]
            chosen = [
                x
                for x in known.get("series") or []
                if isinstance(x, dict) and x.get("machine") == spec["machine"]
            ]
            if not (root / "content" / "hardware" / f"{spec['machine']}.md").is_file():
                raise answer_error(
                    loaded,
                    f"{where}.series.machine",
                    f"answer {slug}: no hardware note for machine {spec['machine']!r}",
                    "name the machine (content/hardware/MACHINE.md) whose runs form a release "
                    "series (kb compare --json: series)",
                )
            if chosen:
                # Without its runs (a tree of part of the data) the sentence is left out.
                said = LeadFields(
                    {"series": SeriesFigures(chosen)}, loaded, f"{where}.series", slug
                )
                series = {
                    "text": " ".join(said.format(" ".join(str(spec["text"]).split())).split()),
                    "url": "comparisons/release-series/",
                }
        fields = LeadFields(values, loaded, f"{where}.lead", slug)
        lead = " ".join(fields.format(" ".join(str(answer["lead"]).split())).split())
        if len(lead.split()) > LEAD_WORDS:
            raise answer_error(
                loaded,
                f"{where}.lead",
                f"answer {slug}: the lead has {len(lead.split())} words once filled (at most "
                f"{LEAD_WORDS}): {lead}",
                "shorten the lead",
            )
        costs_text = None
        if answer.get("costs"):
            fields = LeadFields(values, loaded, f"{where}.costs", slug)
            costs_text = " ".join(fields.format(" ".join(str(answer["costs"]).split())).split())
        answers.append(
            {
                "slug": slug,
                "url": f"answers/{slug}/",
                "title": str(answer["title"]),
                "label": str(answer["label"]),
                "lead": lead,
                "scope": " ".join(str(answer.get("scope") or "").split()) or None,
                "costs": costs_text,
                "series": series,
                "claims": [_claim_shown(claims[c], sources) for c in answer.get("claims") or []],
                "pooled": verdict_sections.pooled_shown(known, _shown_of(evidence_raw, shown)),
                "evidence": _evidence(evidence_raw, shown),
                "unknown": _unknown(
                    answer,
                    [c for c in evidence_raw if not _serial(c, shown)],
                    [claims[c] for c in answer.get("claims") or []],
                    [c for f in answer["families"] for c in left_out[f]],
                    sum(1 for c in evidence_raw if _serial(c, shown)),
                ),
                "why": _why(str(answer["why"]), cites),
                "cites": _cites_used(str(answer["why"]), cites),
                "links": [
                    {"title": knowledge.FAMILY_TITLES[f], "url": f"comparisons/{f}/"}
                    for f in (["storage-layout"] if answer.get("same_disks") else [])
                    + list(answer["families"])
                    if by_family.get(f)
                ],
                "machines": sorted({str(c.get("machine")).split(" ")[0] for c in evidence_raw}),
                # For the feed (when the runs under the answer last changed), not the page.
                "runs": sorted(
                    {
                        str(r)
                        for c in evidence_raw
                        for s in ("a", "b")
                        for r in (c.get(s) or {}).get("runs") or []
                    }
                ),
            }
        )
    return answers


def _claim_shown(claim: dict[str, Any], sources: dict[str, Any]) -> dict[str, Any]:
    title = str(claim.get("source"))
    checked = ". ".join(
        str(p).strip().rstrip(".") for p in (claim.get("checked"), claim.get("notes")) if p
    )
    return {
        "claim": str(claim.get("claim")),
        "source": str(sources.get(title) or title),
        "verdict": str(claim.get("verdict")),
        "checked": checked or None,
        "reason": claim.get("reason"),
    }


def _shown_of(items: list[dict[str, Any]], shown: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons ``items`` as their pages show them."""
    return [
        shown[slug]
        for slug in (knowledge.page_slug(str(c.get("id"))) for c in items)
        if slug in shown
    ]


def _evidence(items: list[dict[str, Any]], shown: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons, machine by machine (the first one's machine first), each once. Where a
    machine's comparisons ran different workloads, each names its workload (``context``) and
    they are grouped by it, so that "clients: 2 → 4" of one workload is not read as another's."""
    machines: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for comparison in items:
        cid = knowledge.page_slug(str(comparison.get("id")))
        item = shown.get(cid)
        if (
            item is None
            or cid in seen
            or not verdict_sections.has_verdict(item)
            or item.get("in_series")
        ):
            # Without a verdict, or inside a release series: counted under "What is not
            # known", listed on a page of their own.
            continue
        seen.add(cid)
        workload = (comparison.get("held_equal") or {}).get(WORKLOAD)
        entry = {
            "title": item["title"],
            "url": item["url"],
            "verdict": item["verdict_words"],
            "caveats": item["caveats"],
            "same_disks": bool(comparison.get("same_disks")),
            "unsafe": item["unsafe"],
            "context": str(workload) if workload is not None else None,
        }
        if (item.get("costs") or {}).get("clauses"):
            entry["costs"] = item["costs"]["clauses"]
        machines.setdefault(str(comparison.get("machine")), []).append(entry)
    for listed in machines.values():
        if len({c["context"] for c in listed}) > 1:
            listed.sort(key=lambda c: str(c["context"] or ""))
        else:
            for c in listed:
                c["context"] = None
    return [{"machine": m, "comparisons": c} for m, c in machines.items()]


def _serial(comparison: dict[str, Any], shown: dict[str, Any]) -> bool:
    """Whether a comparison is inside a release series (``derive/series_pages.py``)."""
    return bool((shown.get(knowledge.page_slug(str(comparison.get("id")))) or {}).get("in_series"))


def _unknown(
    answer: dict[str, Any],
    items: list[dict[str, Any]],
    claims: list[dict[str, Any]],
    left_out: list[dict[str, Any]],
    serial: int = 0,
) -> list[str]:
    out = []
    if serial:
        out.append(
            f"{fmt.count(serial, 'more comparison')} pair releases of a release series, or "
            "clients and query modes among them: not listed here; each series is one table of "
            "its releases and steps on the release-series page, and each question lists them "
            "one line each."
        )
    incidental_pairs = sum(1 for c in left_out if incidental(c))
    across = sum(1 for c in left_out if compared_inside(c) and not incidental(c))
    total = len(items)
    unknown = sum(1 for c in items if c.get("verdict") == "spread_unknown")
    apart = sum(1 for c in items if c.get("verdict") == "not_comparable")
    # An unsafe setting's note is a warning, not something else that changed with the factor.
    confounded = sum(
        1 for c in items
        if any(f.get("kind") != "unsafe" for f in c.get("confounds") or [] if isinstance(f, dict))
    )  # fmt: skip
    if not total:
        out.append("No comparison in the knowledge base varies this alone.")
    if incidental_pairs:
        out.append(
            f"{incidental_pairs} more comparison{'s' if incidental_pairs != 1 else ''} pair "
            "runs of different bench sessions that were also run differently (run length, "
            "warm-up or pgbench version): no verdict, so left out here; the comparison pages "
            "list them."
        )
    if across:
        out.append(
            f"{across} more comparison{'s' if across != 1 else ''} pair two configurations "
            "across bench sessions that were also compared inside one session: the comparison "
            "inside the session is the evidence (the session's own level does not enter it), so "
            "these have no verdict and are left out here; the comparison pages list them."
        )
    if unknown:
        out.append(
            f"{unknown} of {total} comparisons rest on single runs or on published figures "
            "without their runs: their size is shown, but it cannot be told from noise."
        )
    if apart:
        out.append(
            f"{apart} of {total} compare configurations measured in different bench sessions, "
            "with nothing measured of how far sessions move a result: no verdict is given "
            "(they are listed apart from the verdicts, linked from the comparison pages)."
        )
    if confounded:
        out.append(
            f"{confounded} of {total} change something else with the factor (named beside "
            "each): they cannot separate the two."
        )
    for claim in claims:
        if claim.get("verdict") == "cannot be checked":
            reason = str(claim.get("reason") or "no figures").rstrip(".")
            out.append(f"“{claim.get('claim')}” cannot be checked: {reason}.")
    out += [" ".join(str(u).split()) for u in answer.get("unknown") or []]
    return out


def _why(text: str, cites: dict[str, Any]) -> list[dict[str, str]]:
    """The mechanism as parts of text and citations ``[n]`` (numbered in order of use)."""
    order = _cite_order(text)
    parts = []
    for piece in re.split(r"(\[[a-z0-9-]+\])", " ".join(text.split())):
        if re.fullmatch(r"\[[a-z0-9-]+\]", piece):
            key = piece[1:-1]
            parts.append({"cite": str(order.index(key) + 1), "anchor": f"cite-{key}"})
        elif piece:
            parts.append({"text": piece})
    return parts


def _cite_order(text: str) -> list[str]:
    order: list[str] = []
    for key in re.findall(r"\[([a-z0-9-]+)\]", text):
        if key not in order:
            order.append(key)
    return order


def _cites_used(text: str, cites: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "n": str(i),
            "anchor": f"cite-{key}",
            "title": str(cites[key].get("title")),
            "url": cites[key].get("url"),
            "note": cites[key].get("note"),
        }
        for i, key in enumerate(_cite_order(text), start=1)
    ]


def write_answers(site: Site, answers: list[dict[str, Any]]) -> None:
    """One page per answer, and the list of them."""
    for answer in answers:
        site.page(
            f"answers/{answer['slug']}.md",
            {
                "title": answer["title"],
                "description": answer["lead"],
                "params": {
                    "kind": "answer",
                    "answer": {k: v for k, v in answer.items() if k != "runs"},
                },
            },
        )
    site.page(
        "answers/_index.md",
        {
            "title": "Answers",
            "description": "The questions tuners bring, each answered from the runs and the "
            "sources' checked claims, with the evidence machine by machine.",
            "params": {
                "kind": "answers",
                "answers": [
                    {"title": a["title"], "url": a["url"], "lead": a["lead"], "scope": a["scope"]}
                    for a in answers
                ],
            },
        },
    )
