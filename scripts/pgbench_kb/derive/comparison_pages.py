"""Comparison pages (``content/comparisons/<family>.md``), curve pages, and each comparison as
a reader sees it: its verdict in words, what it rests on, its figures, confounds and caveats."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.confounds import labelled
from pgbench_kb.derive import (
    charts,
    knowledge,
    labels,
    series_pages,
    verdict_sections,
)
from pgbench_kb.derive.writer import Site

#: A family with more comparisons than this gets one page per machine.
SPLIT_FROM = 100
#: ... and so does a family whose verdicts, from several machines, are more than this.
SPLIT_VERDICTS_FROM = 24
#: The curves page loads a chart per curve and two per machine's overlay (6-8 KB each): with
#: more curves than this from several machines it gets one page per machine, so that no page
#: loads more than 150 KB (tests/browser/test_comparison_pages_glance.py; 11 curves of 4
#: machines loaded 177 KB). A machine's page with more curves than this shows each curve's
#: points folded, one click away (its overlay charts draw them all).
CURVES_SPLIT_FROM = 8
#: A machine's page of curves draws each overlay (a swept factor and workload) as two charts
#: of about 30 KB each: past this many overlays, a page per overlay (kernel-bench's Xeon, 4
#: overlays of 9-14 lines, loaded 348 KB on one page).
OVERLAYS_A_PAGE = 3
#: A page with more verdicts than this lists each in one row of a table (what was compared,
#: each side's centre and runs, the change, its interval and the verdict) instead of in full:
#: 216 runs of one imported machine gave 100-200 verdicts a page, 25,000-40,000 px tall at
#: 1280 px in full (tests/browser/test_comparison_pages_glance.py allows 15,000). A full
#: section, with its per-transaction costs and waits, is 550-860 px at 1280 px: 18 of them
#: made the commit-flush page 16,835 px once the flush-tracer sessions were in (November 28),
#: and pages of 18-20 stood at 12,600-13,300 px. The figures behind each row are on its two
#: configurations' pages, which the row links.
COMPACT_FROM = 14
#: ... where the first this many findings are shown, the rest and the interactions folded.
FINDINGS_SHOWN = 3


def curve_caveat(differs: dict[str, Any]) -> str:
    """``threads differs between points: 1, 2, 2, 2`` (numbers are listed; dates and texts
    would only be long)."""
    words = f"{knowledge.field_label(str(differs.get('field')))} differs between points"
    values = differs.get("values") or []
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        words += ": " + ", ".join(fmt.figure(v) or str(v) for v in values)
    return words


def write_curves(site: Site, known: dict[str, Any], group_urls: dict[str, str]) -> int:
    """One page of throughput curves (tps against clients or scale), each drawn by Vega-Lite
    with its points as a table and analyze's sentence about its peak and fall-off."""
    shown = []
    for curve in known.get("curves") or []:
        if not isinstance(curve, dict):
            continue
        swept = knowledge.field_label(str(curve.get("swept")))
        held = curve.get("held_equal") or {}
        context = ", ".join(
            [
                str(v)
                for k, v in held.items()
                if k in {"benchmark.workload.name", "postgres.version", "storage.data.array.level"}
            ]
            + (
                [f"bench session {labels.session_words(str(held['repeat.session']))}"]
                if held.get("repeat.session")
                else []
            )
        )
        title = f"tps against {swept} on {curve.get('machine')}" + (
            f" ({context})" if context else ""
        )
        points = [p for p in curve.get("points") or [] if isinstance(p, dict)]
        rows = [
            {
                "x": fmt.figure(p.get("x")),
                "tps": fmt.figure(p.get("tps")),
                "latency": fmt.figure(p.get("latency_ms")),
                "n": fmt.figure(p.get("n")),
                "url": group_urls.get(str(p.get("group"))),
            }
            for p in points
        ]
        description = labels.readable(str(curve.get("text") or title))
        shown.append(
            {
                "machine": str(curve.get("machine")),
                "id": knowledge.page_slug(str(curve.get("id"))),
                "title": title,
                "swept": swept,
                "text": description,
                "rows": rows,
                "swept_field": str(curve.get("swept")),
                "held_equal": held,
                "held_other": curve.get("held_other") or {},
                "points": points,
                "held": knowledge.held_words(held),
                "caveats": [
                    curve_caveat(d) for d in curve.get("differs_also") or [] if isinstance(d, dict)
                ],
            }
        )
    about = (
        "How throughput changes as one numeric factor (clients, scale) grows, everything else "
        "held equal: where it peaks and where it falls off."
    )
    # The curves of release series' releases: their points are in the series' tables; each
    # is one line (its sentence) on a page of its own, counted here.
    releases = series_pages.series_groups(known)
    serial = [
        item
        for item in shown
        if item["points"] and all(str(p.get("group")) in releases for p in item["points"])
    ]
    if serial:
        shown = [item for item in shown if item not in serial]
        series_pages.write_series_curves(site, serial)
    about_serial = series_pages.series_curves_note(len(serial))
    by_machine: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in shown:
        by_machine[knowledge.page_slug(item["machine"].split(" ")[0])].append(item)
    overlays = {slug: curve_overlays(site, items) for slug, items in by_machine.items()}
    overlay_of = {id(item): overlay_key(item) for item in shown}
    for item in shown:
        for key in ("swept_field", "held_equal", "held_other", "points"):
            item.pop(key)
    if len(shown) > CURVES_SPLIT_FROM and len(by_machine) > 1:
        # Like a large family of comparisons: one page per machine, and a list of them; a
        # machine with more overlays than OVERLAYS_A_PAGE gets a page per overlay.
        parts = []
        for slug, items in sorted(by_machine.items()):
            machine = items[0]["machine"].split(" ")[0]
            for item in items:
                item["folded"] = len(items) > CURVES_SPLIT_FROM
            pages = [(slug, items, overlays[slug], "")]
            if len(overlays[slug]) > OVERLAYS_A_PAGE:
                pages = [
                    (f"{slug}--{overlay['slug']}",
                     [i for i in items if overlay_of[id(i)] == overlay["key"]],
                     [overlay], f", {overlay['what']}")
                    for overlay in overlays[slug]
                ]  # fmt: skip
            for page, page_items, page_overlays, what in pages:
                site.page(
                    f"comparisons/curves--{page}.md",
                    {
                        "title": f"Throughput curves on {machine}{what}",
                        "description": about,
                        "params": {
                            "kind": "curves",
                            "curves": page_items,
                            "overlays": page_overlays,
                        },
                    },
                )
                parts.append(
                    {
                        "title": machine + what,
                        "url": f"comparisons/curves--{page}/",
                        "n": len(page_items),
                    }
                )
        site.page(
            "comparisons/curves.md",
            {
                "title": "Throughput curves",
                "description": about + " One page per machine.",
                "params": {"kind": "comparisons", "pages": parts, "in_series": about_serial},
            },
        )
    elif shown or serial:
        site.page(
            "comparisons/curves.md",
            {
                "title": "Throughput curves",
                "description": about,
                "params": {
                    "kind": "curves",
                    "curves": shown,
                    "overlays": [o for slug in sorted(overlays) for o in overlays[slug]],
                    "in_series": about_serial,
                },
            },
        )
    return len(shown) + len(serial)


