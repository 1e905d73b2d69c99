"""Real headless Chromium on a built site with the day-one data plus a run whose free-text
fields carry script payloads, served at a server's root and under a sub-path (/kb/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbtest import serve, serve_under, visit_all, watch_page

pytestmark = [pytest.mark.site, pytest.mark.browser]

NARROW = {"width": 360, "height": 740}
#: A run page may transfer at most this much before search is touched (issue 10).
RUN_PAGE_BUDGET_BYTES = 150 * 1024


@pytest.fixture(scope="module")
def public(payload_site: Path) -> Path:
    """The shipped site with the payload run, built once for the session (read only)."""
    return payload_site


def pages_of(public: Path) -> list[str]:
    """Every HTML page's path below the site's base (``runs/x/``), redirects left out."""
    paths = sorted(
        p.parent.relative_to(public).as_posix() + "/"
        for p in public.rglob("index.html")
        # Hugo's alias pages (runs/page/1/) only redirect: the next page is visited anyway.
        if 'http-equiv="refresh"' not in p.read_text(encoding="utf-8")[:600]
    )
    return [p.removeprefix("./") if p != "./" else "" for p in paths]


#: Run and group pages share one layout each: a handful of them, and every page of the run with
#: the payloads, show what all of them would (visiting all 500+ pages twice took six minutes).
SAMPLED_SECTIONS = ("runs/", "groups/")
SAMPLE_PER_SECTION = 12


def sampled_pages(public: Path) -> list[str]:
    """Every page outside the run and group sections; in them, the payload run's pages and
    the first few of the others."""
    chosen, taken = [], dict.fromkeys(SAMPLED_SECTIONS, 0)
    for path in pages_of(public):
        section = next((s for s in SAMPLED_SECTIONS if path.startswith(s) and path != s), None)
        if section is None or "test-server" in path:
            chosen.append(path)
        elif taken[section] < SAMPLE_PER_SECTION:
            taken[section] += 1
            chosen.append(path)
    return chosen


def one_page_of_each_kind(public: Path) -> list[str]:
    """The first page of each kind (the same path with its last part left out: every
    ``answers/*/``, every ``comparisons/*/runs/``…) and every page of the payload run."""
    chosen, kinds = [], set()
    for path in sampled_pages(public):
        kind = tuple(part if i < 1 else "*" for i, part in enumerate(path.split("/")[:-1]))
        kind = (*kind, len(path.split("/")))
        if kind not in kinds or "test-server" in path:
            kinds.add(kind)
            chosen.append(path)
    return chosen


@pytest.mark.parametrize("prefix", ["", "kb"], ids=["root", "sub-path"])
def test_every_page_loads_clean(public, browser, prefix):
    """No console error, no 404 (favicon included), no outside request, no payload run, on
    every kind of page (every page but a sample of runs and groups) at the root, and on one
    page of each kind under /kb/ (what a sub-path changes is the layouts' links, the same for
    every page of a kind)."""

    def not_pwned(page, path: str) -> None:
        assert page.evaluate("typeof window.__kb_pwned") == "undefined", path

    server = serve_under(public, prefix) if prefix else serve(public)
    with server as base:
        paths = (one_page_of_each_kind if prefix else sampled_pages)(public)
        assert visit_all(browser, base, paths, not_pwned) == []


@pytest.mark.parametrize("prefix", ["", "kb"], ids=["root", "sub-path"])
def test_search_finds_filters_and_opens_results(public, browser, prefix):
    """Regression: search hung when public/ was served under a sub-path (/kb/): Pagefind's
    bundle was looked for at /pagefind/. Regression: started with ?q=, Pagefind's UI sometimes
    drew only some of the nine filters."""
    server = serve_under(public, prefix) if prefix else serve(public)
    with server as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        page.goto(base + "search/?q=tpcb")
        results = page.locator("#search-results a")
        results.first.wait_for(timeout=15_000)
        before = page.locator("#search-status").inner_text()
        # Filters by keyboard: open the "Origin" block, tick "transcribed" with the space bar.
        origin = page.locator("details.search-filter", has_text="Origin")
        summaries = page.locator(".search-filter summary")
        page.wait_for_function("() => document.querySelectorAll('summary').length >= 9")
        assert {s.lower() for s in summaries.all_text_contents()} >= {
            "postgresql", "raid level", "wal placement", "write cache", "os", "filesystem",
            "workload", "origin", "machine",
        }  # fmt: skip
        origin.locator("summary").focus()
        page.keyboard.press("Enter")
        box = origin.locator("input[type=checkbox]").last
        box.focus()
        page.keyboard.press("Space")
        page.wait_for_function(
            "m => document.querySelector('#search-status').innerText !== m", arg=before
        )
        href = results.first.get_attribute("href")
        assert href.startswith(f"/{prefix}/" if prefix else "/") and "/runs/" in href
        results.first.click()
        page.wait_for_load_state("networkidle")
        assert page.locator("dl.run-figures").count() == 1
        assert problems == []


def test_home_search_box_hands_the_query_to_search(public, browser):
    with serve_under(public, "kb") as base:
        page = browser.new_page()
        page.goto(base)
        page.fill("#home-q", "commit_delay")
        page.keyboard.press("Enter")
        page.locator("#search-results a").first.wait_for(timeout=15_000)
        assert page.url.startswith(base + "search/")


def test_explorer_sorts_and_filters_by_keyboard(public, browser):
    with serve(public) as base:
        page = browser.new_page()
        page.goto(base + "results/")
        rows = page.locator("#explorer tbody tr")
        total = rows.count()
        assert total >= 20
        page.locator("#explorer-q").focus()
        page.keyboard.type("RAID5")
        visible = page.locator("#explorer tbody tr:not([hidden])")
        assert 0 < visible.count() < total
        assert all("RAID5" in text for text in visible.all_inner_texts())
        page.locator("button.sort", has_text="tps").focus()
        page.keyboard.press("Enter")
        values = [
            float(v)
            for v in page.locator("#explorer tbody tr td.tps").evaluate_all(
                "cells => cells.map(c => c.dataset.value).filter(v => v)"
            )
        ]
        assert values == sorted(values)
        header = page.locator("#explorer th[aria-sort]")
        assert header.get_attribute("aria-sort") == "ascending"


def test_explorer_is_readable_without_javascript(public, browser):
    with serve(public) as base:
        context = browser.new_context(java_script_enabled=False)
        page = context.new_page()
        page.goto(base + "results/")
        headers = page.locator("#explorer thead th").all_inner_texts()
        assert headers[:3] == ["Configuration", "tps", "Latency avg (ms)"]
        assert page.locator("#explorer tbody tr").count() >= 20
        context.close()


def test_no_page_scrolls_sideways_at_360_px(public, browser):
    """Regression: the tps column was cut off on the home and Results tables at every
    width; tables now scroll inside their own box and the page never does."""
    with serve(public) as base:
        page = browser.new_page(viewport=NARROW)
        for path in sampled_pages(public):
            page.goto(base + path)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= NARROW["width"], f"{path}: {width} px wide"
        page.goto(base)
        cell = page.locator("table.runs th", has_text="tps").first
        cell.scroll_into_view_if_needed()
        assert cell.is_visible()


def test_payloads_show_as_text(public, browser):
    with serve(public) as base:
        page = browser.new_page()
        page.goto(base + "sources/")
        text = page.locator("main").inner_text()
        assert "<script>window.__kb_pwned = 1</script>" in text
        assert 'a<b & c="d"' in text
        assert page.evaluate("typeof window.__kb_pwned") == "undefined"


def test_a_run_page_transfers_under_the_budget(public, browser):
    with serve(public) as base:
        page = browser.new_page()
        sizes: list[int] = []
        page.on("requestfinished", lambda r: sizes.append(r.sizes()["responseBodySize"]))
        largest = max(
            (p for p in pages_of(public) if p.startswith("runs/") and p != "runs/"),
            key=lambda p: (public / p / "index.html").stat().st_size,
        )
        page.goto(base + largest, wait_until="networkidle")
        assert 0 < sum(sizes) <= RUN_PAGE_BUDGET_BYTES
