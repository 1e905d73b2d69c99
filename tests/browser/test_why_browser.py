"""The pages that show why (issue #36, items 3-5), in Debian's Chromium at 360 and 1280 px: a
run page with the server's CPU and disks every second under its progress chart, its wait
profile and flush line; a configuration's bottleneck sentence; a comparison's change of waits;
the machine's measured flush. Built with the real scripts/site.sh from the fixture runs of
tests/derive/fixtures/why (shipped runs with realistic series added).

Checked: no console error or failed request, no horizontal overflow of the page, both charts
drawn inline with every text inside its SVG and none under 11 px as shown. Screenshots of the
run page's section are written to the test's tmp folder (look at them after a layout change).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from kbtest import REPO, SITE_SOURCES, build_site, serve, shipped_root, watch_page
from pgbench_kb.derive.run_view import schema_descriptions

pytestmark = [pytest.mark.site, pytest.mark.browser]

WHY = REPO / "tests" / "derive" / "fixtures" / "why"
#: A run of the 30 s arm: four checkpoints shaded, waits on WAL sync standing out.
RUN = "20261127t022348z-kb-dev-epyc-2c-tpcb-like-s8-c4-8232f9a3"
GROUP = "kb-dev-epyc-2c-20261127t020354z-a80240-c86cad78"
VIEWPORTS = [{"width": 1280, "height": 900}, {"width": 360, "height": 740}]
NEEDED = ("storage.flush", "results.os_series", "results.wait_events")

#: Each <text> of an <svg> whose box leaves the SVG's box, and the smallest text as shown.
TEXTS = """(svg) => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const out = []; let smallest = Infinity;
  for (const text of svg.querySelectorAll("text")) {
    const r = text.getBoundingClientRect();
    if (!text.textContent.trim() || r.width === 0) { continue; }
    smallest = Math.min(smallest, parseFloat(getComputedStyle(text).fontSize) * scale);
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
        || r.bottom > box.bottom + 1) { out.push(text.textContent.trim()); }
  }
  return {clipped: out, smallest: smallest};
}"""


@pytest.fixture(scope="module")
def why_site(tmp_path_factory) -> Path:
    """The fixture runs' site (this checkout's layouts, the shipped content), built once."""
    missing = [f for f in NEEDED if f not in schema_descriptions()]
    if missing:
        # The fields are added to the run schema by the harness's side of issue #36; until
        # then kb check refuses the fixture runs, and site.sh with it.
        pytest.skip(f"the run schema does not describe {', '.join(missing)} yet")
    root = tmp_path_factory.mktemp("why") / "kb"
    root.mkdir()
    for name in SITE_SOURCES:
        source = (shipped_root() if name == "content" else REPO) / name
        if source.is_dir():
            shutil.copytree(source, root / name)
        else:
            shutil.copy2(source, root / name)
    runs = root / "data" / "runs" / "2026" / "11"
    runs.mkdir(parents=True)
    for fixture in sorted(WHY.glob("*.yaml")):
        shutil.copy(fixture, runs / fixture.name)
        for item in yaml.safe_load(fixture.read_text(encoding="utf-8"))["raw"]:
            target = root / item["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(shipped_root() / item["path"], target)
    return build_site(root)


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1280", "360"])
def test_run_page_shows_the_machine_and_the_waits(why_site, browser, viewport, tmp_path):
    with serve(why_site) as base:
        page = browser.new_page(viewport=viewport)
        problems = watch_page(page, base)
        page.goto(f"{base}runs/{RUN}/")
        svgs = page.locator(".chart-inline svg")
        assert svgs.count() == 2  # the progress chart, then the machine's
        assert "CPU and disks every second (checkpoints shaded)" in svgs.nth(1).inner_html()
        for index in range(2):
            svgs.nth(index).scroll_into_view_if_needed()
            found = svgs.nth(index).evaluate(TEXTS)
            assert found["clipped"] == []
            assert found["smallest"] >= 11
        # Shown whole at 360 px: the chart is not scaled down.
        assert svgs.nth(1).evaluate("s => s.getBoundingClientRect().width") >= 335
        section = page.locator("h2", has_text="What the machine and the server were doing")
        assert section.count() == 1
        text = page.locator("article").inner_text()
        assert "Evidence of waiting on commit flushes: during this run, 43% of backend" in text
        assert "WAL flush 0.251 ms here (pg_test_fsync, fdatasync)." in text
        waits = page.locator("table.waits tbody tr")
        assert waits.count() == 7
        cells = waits.first.locator("td").all_inner_texts()
        assert [c.strip() for c in cells] == ["active (CPU)", "39%", "3,737"]
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], "the page scrolls sideways"
        top = section.evaluate("h => h.getBoundingClientRect().top + window.scrollY")
        page.screenshot(
            path=tmp_path / f"run-why-{viewport['width']}.png",
            full_page=True,
            clip={"x": 0, "y": top - 8, "width": viewport["width"], "height": 1250},
        )
        assert problems == []


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1280", "360"])
def test_configuration_comparison_and_machine_say_what_was_sampled(why_site, browser, viewport):
    with serve(why_site) as base:
        page = browser.new_page(viewport=viewport)
        problems = watch_page(page, base)
        expected = {
            f"groups/{GROUP}/": "Evidence of waiting on commit flushes: during these runs, 42%",
            "comparisons/checkpoints/": "WAL sync waits 26% → 42% of samples",
            "hardware/kb-dev-epyc-2c/": "WAL flush 0.251 ms (pg_test_fsync, fdatasync) on "
            "/dev/vda1: 1 bench session, 2026-11-27",
        }
        for path, words in expected.items():
            page.goto(base + path)
            assert words in page.locator("article").first.inner_text(), path
            width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"{path} scrolls sideways"
        assert problems == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_axe_violation_on_the_pages_that_show_why(why_site, browser, scheme):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = []
    with serve(why_site) as base:
        context = browser.new_context(color_scheme=scheme, bypass_csp=True)
        page = context.new_page()
        for path in (f"runs/{RUN}/", f"groups/{GROUP}/", "comparisons/checkpoints/"):
            page.goto(base + path, wait_until="networkidle")
            for violation in axe.run(page).response["violations"]:
                if violation.get("impact") in {"serious", "critical"}:
                    found.append(f"{path}: {violation['id']} ({violation['impact']})")
        context.close()
    assert found == []