def series_names(items: list[dict[str, Any]]) -> list[str]:
    """What tells curves of one machine apart: the held-equal fields whose values differ
    between them (``scale 5``, ``PostgreSQL version 18.6``); where no headline field does, the
    other fields each curve holds equal (a cloud volume); else each curve's title."""

    def held(item: dict[str, Any]) -> dict[str, Any]:
        return {**(item.get("held_other") or {}), **item["held_equal"]}

    differ: list[str] = []
    for fields in (lambda i: i["held_equal"], held):
        keys = sorted({k for item in items for k in fields(item)})
        differ = [k for k in keys if len({str(fields(i).get(k)) for i in items}) > 1]
        if differ:
            break
    names = list(
        labels.apart_parts(
            *(
                ", ".join(_series_part(held(i).get(k), k) for k in differ) or i["title"]
                for i in items
            )
        )
    )
    if len(set(names)) < len(names):
        names = [f"{n} ({number})" for number, n in enumerate(names, start=1)]
    return names


def _series_part(value: Any, field: str) -> str:
    """A held-equal field as a legend names it: ``scale 5``; a bench session by its start alone,
    ``session 2026-11-27 08:22 UTC`` (its random token means nothing to a reader)."""
    if field == "repeat.session" and isinstance(value, str):
        return f"session {labels.session_words(value)}"
    return f"{knowledge.field_label(field)} {knowledge._value(value)}"


