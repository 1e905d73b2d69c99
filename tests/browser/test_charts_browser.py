"""Charts that read (issue #21, item 2), checked in Debian's Chromium on the day-one site built
by scripts/site.sh: no chart text drawn outside its chart, no text under 11 px on a 360-px
screen, a comparison's runs drawn as dots (or no chart where the table says it all), legends
in words, summary charts split by machine and workload, curves on a log₂ axis of clients,
latency against tps, and the progress chart's latency panel.

Regression (issue #21): the per-comparison bars clipped their title and the "B:" label, and
summary charts were unreadable at 360 px (a 600-px picture scaled to a third)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbtest import serve

pytestmark = [pytest.mark.site, pytest.mark.browser]

NARROW = {"width": 360, "height": 740}
SMALLEST_TEXT_PX = 11

#: For an <svg> root: each <text> whose box leaves the SVG's own box (a pixel of slack).
CLIPPED_TEXTS = """(svg) => {
  const box = svg.getBoundingClientRect();
  const out = [];
  for (const text of svg.querySelectorAll("text")) {
    const r = text.getBoundingClientRect();
    if (!text.textContent.trim() || r.width === 0) { continue; }
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
        || r.bottom > box.bottom + 1) {
      out.push(text.textContent.trim() + " at " + [r.left, r.right, r.top, r.bottom]
               .map(Math.round).join(",") + " in " + [box.left, box.right, box.top, box.bottom]
               .map(Math.round).join(","));
    }
  }
  return out;
}"""

#: For an <svg> root: the smallest text size as shown, in CSS pixels (its font size times the
#: scale the page draws the SVG at).
SMALLEST_SHOWN = """(svg) => {
  const viewBox = svg.viewBox && svg.viewBox.baseVal;
  const scale = viewBox && viewBox.width ? svg.getBoundingClientRect().width / viewBox.width : 1;
  let smallest = Infinity;
  for (const text of svg.querySelectorAll("text")) {
    if (!text.textContent.trim()) { continue; }
    smallest = Math.min(smallest, parseFloat(getComputedStyle(text).fontSize) * scale);
  }
  return smallest;
}"""


@pytest.fixture(scope="module")
def public(shipped_site: Path) -> Path:
    """The shipped site, built once for the session (read only)."""
    return shipped_site


def chart_pages(public: Path) -> list[str]:
    """The comparison pages (their overview and each comparison's runs), and a run page with
    a progress chart that has latency."""
    pages = sorted(
        p.parent.relative_to(public).as_posix() + "/"
        for p in (public / "comparisons").glob("*/index.html")
    )
    for page in sorted((public / "runs").glob("*/index.html")):
        if "latency (ms)" in page.read_text(encoding="utf-8"):
            pages.append(page.parent.relative_to(public).as_posix() + "/")
            break
    pages.append(shaded_run_page(public).parent.relative_to(public).as_posix() + "/")
    return pages


def shaded_run_page(public: Path) -> Path:
    """A run page whose progress chart shades checkpoints (the campaign's checkpoints runs
    record when theirs ran)."""
    return next(
        p for p in sorted((public / "runs").glob("*/index.html"))
        if "(checkpoints shaded)" in p.read_text(encoding="utf-8")
    )  # fmt: skip


def test_no_text_leaves_a_chart_drawn_by_vega(public, browser):
    """Each chart file opened on its own: every text inside the SVG's box."""
    files = sorted((public / "charts").glob("*.svg"))
    assert len(files) >= 10
    with serve(public) as base:
        page = browser.new_page()
        clipped = {}
        for svg in files:
            page.goto(f"{base}charts/{svg.name}")
            found = page.locator("svg").first.evaluate(CLIPPED_TEXTS)
            if found:
                clipped[svg.name] = found
        assert clipped == {}


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 900}, NARROW], ids=["1280", "360"])
def test_no_text_leaves_an_inline_chart_and_none_is_small_at_360_px(public, browser, viewport):
    with serve(public) as base:
        page = browser.new_page(viewport=viewport)
        clipped, small, images = {}, {}, 0
        paths = chart_pages(public)
        assert any(p.startswith("runs/") for p in paths)
        for path in paths:
            page.goto(base + path)
            for n, svg in enumerate(page.locator(".chart-inline svg").all()):
                svg.scroll_into_view_if_needed()
                if found := svg.evaluate(CLIPPED_TEXTS):
                    clipped[f"{path}#{n}"] = found
                if (size := svg.evaluate(SMALLEST_SHOWN)) < SMALLEST_TEXT_PX:
                    small[f"{path}#{n}"] = size
            # A chart file shown as an image: never scaled down (its text is drawn at 11 px
            # or more, checked below), so it reads as drawn.
            for img in page.locator("figure.chart img").all():
                img.scroll_into_view_if_needed()
                img.evaluate("i => i.decode()")
                shown, natural = img.evaluate("i => [i.clientWidth, i.naturalWidth]")
                images += 1
                if shown < natural - 1:
                    small[f"{path} {img.get_attribute('src')}"] = f"{shown} of {natural} px"
        assert images > 0
        assert clipped == {}
        assert small == {}


