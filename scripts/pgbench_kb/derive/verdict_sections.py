"""What a page of comparisons lists and what it only counts (issue 31): the comparisons without
a verdict (``not_comparable``: their sides were measured apart) are counted on the comparison,
hardware and answer pages and listed on a page of their own; the pooled estimates of a
question (``pooled`` in the Comparisons JSON) lead, their per-session comparisons one click
away."""

from __future__ import annotations

from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.derive import knowledge
from pgbench_kb.derive.writer import Site

#: The slug suffix of a family's page of comparisons without a verdict.
NO_VERDICT = "--no-verdict"


def has_verdict(item: dict[str, Any]) -> bool:
    """Whether a comparison as shown has a verdict (anything but ``not_comparable``)."""
    return str(item.get("verdict")) != "not_comparable"


def page_for(page: str, verdict: str) -> str:
    """The page slug a comparison is placed on: its family's, or that family's page of
    comparisons without a verdict."""
    return page + NO_VERDICT if verdict == "not_comparable" else page


def family_page(page: str) -> str:
    """The family page a page slug belongs to (``durability--no-verdict`` → ``durability``)."""
    return page.removesuffix(NO_VERDICT)


def no_verdict_note(slug: str, items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``{"n", "url", "words"}``: how many comparisons of a page have no verdict, and where they
    are listed; None when all have one."""
    n = sum(1 for c in items if not has_verdict(c))
    if not n:
        return None
    return {
        "n": n,
        "url": f"comparisons/{slug}{NO_VERDICT}/",
        "words": f"{fmt.count(n, 'more comparison')} of these configurations "
        f"{'has' if n == 1 else 'have'} no verdict: "
        f"{'its' if n == 1 else 'their'} two sides ran in different bench sessions, or were run "
        "differently, so a difference between them cannot be told from a difference between "
        "sessions.",
    }


def write_no_verdict_page(site: Site, slug: str, title: str, items: list[dict[str, Any]]) -> None:
    """The comparisons of one page that have no verdict, one line each: what was compared,
    where, why there is no verdict, and the runs."""
    rows = [
        {
            "id": c["id"],
            "title": c["title"],
            "context": c["context"],
            "verdict_words": c["verdict_words"],
            "runs": [
                {"side": side["value"], "run": run}
                for side in (c["a"], c["b"])
                for run in side.get("runs") or []
            ],
        }
        for c in items
        if not has_verdict(c)
    ]
    site.page(
        f"comparisons/{slug}{NO_VERDICT}.md",
        {
            "title": f"{title}: comparisons without a verdict",
            "description": f"{fmt.count(len(rows), 'comparison')} whose two sides ran in "
            "different bench sessions or were run differently: their figures are shown, but no "
            "verdict is given. The comparisons with a verdict are on the page of the question.",
            "params": {
                "kind": "comparisons-no-verdict",
                "back": {"title": title, "url": f"comparisons/{slug}/"},
                "listed": rows,
            },
        },
    )


def pooled_shown(known: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pooled tps estimates whose per-session comparisons are among ``items`` (shown
    comparisons): each as one line — the pair, its machine, the estimate with its 95% interval,
    its verdict after the family-wise adjustment, and links to the comparisons it pools."""
    by_id = {c["id"]: c for c in items}
    out = []
    for estimate in known.get("pooled") or []:
        if not isinstance(estimate, dict) or estimate.get("metric", "tps") != "tps":
            continue
        evidence = [
            by_id[slug]
            for slug in (knowledge.page_slug(str(c)) for c in estimate.get("comparisons") or [])
            if slug in by_id
        ]
        if not evidence:
            continue
        out.append(
            {
                "title": evidence[0]["title"],
                "machine": str(estimate.get("machine")).split(" ")[0],
                "verdict": pooled_verdict(estimate),
                "words": pooled_words(estimate),
                "evidence": [
                    {"url": c["url"], "title": f"session {n}"}
                    for n, c in enumerate(evidence, start=1)
                ],
            }
        )
    return out


def pooled_verdict(estimate: dict[str, Any]) -> str:
    """``higher``/``lower`` only when significant after the family-wise adjustment; else
    ``within_noise``."""
    verdict = str(estimate.get("verdict"))
    if verdict in ("higher", "lower") and not (estimate.get("family") or {}).get("significant"):
        return "within_noise"
    return verdict


def pooled_words(estimate: dict[str, Any]) -> str:
    """``+84.9% (95% interval +60.3% to +113.4%), pooled from 2 bench sessions: higher, 1 of
    the 6 tests of this question on this machine that stand after adjustment (Holm)``."""
    change = fmt.change(estimate.get("change_pct")) or "—"
    interval = estimate.get("ci95_pct")
    words = change
    if isinstance(interval, list) and len(interval) == 2:
        words += f" (95% interval {fmt.change(interval[0])} to {fmt.change(interval[1])})"
    words += f", pooled from {fmt.count(estimate.get('sessions'), 'bench session')}"
    family = estimate.get("family") or {}
    size = int(family.get("size") or 1)
    verdict = str(estimate.get("verdict"))
    if verdict in ("higher", "lower"):
        if family.get("significant"):
            words += f": {verdict}"
        else:
            words += ": not significant"
        if size > 1:
            words += f" once adjusted for the {size} tests of this question on this machine (Holm)"
    else:
        words += ": " + knowledge.VERDICT_WORDS.get(verdict, verdict)
    return words
