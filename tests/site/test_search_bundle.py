"""`kb index`: one Pagefind bundle for the whole site (pagefind/), cached and indexed again only
when a page changed, and our search page over it: the real Pagefind, the real Hugo
(scripts/site.sh on the day-one data) and Debian's Chromium driven by Playwright.

Planted pages on two machines: the highest tps is on plant-a, the second highest on plant-b,
the lowest on plant-a again (they were once in two bundles, merged by the page). Issue #21:
the search page loaded one bundle per machine, 113 requests and about 1 MB before it
answered; it must answer within 25 requests and 600 KB."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kbtest import copy_built, run_kb, serve, serve_under, watch_page

pytestmark = pytest.mark.site

WORD = "zyzzyva"
#: (folder, machine, tps): plant-a holds the best and the worst, plant-b the second best.
PLANTED = (
    ("plant-a-best", "plant-a", 987654.4),
    ("plant-b-second", "plant-b", 987654.3),
    ("plant-a-worst", "plant-a", 12.5),
)


#: Two pages whose tps reads the same on the page ("55,554 tps"), the higher one on plant-b
#: (the second slice): only the exact figure orders them.
TIE_WORD = "quoxxle"
TIED = (("tie-a-next", "plant-a", 55554.4), ("tie-b-top", "plant-b", 55554.45))


def planted_page(
    name: str, machine: str, tps: float, words: str = "", shown: str | None = None, word=WORD
) -> str:
    """A page shaped like a configuration page: filters in a hidden block, tps sort, the tps
    as shown and the exact one (what the merge of slices orders by)."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{name}</title>'
        f"</head><body><main data-pagefind-body><h1>{name}</h1>"
        f"<p>A {word} page planted on {machine}. {words}</p>"
        '<div hidden data-pagefind-ignore><span data-pagefind-filter="machine">'
        f'{machine}</span><span data-pagefind-filter="workload">planted-work</span></div>'
        f'<article data-pagefind-sort="tps:{tps:.6f}" data-pagefind-meta="tps:{shown or tps} tps">'
        f'<span hidden data-pagefind-meta="tps_sort:{tps:.6f}"></span>'
        "</article></main></body></html>\n"
    )


def plant(public: Path, pages=PLANTED) -> None:
    for folder, machine, tps in pages:
        page = public / "groups" / folder / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(planted_page(folder, machine, tps), encoding="utf-8")


def plant_tied(public: Path) -> None:
    for folder, machine, tps in TIED:
        page = public / "groups" / folder / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        text = planted_page(folder, machine, tps, shown=f"{round(tps):,}", word=TIE_WORD)
        page.write_text(text, encoding="utf-8")


def index(site: Path, cache: Path | None = None) -> dict[str, list[str]]:
    """Run `kb index`; return what it says it indexed, reused and removed (``site``: the one
    bundle)."""
    done = run_kb("index", str(site), *(["--cache", str(cache)] if cache else []))
    assert done.returncode == 0, done.stderr
    said = {"indexed": [], "reused": [], "removed": []}
    for line in done.stdout.splitlines()[1:]:
        label, _, names = line.strip().partition(": ")
        said[label] = names.split()
    return said


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


# --- kb index on planted pages alone (real Pagefind, no browser) -----------------------------


@pytest.fixture
def small(tmp_path) -> Path:
    site = tmp_path / "public"
    plant(site)
    guide = site / "guides" / "one" / "index.html"
    guide.parent.mkdir(parents=True)
    guide.write_text(
        f'<html lang="en"><body><main data-pagefind-body><h1>Guide</h1><p>{WORD} guide</p>'
        "</main></body></html>",
        encoding="utf-8",
    )
    return site


def test_one_bundle_for_every_page(small):
    said = index(small)
    assert said["indexed"] == ["site"]
    entry = json.loads((small / "pagefind" / "pagefind-entry.json").read_text())
    assert entry["languages"]["en"]["page_count"] == 4  # three planted pages and the guide
    assert not (small / "pagefind" / "slices.json").exists()
    # The cache of a build without --cache is a temporary folder, removed.
    assert sorted(p.name for p in small.parent.iterdir()) == ["public"]


def test_a_changed_page_reindexes_and_gives_a_cold_builds_files(small, tmp_path):
    cache = tmp_path / "cache"
    assert index(small, cache)["reused"] == []
    assert index(small, cache) == {"indexed": [], "reused": ["site"], "removed": []}
    page = small / "groups" / "plant-b-second" / "index.html"
    page.write_text(planted_page("plant-b-second", "plant-b", 5.0), encoding="utf-8")
    assert index(small, cache)["indexed"] == ["site"]
    # Only the bytes count, not the time: a page rewritten the same is not indexed again.
    page.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    assert index(small, cache)["indexed"] == []
    with_cache = tree(small / "pagefind")
    cold = tmp_path / "cold" / "public"
    shutil.copytree(small, cold, ignore=shutil.ignore_patterns("pagefind"))
    index(cold)
    assert tree(cold / "pagefind") == with_cache


