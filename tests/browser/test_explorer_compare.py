"""The results explorer's facets and "compare any two" (issue #21, items 3 and 4), in Debian's
Chromium on the day-one site built by scripts/site.sh, at the root and under a sub-path.

Regression (issue #21): the explorer had one word filter and no facets; "raid10" and
"battery" found nothing; versions sorted as text (10.1 before 8.0); the latency column was
cut off at 1280 px."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kbtest import serve, serve_under, watch_page

pytestmark = [pytest.mark.site, pytest.mark.browser]

NARROW = {"width": 360, "height": 740}
WIDE = {"width": 1280, "height": 900}
#: Two configurations with a verdict ("higher"), from the day-one data. The pair of one machine
#: measured apart (not comparable) is looked up in the built site: see ``apart``.
HIGHER = (
    "2010-e4600-2x160gb-sata-tpcb-like-s20-c20-612c76d7",
    "2010-e4600-2x160gb-sata-tpcb-like-s20-c20-d6b49582",
)


@pytest.fixture(scope="module")
def public(shipped_site: Path) -> Path:
    """The shipped site, built once for the session (read only)."""
    return shipped_site


@pytest.fixture(scope="module")
def apart(public) -> tuple[str, str]:
    """Two configurations of one machine whose comparison is "not comparable" (measured apart),
    as the site's own compare data has them; which pair it is follows the runs in data/."""
    for path in sorted((public / "compare" / "data").glob("*/*.json")):
        for pair, item in (
            json.loads(path.read_text(encoding="utf-8")).get("comparisons", {}).items()
        ):
            if "different bench sessions" in item["words"]:
                a, b = pair.split(" ")
                return a, b
    raise AssertionError("no comparison measured apart in the day-one data")


def visible_rows(page) -> list[str]:
    return page.locator("#explorer tbody tr:not([hidden])").all_inner_texts()


def version_parts(text: str) -> tuple[int, ...]:
    """``8.4.2`` → (8, 4, 2); ``17devel`` → (17,)."""
    return tuple(int(p) for p in re.findall(r"\d+", text.split("devel")[0]))


def test_facets_by_keyboard_with_versions_in_version_order(public, browser):
    with serve(public) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        page.goto(base + "results/")
        facets = page.locator(".explorer-facet summary").all_inner_texts()
        assert facets == [
            "PostgreSQL", "RAID level", "WAL placement", "Write cache", "Machine", "Workload",
            "Origin", "Source", "Author",
        ]  # fmt: skip
        # By its heading: a source's title may name PostgreSQL too.
        block = page.locator(".explorer-facet").filter(
            has=page.locator("summary", has_text=re.compile(r"^PostgreSQL$"))
        )
        block.locator("summary").focus()
        page.keyboard.press("Enter")
        values = [v for v in block.locator("label > span:not(.count)").all_inner_texts()]
        versions = [v.strip() for v in values if v.strip()[0].isdigit()]
        assert versions == sorted(versions, key=version_parts)
        assert versions.index("8.4") < versions.index("10")
        box = block.locator("input[value='8.4']")
        box.focus()
        page.keyboard.press("Space")
        rows = visible_rows(page)
        assert rows and all("8.4." in row for row in rows)
        count = block.locator("label", has=page.locator("input[value='8.4']")).locator(".count")
        assert count.inner_text() == f"({len(rows)})"
        # Another facet narrows further; ticked values of one facet are alternatives.
        page.locator("input[value='8.2']").check()
        assert len(visible_rows(page)) > len(rows)
        assert page.locator("#explorer-count").inner_text().endswith("shown")
        page.locator("#explorer-clear").click()
        assert len(visible_rows(page)) == page.locator("#explorer tbody tr").count()
        assert problems == []


@pytest.mark.parametrize(
    ("words", "expect"),
    [("raid10", "RAID1+0"), ("RAID 1+0", "RAID1+0"), ("battery", "BBU"), ("bbu", "BBU")],
)
def test_the_names_people_type_find_their_rows(public, browser, words, expect):
    with serve(public) as base:
        page = browser.new_page()
        page.goto(base + "results/")
        page.locator("#explorer-q").fill(words)
        rows = visible_rows(page)
        assert rows, words
        assert all(expect in row for row in rows), (words, rows[:3])


def test_the_version_column_sorts_as_versions(public, browser):
    with serve(public) as base:
        page = browser.new_page()
        page.goto(base + "results/")
        page.locator("button.sort", has_text="PostgreSQL").click()
        shown = [
            v for v in page.locator("#explorer tbody tr td:nth-child(5)").all_inner_texts()
            if v[:1].isdigit()
        ]  # fmt: skip
        assert shown == sorted(shown, key=version_parts)
        assert shown.index("8.4.2") < shown.index(next(v for v in shown if v.startswith("1")))