def curve_workload(item: dict[str, Any]) -> str:
    """The workload a curve held equal, or ``workload varies``."""
    return str(item["held_equal"].get("benchmark.workload.name") or "workload varies")


def overlay_key(item: dict[str, Any]) -> str:
    """The overlay a curve is drawn on: its swept factor and workload (``clients, select-only``)."""
    return f"{item['swept']}, {curve_workload(item)}"


def curve_overlays(site: Site, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For one machine, per swept factor and workload: every curve on one chart of tps against
    it (clients on a log₂ axis, as pgbench-tools draws them), and latency against tps."""
    by_swept: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        by_swept[(item["swept_field"], curve_workload(item))].append(item)
    overlays = []
    for (field, workload), curves in sorted(by_swept.items()):
        machine = curves[0]["machine"]
        swept = curves[0]["swept"]
        names = series_names(curves)
        tps_points, latency_points = [], []
        for name, curve in zip(names, curves, strict=True):
            for p in curve["points"]:
                x, tps, latency = p.get("x"), p.get("tps"), p.get("latency_ms")
                if not isinstance(x, int | float) or not isinstance(tps, int | float):
                    continue
                # Rounded as pages print them: each point's label is in the chart's SVG.
                tps = round(tps, 1)
                tps_points.append({"x": x, "tps": tps, "series": name})
                if isinstance(latency, int | float):
                    latency = round(latency, 3)
                    latency_points.append({"x": x, "tps": tps, "latency": latency, "series": name})
        many = fmt.count(len(curves), "curve")
        charts_shown = []
        if len(tps_points) >= 2:
            log2 = field == "benchmark.clients"
            words = (
                f"tps against {swept} on {machine}, {workload}, {many} (one line each"
                + (", named by what sets it apart" if len(curves) > 1 else "")
                + ")"
                + (f"; {swept} on a log₂ axis, each doubling one step" if log2 else "")
                + ". Each curve's points are in its table below."
            )
            spec = charts.curve_spec(f"tps against {swept}", words, tps_points, swept, log2=log2)
            charts_shown.append({"src": site.chart_from_spec(spec), "description": words})
        if len(latency_points) >= 2:
            words = (
                f"Average latency against tps on {machine}, {workload}, {many}, each line's "
                "points joined "
                f"in order of {swept}: where tps stops rising while latency climbs, more "
                f"{swept} only queue."
            )
            spec = charts.latency_spec("latency against tps", words, latency_points)
            charts_shown.append({"src": site.chart_from_spec(spec), "description": words})
        if charts_shown:
            overlays.append(
                {"title": f"Every curve of {swept} on {machine}, {workload}",
                 "charts": charts_shown,
                 "id": knowledge.page_slug(f"overlay-{machine}-{field}-{workload}"),
                 "key": overlay_key(curves[0]),
                 "slug": knowledge.page_slug(f"{swept}-{workload}"),
                 "what": f"{workload}, against {swept}"}
            )  # fmt: skip
    return overlays


#: How a latency metric of ``analyze/latency.py`` is named in a comparison's latency table.
LATENCY_NAMES = {
    "latency_avg_ms": "average",
    "latency_p50_ms": "median (p50)",
    "latency_p95_ms": "p95",
    "latency_p99_ms": "p99",
    "latency_stddev_ms": "standard deviation",
}


OUTCOME_WORDS = {
    "better": "lower: better",
    "worse": "higher: worse",
    "within_noise": "within the noise",
    "spread_unknown": "spread unknown",
    "not_comparable": "no verdict (different bench sessions)",
}


def latency_shown(comparison: dict[str, Any]) -> dict[str, Any]:
    """One latency line under its tps comparison: both centres in ms, the change, and the
    verdict read the way latency reads (lower is better)."""
    a, b = comparison.get("a") or {}, comparison.get("b") or {}
    return {
        "metric": LATENCY_NAMES.get(str(comparison.get("metric")), str(comparison.get("metric"))),
        "a": fmt.ms(knowledge.center_of(a)),
        "b": fmt.ms(knowledge.center_of(b)),
        "change": fmt.change(comparison.get("change_pct")) or "—",
        "verdict": str(comparison.get("outcome") or comparison.get("verdict")),
        "words": OUTCOME_WORDS.get(str(comparison.get("outcome")), str(comparison.get("verdict"))),
    }


#: A side's value longer than this is written as its configuration's words instead.
LONG_VALUE = 60


def comparison_shown(
    comparison: dict[str, Any],
    group_urls: dict[str, str],
    group_words: dict[str, str],
    family: str,
    samples: dict[str, list[float]] | None = None,
) -> dict[str, Any]:
    """A comparison as its page shows it; ``samples``: each group's runs' tps by group id (the
    chart shows them)."""
    cid = knowledge.page_slug(str(comparison.get("id")))
    raw_a, raw_b = comparison.get("a") or {}, comparison.get("b") or {}
    factor = str(comparison.get("factor"))
    value_a, value_b = knowledge.differing_values(
        knowledge.side_value(raw_a, factor), knowledge.side_value(raw_b, factor), factor
    )
    if isinstance(raw_a.get("value"), dict) and max(len(value_a), len(value_b)) > LONG_VALUE:
        # Several fields changed together (a storage layout, a set of settings): each side
        # as its configuration reads, not a list of every field that differs.
        value_a = group_words.get(str(raw_a.get("group"))) or value_a
        value_b = group_words.get(str(raw_b.get("group"))) or value_b
    a = knowledge.side(raw_a, value_a, group_urls)
    b = knowledge.side(raw_b, value_b, group_urls)
    label = str(comparison.get("label") or knowledge.factor_words(str(comparison.get("factor"))))
    short_a, short_b = value_a, value_b
    if len(short_a) > 40 or len(short_b) > 40:
        short_a = group_words.get(str(raw_a.get("group"))) or "A"
        short_b = group_words.get(str(raw_b.get("group"))) or "B"
        short_a, short_b = labels.apart_parts(short_a, short_b)
    title = f"{label}: {short_a} → {short_b}"
    verdict = str(comparison.get("verdict"))
    change = fmt.change(comparison.get("change_pct"))
    verdict_words = knowledge.VERDICT_WORDS.get(verdict, verdict)
    sentence = f"B against A: {verdict_words}"
    if change:
        sentence += f"; B is {change} against A ({fmt.ratio(comparison.get('ratio'))} of A)"
    interval = (comparison.get("test") or {}).get("ci95_ratio")
    interval_words = None
    if isinstance(interval, list) and len(interval) == 2:
        low, high = interval
        if low and high and high / low > 100:
            sentence += "; the 95% interval of the ratio is so wide (more than a hundredfold) "
            sentence += "that it says nothing"
            interval_words = "more than a hundredfold wide"
        else:
            sentence += f"; 95% interval of the ratio {fmt.ratio(low)} to {fmt.ratio(high)}"
            interval_words = f"{fmt.ratio(low)} to {fmt.ratio(high)}"
    sentence += session_words(comparison) + adjustment_words(comparison)
    runs_of = samples or {}
    sides = [
        {"name": name, "center": s["center_raw"], "runs": runs_of.get(str(raw.get("group")))}
        for name, s, raw in (("A", a, raw_a), ("B", b, raw_b))
    ]
    chart = None
    svg = charts.runs_svg(sides, title=title)
    if svg:
        # Placed in the page itself: thousands of comparisons would be thousands of files.
        chart = {
            "svg": svg,
            "description": f"Each run of A and of B on one tps axis (a dot per run; the line "
            f"spans its lowest to its highest run; the tall mark is the centre: A {a['center']}, "
            f"B {b['center']}).",
        }
    page = verdict_sections.page_for(family, verdict)
    caveats = [labels.readable(t) for t in labelled(comparison.get("confounds") or [])]
    caveats += knowledge.caveat_words(comparison.get("differs_also"))
    return {
        "id": cid,
        "url": f"comparisons/{page}/#{cid}",
        "title": title,
        "factor": label,
        "machine": str(comparison.get("machine")),
        "verdict": verdict,
        "tone": verdict_tone(comparison, verdict),
        "verdict_words": sentence,
        "a": a,
        "b": b,
        "context": context_words(
            str(comparison.get("machine")),
            group_words.get(str(raw_a.get("group"))) or short_a,
            group_words.get(str(raw_b.get("group"))) or short_b,
        ),
        "held": knowledge.held_words(comparison.get("held_equal")),
        "caveats": caveats,
        "unsafe": any(x.get("kind") == "unsafe" for x in comparison.get("confounds") or []),
        "chart": chart,
        "change_pct": comparison.get("change_pct"),
        # The one-line form of a page with many verdicts (COMPACT_FROM).
        "row": {
            "change": change or "—",
            "interval": interval_words or "—",
            "verdict": ROW_VERDICT_WORDS.get(verdict, verdict) + row_adjustment(comparison),
            "caveats": " ".join(as_sentence(c) for c in caveats),
        },
        "short": f"{short_a} → {short_b}",
        "workload": str(
            (comparison.get("held_equal") or {}).get("benchmark.workload.name") or "workload varies"
        ),
    }


def as_sentence(words: str) -> str:
    """A caveat as a sentence of a compact row: a capital first letter (not on a setting's
    name: ``commit_delay`` stays as written) and a full stop."""
    first = words.split(" ", 1)[0]
    if words and "_" not in first:
        words = words[0].upper() + words[1:]
    return words if words.endswith(".") else words + "."


#: A verdict in a compact row (the full sentence is in ``knowledge.VERDICT_WORDS``).
ROW_VERDICT_WORDS = {
    "higher": "higher",
    "lower": "lower",
    "within_noise": "within the noise",
    "spread_unknown": "not judged (spread unknown)",
    "not_comparable": "no verdict",
}


def row_adjustment(comparison: dict[str, Any]) -> str:
    """What the family-wise adjustment says of a comparison, in a compact row: ``; significant
    after Holm (54 tests)``; nothing when it changes nothing."""
    said = adjusted_verdict(comparison)
    if said is None or (said[1] == 1 and not said[2]):
        return ""
    words, n, pooled = said
    return (
        f"; {words} after Holm ({fmt.count(n, 'test')}{', pooled over sessions' if pooled else ''})"
    )


def verdict_tone(comparison: dict[str, Any], verdict: str) -> str:
    """The verdict a comparison's colour follows (``verdict-…`` class): its own, but a higher or
    lower that its family's adjustment leaves not significant is coloured as within the noise
    (green for "higher; not significant after Holm" would say what the words deny)."""
    said = adjusted_verdict(comparison)
    return "within_noise" if said is not None and said[0] == "not significant" else verdict


def adjusted_verdict(comparison: dict[str, Any]) -> tuple[str, int, bool] | None:
    """``(significant | not significant, tests in its family, pooled)`` once its family is
    adjusted (analyze/multiplicity.py, ``family``); None with no family, or a verdict the
    adjustment does not speak to."""
    family = comparison.get("family") or {}
    if not family:
        return None
    if family.get("significant"):
        words = "significant"
    elif comparison.get("verdict") in ("higher", "lower"):
        words = "not significant"
    else:
        return None
    return words, int(family.get("size") or 1), bool(family.get("pooled"))


def context_words(machine: str, words_a: str, words_b: str) -> str:
    """Where a comparison ran and what each side is, beyond the factor its title names; said
    once when the two sides read the same (the factor is all that sets them apart)."""
    if words_a == words_b:
        return f"On {machine}; both sides: {words_a}."
    return f"On {machine}. A: {words_a}. B: {words_b}."


def adjustment_words(comparison: dict[str, Any]) -> str:
    """What the family-wise adjustment (analyze/multiplicity.py, ``family``) says of a
    comparison: said when it changes something, or when a pooled estimate speaks for it."""
    said = adjusted_verdict(comparison)
    if said is None:
        return ""
    verdict, n, pooled = said
    pooled_words = "pooled with its other sessions: " if pooled else ""
    if n == 1:
        return f"; {pooled_words}{verdict}" if pooled else ""
    adjusted = f" once adjusted for the {n} tests of this question on this machine (Holm)"
    return f"; {pooled_words}{verdict}{adjusted}"


def session_words(comparison: dict[str, Any]) -> str:
    """What the verdict rests on, when that is not plain: measured apart (and why nothing can
    be said), the variance between bench sessions in the interval, or the scale of noise this
    knowledge base has measured beside a change it cannot judge."""
    sessions = comparison.get("sessions") or {}
    verdict = comparison.get("verdict")
    if verdict == "not_comparable":
        why = labels.readable(str(sessions.get("why") or "the sides were measured apart"))
        return f". No verdict: {why}"
    between = sessions.get("between")
    if isinstance(between, dict):
        return (
            ". The interval includes the variance between bench sessions, estimated from "
            f"{fmt.count(between.get('configurations'), 'configuration')} of this machine "
            f"measured in more than one session ({between.get('sessions')} session means)"
        )
    noise = comparison.get("noise_context")
    if verdict == "spread_unknown" and isinstance(noise, dict):
        return (
            ". For scale, not as a test: the "
            f"{fmt.count(noise.get('groups'), str(noise.get('workload')) + ' group')} with repeats "
            f"in this knowledge base vary from run to run by a CV of "
            f"{fmt.percent(noise.get('cv_pct_min'))} to {fmt.percent(noise.get('cv_pct_max'))} "
            f"(median {fmt.percent(noise.get('cv_pct_median'))})"
        )
    return ""


def spread_bounds(item: dict[str, Any]) -> dict[str, Any]:
    spread = item.get("spread") or {}
    center = knowledge.center_of(item)
    low, high = spread.get("min"), spread.get("max")
    return {
        "min": low if isinstance(low, int | float) else center,
        "max": high if isinstance(high, int | float) else center,
    }


#: An overview's bar label is cut here, before Vega sees it: Vega measures a label too long
#: for its ``labelLimit`` again and again to cut it (the overview of 300 comparisons took
#: 5.8 s to draw, against 0.3 s with labels cut beforehand).
LABEL_CHARS = 22


def short_label(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"


def write_comparison_pages(
    site: Site, families: dict[str, list[dict[str, Any]]], known: dict[str, Any]
) -> None:
    listed = []
    cited = cited_slugs(known)
    for slug, title, about, _ in knowledge.FAMILIES:
        every = sorted(families.get(slug, []), key=lambda c: (c["machine"], c["id"]))
        if not every:
            continue
        # Inside release series: counted here, listed on a page of their own.
        serial = [c for c in every if c.get("in_series")]
        items = [c for c in every if not c.get("in_series")]
        if serial:
            series_pages.write_in_series_page(site, slug, title, serial)
        note = series_pages.in_series_note(slug, len(serial))
        pages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in items:
            pages[verdict_sections.family_page(item["url"].split("/")[1])].append(item)
        if len(pages) <= 1:
            write_comparison_page(site, slug, title, about, items, known, cited, note)
        else:
            parts = []
            for page, page_items in sorted(pages.items()):
                machine = page_items[0]["machine"]
                write_comparison_page(
                    site, page, f"{title} on {machine}", about, page_items, known, cited
                )
                parts.append(
                    {"title": machine, "url": f"comparisons/{page}/", "n": len(page_items)}
                )
            site.page(
                f"comparisons/{slug}.md",
                {
                    "title": title,
                    "description": f"Controlled comparisons of {about}, one page per machine.",
                    "params": {"kind": "comparisons", "pages": parts, "in_series": note},
                },
            )
        listed.append(
            {"title": title, "url": f"comparisons/{slug}/", "about": about, "n": len(every)}
        )
    n_series = series_pages.write_series_page(site, known)
    if n_series:
        listed.append(
            {
                "title": "Release series",
                "url": f"comparisons/{series_pages.SERIES_PAGE}/",
                "about": "one workload on many releases of one machine, release by release",
                "n": n_series,
            }
        )
    if known.get("curves"):
        listed.append(
            {
                "title": "Throughput curves",
                "url": "comparisons/curves/",
                "about": "tps as clients or scale grow, with its peak and fall-off",
                "n": len(known["curves"]),
            }
        )
    site.page(
        "comparisons/_index.md",
        {"title": "Comparisons", "params": {"kind": "comparison-list", "families": listed}},
        "Each comparison sets two configurations of one machine side by side that differ in "
        "one thing, and says whether the difference stands out from the noise of repeats.\n",
    )


def cited_slugs(known: dict[str, Any]) -> dict[str, dict[str, list[int]]]:
    """For findings and interactions: by the page slug of each comparison cited, the positions
    (in ``known``'s list) of the entries that cite it — worked out once, not once per page."""
    citing: dict[str, dict[str, list[int]]] = {}
    for key in ("findings", "interactions"):
        by_slug = citing[key] = defaultdict(list)
        for position, entry in enumerate(known.get(key) or []):
            if isinstance(entry, dict):
                for slug in {knowledge.page_slug(str(c)) for c in entry.get("comparisons") or []}:
                    by_slug[slug].append(position)
    return citing


def _citing(
    known: dict[str, Any], key: str, cited: dict[str, dict[str, list[int]]], ids: set[str]
) -> list[dict[str, Any]]:
    """The findings or interactions (``key``) that cite one of the comparisons ``ids``, in
    their order."""
    entries = known.get(key) or []
    positions = sorted({n for slug in ids for n in cited[key].get(slug, ())})
    return [entries[n] for n in positions]


def write_comparison_page(
    site: Site,
    slug: str,
    title: str,
    about: str,
    items: list[dict[str, Any]],
    known: dict[str, Any],
    cited: dict[str, dict[str, list[int]]] | None = None,
    in_series: dict[str, Any] | None = None,
) -> None:
    """One page of comparisons: the pooled estimates, an overview chart, the findings and
    interactions that cite them, and each comparison with a verdict in full; those without one
    are counted, and listed on a page of their own; ``in_series``: what it says of the
    comparisons inside release series (``series_pages.in_series_note``), listed elsewhere."""
    ids = {c["id"] for c in items}
    every, items = items, [c for c in items if verdict_sections.has_verdict(c)]
    if len(items) < len(every):
        verdict_sections.write_no_verdict_page(site, slug, title, every)
    cited = cited or cited_slugs(known)

    # Each statement once: an interaction is also a finding of kind "interaction", so it is
    # listed under Interactions only (it was listed twice on a page).
    interactions = [
        {"text": labels.readable(str(i.get("text") or i.get("summary") or i.get("id")))}
        for i in _citing(known, "interactions", cited, ids)
    ]
    said = {i["text"] for i in interactions}
    findings = []
    for f in _citing(known, "findings", cited, ids):
        text = labels.readable(str(f.get("text")))
        if text not in said:
            said.add(text)
            findings.append({"text": text})
    compact = len(items) > COMPACT_FROM
    held_common: list[str] = []
    if compact:
        # What every row holds equal is said once above the table; each row says the rest.
        held_common = [h for h in items[0]["held"] if all(h in c["held"] for c in items)]
        items = [{**c, "held_rest": [h for h in c["held"] if h not in held_common]} for c in items]
    # On a page of many verdicts the findings past the first few, and the interactions, are
    # one click away (216 imported runs gave 5,800 px of findings and 4,600 of interactions).
    findings, more_findings = (
        (findings[:FINDINGS_SHOWN], findings[FINDINGS_SHOWN:]) if compact else (findings, [])
    )
    overview = None
    bars = labels.bar_labels([{**c, "panel": (c["machine"], c["workload"])} for c in items])
    rows = [
        {
            "comparison": short_label(f"{number}. {bar}"),
            "change_pct": c["change_pct"],
            "verdict": c["verdict"],
            "panel": f"{c['machine']} · {c['workload']}",
        }
        for number, (c, bar) in enumerate(zip(items, bars, strict=True), start=1)
        if isinstance(c["change_pct"], int | float)
    ]
    if rows:
        many = fmt.count(len(rows), "comparison")
        description = (
            f"Change of B against A, in percent, for each of the {many} on this page, one "
            "panel per machine and workload, numbered as below: green where B is clearly "
            "higher, red where clearly lower, grey where the difference is within the noise, "
            "light where it was not judged (spread unknown). "
            "Each comparison's figures are in its table below."
        )
        spec = charts.changes_spec(f"{title}: change of B against A", description, rows)
        overview = {"src": site.chart_from_spec(spec), "description": description}
    site.page(
        f"comparisons/{slug}.md",
        {
            "title": title,
            "description": f"Controlled comparisons of {about}.",
            "params": {
                "kind": "comparisons",
                "overview": overview,
                "pooled": verdict_sections.pooled_shown(known, items),
                "no_verdict": verdict_sections.no_verdict_note(slug, every),
                "in_series": in_series,
                "comparisons": items,
                "compact": compact,
                "held_common": held_common,
                "findings": findings,
                "more_findings": more_findings,
                "interactions": interactions,
            },
        },
    )
