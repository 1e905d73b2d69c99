"""Issue 31, the answer at a glance: on the shipped site, every comparison page (its verdicts;
the comparisons without one are counted there and listed on a page of their own) stays short
enough to read and light enough to load, measured in real headless Chromium at 1280 px."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbtest import serve

pytestmark = [pytest.mark.site, pytest.mark.browser]

WIDE = {"width": 1280, "height": 900}
#: The tallest a comparison page may be at 1280 px (the durability page was 51,230 px).
MAX_HEIGHT_PX = 15_000
#: The most a comparison page may transfer with what it loads (it was 402 KB).
MAX_BYTES = 150 * 1024


def comparison_pages(public: Path) -> list[str]:
    return sorted(
        p.parent.relative_to(public).as_posix() + "/"
        for p in (public / "comparisons").rglob("index.html")
        if 'http-equiv="refresh"' not in p.read_text(encoding="utf-8")[:600]
    )


def test_every_comparison_page_is_short_and_light(shipped_site: Path, browser):
    """Each page in a fresh context (nothing cached), scrolled to its end so that its lazy
    charts load too; its height and every byte it received."""
    paths = comparison_pages(shipped_site)
    assert any(p.endswith("--no-verdict/") for p in paths), "no page without verdicts: check"
    measured = {}
    with serve(shipped_site) as base:
        for path in paths:
            context = browser.new_context(viewport=WIDE)
            page = context.new_page()
            sizes: list[int] = []
            page.on(
                "requestfinished",
                lambda r, sizes=sizes: sizes.append(r.sizes()["responseBodySize"]),
            )
            page.goto(base + path, wait_until="networkidle")
            height = page.evaluate("document.documentElement.scrollHeight")
            page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
            page.wait_for_load_state("networkidle")
            measured[path] = (height, sum(sizes))
            context.close()
    too_tall = {p: h for p, (h, _) in measured.items() if h > MAX_HEIGHT_PX}
    too_heavy = {p: b for p, (_, b) in measured.items() if b > MAX_BYTES}
    assert not too_tall, f"taller than {MAX_HEIGHT_PX} px at 1280 px: {too_tall}"
    assert not too_heavy, f"heavier than {MAX_BYTES} bytes with what they load: {too_heavy}"
    assert all(b > 5_000 and h >= WIDE["height"] for h, b in measured.values()), measured


def test_verdicts_are_listed_and_the_rest_counted(shipped_site: Path):
    """A comparison page lists only comparisons with a verdict; it counts the others and links
    the page that lists them, which lists nothing else."""
    durability = (shipped_site / "comparisons" / "durability" / "index.html").read_text("utf-8")
    apart = shipped_site / "comparisons" / "durability--no-verdict" / "index.html"
    listed = apart.read_text("utf-8")
    assert "verdict-not_comparable" not in durability
    # In full (one section each) or compact (one row each, past COMPACT_FROM verdicts).
    assert 'class="verdict verdict-higher"' in durability or (
        'class="data compact-comparisons"' in durability and 'verdict-higher"' in durability
    )
    assert "without a verdict</a>" in durability and "durability--no-verdict/" in durability
    assert listed.count("<li id=") >= 10 and "verdict-higher" not in listed
    assert 'id="pooled"' in durability  # the pooled verdicts lead
    starts = [
        at
        for mark in ('class="comparison"', 'class="data compact-comparisons"')
        if (at := durability.find(mark)) >= 0
    ]
    assert starts and durability.index('id="pooled"') < min(starts)


def test_release_series_are_tables_and_their_comparisons_counted(shipped_site: Path):
    """The archaeology set's 12 series (2 query modes × 6 client counts, 20 releases each) are
    one table each; their 228 steps and the query-mode comparisons among their releases are
    counted on the question's page and listed one line each on its page of series
    comparisons, whose anchors the series' rows share."""
    comparisons = shipped_site / "comparisons"
    series = (comparisons / "release-series" / "index.html").read_text("utf-8")
    assert series.count('<table class="data series-table">') == 12
    assert series.count("crosses sessions: not judged") == 4 * 12  # the steps
    assert series.count("crosses bench sessions: shown, not judged") == 12  # first → last
    assert series.count("settings change too (above)") == 2 * 12  # 8.0 → 8.2, 9.4 → 9.5
    assert (
        "9.4.26 → 9.5.25: checkpoint_segments 8,192 → not set, max_wal_size not set → 128GB"
    ) in series
    assert "12 series of releases on tvondra-archaeology-unspecified" in series
    assert "PostgreSQL 9.5 replaced checkpoint_segments with max_wal_size" in series
    assert "pgbench client (18devel)" in series and "star-1.sql" in series
    versions = (comparisons / "postgres-version" / "index.html").read_text("utf-8")
    assert "228 more comparisons of this question pair releases" in versions
    assert "postgres-version--series/" in versions and "release-series/" in versions
    assert "tvondra-archaeology-unspecified" not in versions
    listed = (comparisons / "postgres-version--series" / "index.html").read_text("utf-8")
    assert listed.count("<li id=") == 228
    for anchor in re.findall(r'<tr id="([^"]+)"', series):
        assert f'<li id="{anchor}">' in listed, anchor
    modes = (comparisons / "query-mode--series" / "index.html").read_text("utf-8")
    assert modes.count("<li id=") == 20 * 6


def test_a_page_of_many_verdicts_lists_them_one_row_each(shipped_site: Path, browser):
    """The kernel-bench Xeon's 54 client comparisons (issue 32): one row each, anchored as in
    full, what they all hold equal said once, each side's centre linking its configuration;
    at 360 px each row reads as a block (no sideways scrolling)."""
    page_file = shipped_site / "comparisons" / "clients--xeon-e5-4620-4s" / "index.html"
    html = page_file.read_text("utf-8")
    rows = re.findall(r'<tr id="(clients-[0-9a-f]+)">', html)
    assert len(rows) > 24 and '<section class="comparison"' not in html
    assert "Every comparison here holds equal: " in html and "Also held equal: " in html
    assert 'data-label="Verdict"' in html and "after Holm (54 tests)" in html
    with serve(shipped_site) as base:
        for width in (360, 1280):
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            page.goto(base + "comparisons/clients--xeon-e5-4620-4s/#" + rows[-1])
            row = page.locator(f"tr#{rows[-1]}")
            assert row.is_visible() and row.locator("a").count() == 2
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, (width, wide)
            context.close()