def test_two_builds_of_the_same_pages_give_identical_files(small, tmp_path):
    other = tmp_path / "again" / "public"
    shutil.copytree(small, other)
    index(small)
    index(other, tmp_path / "cache")
    assert tree(small / "pagefind") == tree(other / "pagefind")


def test_a_removed_page_leaves_the_index(small, tmp_path):
    cache = tmp_path / "cache"
    index(small, cache)
    shutil.rmtree(small / "groups" / "plant-b-second")
    said = index(small, cache)
    assert said["indexed"] == ["site"]
    entry = json.loads((small / "pagefind" / "pagefind-entry.json").read_text())
    assert entry["languages"]["en"]["page_count"] == 3
    assert sorted(p.name for p in cache.iterdir()) == ["site"]


@pytest.mark.parametrize("damage", ["truncated file", "missing stamp", "extra file", "bad stamp"])
def test_a_damaged_cache_entry_is_indexed_again_never_trusted(small, tmp_path, damage):
    cache = tmp_path / "cache"
    index(small, cache)
    cold = tree(small / "pagefind")
    entry = cache / "site"
    if damage == "truncated file":
        victim = next((entry / "bundle" / "fragment").iterdir())
        victim.write_bytes(victim.read_bytes()[:10])
    elif damage == "missing stamp":
        (entry / "stamp.json").unlink()
    elif damage == "extra file":
        (entry / "bundle" / "stray.js").write_text("x", encoding="utf-8")
    else:
        (entry / "stamp.json").write_text("{not json", encoding="utf-8")
    said = index(small, cache)
    assert said["indexed"] == ["site"]
    assert tree(small / "pagefind") == cold


def test_kb_index_help_has_an_example():
    done = run_kb("index", "--help")
    assert done.returncode == 0
    assert "--cache" in done.stdout
    assert re.search(r"example:\n  .*kb index \S+ --cache ", done.stdout), done.stdout


# --- a Hugo site with planted pages, in Chromium -------------------------------------------


@pytest.fixture(scope="module")
def planted_site(tmp_path_factory, shipped_site: Path) -> Path:
    """The day-one site (a copy of the session's build), then planted pages indexed with its
    cache."""
    root = copy_built(shipped_site, tmp_path_factory.mktemp("bundle") / "kb")
    public = root / "public"
    plant(public)
    plant_tied(public)
    assert index(public, root / "build" / "cache" / "search")["indexed"] == ["site"]
    return public


def search(page, base: str, query: str) -> str:
    page.goto(f"{base}search/?{query}")
    page.wait_for_function(
        "() => +(document.getElementById('search').dataset.done || 0) > 0", timeout=20_000
    )
    return page.locator("#search-status").inner_text()


def titles(page) -> list[str]:
    return page.locator("#search-results a.search-title").all_inner_texts()


@pytest.mark.browser
@pytest.mark.parametrize("prefix", ["", "kb"], ids=["root", "sub-path"])
def test_results_of_two_machines_are_listed_in_tps_order(planted_site, browser, prefix):
    with serve_under(planted_site, prefix) if prefix else serve(planted_site) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        status = search(page, base, f"q={WORD}&sort=desc")
        assert status.startswith("3 pages"), status
        assert titles(page) == ["plant-a-best", "plant-b-second", "plant-a-worst"]
        search(page, base, f"q={WORD}&sort=asc")
        assert titles(page) == ["plant-a-worst", "plant-b-second", "plant-a-best"]
        # By relevance too, every machine's results are listed.
        search(page, base, f"q={WORD}")
        assert sorted(titles(page)) == ["plant-a-best", "plant-a-worst", "plant-b-second"]
        href = page.locator("#search-results a").first.get_attribute("href")
        assert href.startswith(f"/{prefix}/groups/" if prefix else "/groups/")
        assert problems == []


@pytest.mark.browser
def test_a_tps_that_reads_the_same_is_ordered_by_its_exact_figure(planted_site, browser):
    """Regression: the merge of bundles compared the tps as shown (4 significant digits), so
    two pages showing "55,554 tps" came out in bundle order, not by tps."""
    with serve(planted_site) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        search(page, base, f"q={TIE_WORD}&sort=desc")
        assert titles(page) == ["tie-b-top", "tie-a-next"]
        search(page, base, f"q={TIE_WORD}&sort=asc")
        assert titles(page) == ["tie-a-next", "tie-b-top"]
        assert problems == []