def test_chart_files_draw_no_text_under_11_px(public):
    sizes = {}
    for svg in (public / "charts").glob("*.svg"):
        found = [float(s) for s in re.findall(r'font-size="([0-9.]+)(?:px)?"', svg.read_text())]
        found += [float(s) for s in re.findall(r"font-size:\s*([0-9.]+)px", svg.read_text())]
        if found and min(found) < SMALLEST_TEXT_PX:
            sizes[svg.name] = min(found)
    assert sizes == {}


def test_a_comparison_shows_its_runs_as_dots_or_no_chart(public, browser):
    """A comparison of groups with runs: a dot per run (the number of runs behind it). One of
    published figures alone: no chart, the table says it all."""
    with serve(public) as base:
        page = browser.new_page()
        page.goto(base + "comparisons/clients--kb-dev-epyc-2c/")
        section = page.locator("section.comparison").filter(has=page.locator(".chart-inline"))
        first = section.first
        dots = first.locator(".chart-inline circle").count()
        # the runs behind each side: the table's Runs column (each side's configuration page
        # lists them)
        figures = first.locator(".chart-row table.data").first
        cells = figures.locator("tbody tr td:nth-child(3)").all_inner_texts()
        runs = sum(int(c.split()[0]) for c in cells if c.split() and c.split()[0].isdigit())
        assert len(cells) == 2 and dots == runs >= 4
        page.goto(base + "comparisons/commit-delay/")
        published = page.locator("section.comparison", has_text="hp-proliant-dl380-g4").first
        assert published.locator(".chart-inline").count() == 0


def test_summary_charts_split_by_machine_and_workload_with_legends_in_words(public, browser):
    with serve(public) as base:
        page = browser.new_page()
        for path in chart_pages(public):
            page.goto(base + path)
            text = page.locator("main").inner_text()
            assert "within_noise" not in text and "spread_unknown" not in text, path
    texts = " ".join(svg.read_text(encoding="utf-8") for svg in (public / "charts").glob("*.svg"))
    assert "within the noise" in texts
    assert "within_noise" not in texts and "spread_unknown" not in texts
    assert "kb-dev-epyc-2c · tpcb-like" in texts  # a panel per machine and workload


def test_curves_overlay_per_machine_on_a_log2_axis_with_latency_against_tps(public, browser):
    with serve(public) as base:
        page = browser.new_page()
        page.goto(base + "comparisons/curves--kb-dev-epyc-2c/")
        overlay = page.locator("section", has_text="Every curve of clients on kb-dev-epyc-2c")
        assert overlay.count() >= 1
        for heading in overlay.locator("h2, h3").all_inner_texts():  # one workload each
            if heading.startswith("Every curve"):
                assert heading.endswith((", select-only", ", tpcb-like")), heading
        captions = overlay.first.locator("figcaption").all_inner_texts()
        assert any("log₂" in c for c in captions)
        assert any(c.startswith("Average latency against tps") for c in captions)
        # Clients 2, 4, 8 evenly spaced: each doubling one step (on a linear axis 4 → 8 would
        # be twice 2 → 4). The end labels are drawn flush with the axis ends, so not these.
        src = overlay.first.locator("img").first.get_attribute("src")
        page.goto(base + "comparisons/curves--kb-dev-epyc-2c/" + src)
        xs = page.evaluate(
            """() => [...document.querySelectorAll("text")]
                 .filter(t => /^(1|2|4|8|16)$/.test(t.textContent.trim()))
                 .map(t => t.getBoundingClientRect().x + t.getBoundingClientRect().width / 2)"""
        )
        assert len(xs) >= 5
        steps = [xs[2] - xs[1], xs[3] - xs[2]]
        assert abs(steps[0] - steps[1]) < 2, steps


def test_the_progress_chart_shows_latency_and_says_what_it_knows_of_checkpoints(public):
    page = next(
        p for p in (public / "runs").glob("*/index.html")
        if "latency (ms)" in p.read_text(encoding="utf-8")
    )  # fmt: skip
    html = page.read_text(encoding="utf-8")
    assert html.count("<polyline") == 2  # tps, and latency below it
    assert re.search(r"checkpoint", html.split("<figcaption>", 1)[1].split("</figcaption>")[0])


def test_the_progress_chart_shades_checkpoints_and_its_table_names_them(public, browser):
    """Issue #21: a run that records when its checkpoints ran shows them on its progress chart
    (a band in each panel, a key saying what it is) and in the data table, at 360 px too."""
    path = shaded_run_page(public).parent.relative_to(public).as_posix() + "/"
    with serve(public) as base:
        page = browser.new_page(viewport=NARROW)
        page.goto(base + path)
        svg = page.locator(".chart-inline svg").first
        assert svg.locator("text", has_text="checkpoint").count() == 1
        bands = svg.locator('rect[fill="#f6dfb3"]:not([stroke])')
        assert bands.count() >= 1
        box, band = svg.bounding_box(), bands.first.bounding_box()
        assert box and band and band["width"] >= 1 and band["x"] >= box["x"]
        caption = page.locator("figure.chart figcaption").first.inner_text()
        assert "shaded on the chart (the server's log)" in caption
        page.locator("details.chart-data summary").first.click()
        headers = page.locator("details.chart-data th").all_inner_texts()
        assert headers[-1] == "Checkpoint"
        cells = page.locator("details.chart-data tbody tr td:last-child").all_inner_texts()
        assert any(cell != "—" for cell in cells) and "—" in cells