def test_tps_at_360_px_and_the_columns_a_tuner_sorts_by_at_1280_px(public, browser):
    with serve(public) as base:
        page = browser.new_page(viewport=NARROW)
        page.goto(base + "results/")
        cell = page.locator("#explorer tbody tr td.tps").first.bounding_box()
        assert cell["x"] + cell["width"] <= NARROW["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        page = browser.new_page(viewport=WIDE)
        page.goto(base + "results/")
        box = page.locator(".table-scroll[aria-label='Results explorer']").bounding_box()
        for name in ("tps", "Latency avg (ms)", "Clients", "PostgreSQL", "Storage", "Machine",
                     "Workload"):  # fmt: skip
            header = page.locator("#explorer th", has_text=name).first.bounding_box()
            assert header["x"] + header["width"] <= box["x"] + box["width"], name


def test_without_javascript_a_plain_table(public, browser):
    with serve(public) as base:
        context = browser.new_context(java_script_enabled=False)
        page = context.new_page()
        page.goto(base + "results/")
        assert not page.locator("#explorer-filters").is_visible()
        assert page.locator("#explorer tbody tr").count() >= 70
        assert page.locator("#explorer thead th").all_inner_texts()[:2] == ["Configuration", "tps"]
        context.close()


def tick(page, key: str) -> None:
    """Tick a configuration's compare box by keyboard."""
    page.locator(f"tr[data-key='{key}'] input.pick").focus()
    page.keyboard.press("Space")


@pytest.mark.parametrize("prefix", ["", "kb"], ids=["root", "sub-path"])
def test_compare_two_from_the_explorer_by_keyboard(public, browser, prefix):
    with serve_under(public, prefix) if prefix else serve(public) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        page.goto(base + "results/")
        link = page.locator("#explorer-compare")
        assert link.get_attribute("aria-disabled") == "true"
        tick(page, HIGHER[0])
        tick(page, HIGHER[1])
        assert link.get_attribute("aria-disabled") is None
        link.focus()
        page.keyboard.press("Enter")
        page.wait_for_url(f"{base}compare/?a={HIGHER[0]}&b={HIGHER[1]}")
        page.locator("#compare-result:not([hidden])").wait_for()
        verdict = page.locator("#compare-verdict").inner_text()
        assert verdict.startswith("B against A: higher"), verdict
        assert (
            page.locator("#compare-verdict a")
            .get_attribute("href")
            .startswith(f"{base}comparisons/")
        )
        differs = page.locator("#compare-facts tr.differs th").all_inner_texts()
        assert differs and all(d.endswith("differs") for d in differs)
        same = page.locator("#compare-facts tr.same").count()
        assert same > 10
        # Every fact that differs is marked: A's and B's cells differ on each marked row, and
        # on no other.
        for row in page.locator("#compare-facts tbody tr").all():
            a, b = row.locator("td").all_inner_texts()
            assert (a != b) == ("differs" in (row.get_attribute("class") or "")), (a, b)
        # The configuration's own page, under the same base.
        href = page.locator("#compare-figures a").first.get_attribute("href")
        assert href == f"{base}groups/{HIGHER[0]}/"
        # Swap by keyboard.
        page.locator("#compare-swap").focus()
        page.keyboard.press("Enter")
        page.wait_for_url(f"{base}compare/?a={HIGHER[1]}&b={HIGHER[0]}")
        page.wait_for_function(
            "() => document.getElementById('compare-verdict').textContent.includes('other way')"
        )
        assert problems == []


def test_compare_says_in_words_why_there_is_no_verdict(public, browser, apart):
    with serve(public) as base:
        page = browser.new_page()
        problems = watch_page(page, base)
        page.goto(f"{base}compare/?a={apart[0]}&b={apart[1]}")
        page.locator("#compare-result:not([hidden])").wait_for()
        words = page.locator("#compare-verdict").inner_text().lower()
        assert "no verdict" in words and "different bench sessions" in words, words
        assert "not_comparable" not in words
        # Two machines.
        page.goto(f"{base}compare/?a={HIGHER[0]}&b={apart[0]}")
        page.wait_for_function(
            "() => document.getElementById('compare-verdict').textContent.length > 0"
        )
        words = page.locator("#compare-verdict").inner_text()
        assert words.startswith("No verdict: the two were measured on different machines")
        machine = page.locator("#compare-facts tr.differs", has_text="Machine")
        assert machine.count() == 1
        # A key that is not on the site: said, no table.
        page.goto(f"{base}compare/?a={HIGHER[0]}&b=no-such-configuration")
        page.wait_for_function(
            "() => document.getElementById('compare-status').textContent.includes('No config')"
        )
        assert page.locator("#compare-result").is_hidden()
        assert problems == []


def test_a_configuration_page_opens_compare_with_it_chosen(public, browser):
    with serve_under(public, "kb") as base:
        page = browser.new_page()
        page.goto(f"{base}groups/{HIGHER[0]}/")
        page.locator("a", has_text="Compare this configuration with any other").click()
        # The click navigates: the predicate may first run on the configuration page.
        page.wait_for_function(
            "() => (document.getElementById('compare-status') || {textContent: ''})"
            ".textContent.includes('choose B')"
        )
        assert page.locator("#compare-a").input_value() == HIGHER[0]
        assert page.evaluate("document.activeElement.id") == "compare-b"
        page.keyboard.press("ArrowDown")
        page.locator("#compare-b").press("Enter")
        page.locator("#compare-form button[type=submit]").focus()
        page.keyboard.press("Enter")
        page.locator("#compare-result:not([hidden])").wait_for()


def test_compare_without_javascript_points_to_the_comparisons(public, browser):
    with serve(public) as base:
        context = browser.new_context(java_script_enabled=False)
        page = context.new_page()
        page.goto(base + "compare/")
        assert not page.locator("#compare").is_visible()
        assert page.locator("main a", has_text="comparisons").is_visible()
        context.close()