@pytest.mark.browser
def test_filter_counts_cover_every_machine(planted_site, browser):
    with serve(planted_site) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        search(page, base, f"q={WORD}")
        count = page.locator('input[data-filter="workload"][value="planted-work"] ~ .count')
        assert count.text_content() == "(3)"  # 2 pages on plant-a, 1 on plant-b
        # A value one machine has.
        status = search(page, base, f"q={WORD}&f=machine:plant-b")
        assert status.startswith("1 page"), status
        assert titles(page) == ["plant-b-second"]
        # Ticked values of one filter are alternatives.
        status = search(page, base, f"q={WORD}&sort=desc&f=machine:plant-a&f=machine:plant-b")
        assert titles(page) == ["plant-a-best", "plant-b-second", "plant-a-worst"], status
        assert problems == []


@pytest.mark.browser
def test_paging_continues_the_tps_order(planted_site, browser):
    """Every page with a tps, 20 at a time: the second batch continues the order."""
    with serve(planted_site) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        status = search(page, base, "sort=desc")
        total = int(status.split(" ")[0])
        assert total > 40
        for _ in range(2):
            shown = len(titles(page))
            page.locator("#search-more").click()
            page.wait_for_function(
                f"() => document.querySelectorAll('#search-results li').length > {shown}"
            )
        figures = [
            float(t.removesuffix(" tps").replace(",", ""))
            for t in page.locator("#search-results li .tps").all_inner_texts()
        ]
        assert len(figures) == min(total, 60)
        assert figures == sorted(figures, reverse=True)
        assert figures[:2] == [987654.4, 987654.3]
        assert problems == []


def test_the_site_has_one_bundle(planted_site):
    top = sorted(p.name for p in (planted_site / "pagefind").iterdir())
    assert "pagefind.js" in top and "wasm.en.pagefind" in top
    assert not [p for p in (planted_site / "pagefind").iterdir() if p.is_dir()
                and (p / "pagefind.js").exists()]  # fmt: skip


#: Issue #21: what the search page may load before its first result shows.
FIRST_RESULT_REQUESTS = 25
FIRST_RESULT_BYTES = 600 * 1024


def first_result_load(browser, url: str) -> tuple[int, int, list[str]]:
    """Requests (the page's and its workers') and bytes until the first result is put into
    the list, in a new browser context (an empty cache); and the results' titles."""
    context = browser.new_context()
    page = context.new_page()
    seen, sizes, first = [], {}, {}

    def finished(request) -> None:
        done = request.sizes()
        sizes[request] = done["responseBodySize"] + done["responseHeadersSize"]

    page.on("request", lambda request: seen.append(request))
    page.on("requestfinished", finished)
    page.expose_function("kbFirstResult", lambda: first.setdefault("n", len(seen)))
    page.add_init_script(
        """new MutationObserver(function (changes, observer) {
             var list = document.getElementById("search-results");
             if (list && list.querySelector("li")) { observer.disconnect(); kbFirstResult(); }
           }).observe(document, { subtree: true, childList: true });"""
    )
    page.goto(url)
    page.wait_for_function(
        "() => +(document.getElementById('search').dataset.done || 0) > 0", timeout=20_000
    )
    page.wait_for_load_state("networkidle")
    before = seen[: first["n"]]
    result = (len(before), sum(sizes.get(r, 0) for r in before), titles(page))
    context.close()
    return result


@pytest.mark.browser
@pytest.mark.parametrize("query", ["8.4", "raid", "commit_delay"])
def test_search_answers_within_25_requests_and_600_kb(planted_site, browser, query):
    with serve(planted_site) as base:
        requests, size, found = first_result_load(browser, f"{base}search/?q={query}")
    assert found, query
    assert requests <= FIRST_RESULT_REQUESTS, (query, requests)
    assert size <= FIRST_RESULT_BYTES, (query, size)


@pytest.mark.browser
def test_a_version_lists_that_postgresql_version_first(planted_site, browser):
    """Issue #21: "8.4" listed a RAID5 configuration of PostgreSQL 8.0 first."""
    with serve(planted_site) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        for query, version in (("8.4", "8.4"), ("PG 8.0", "8.0"), ("8.2.14", "8.2")):
            search(page, base, f"q={query}")
            hrefs = page.locator("#search-results a.search-title").evaluate_all(
                "links => links.map(a => a.href)"
            )
            assert len(hrefs) >= 3, query
            # The first results are pages of that version (their search filter says so).
            for href in hrefs[:3]:
                html = page.request.get(href).text()
                assert f'data-pagefind-filter="postgresql">PostgreSQL {version}<' in html, (
                    query,
                    href,
                )
        assert problems == []
