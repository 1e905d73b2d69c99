"""axe-core (the axe-playwright-python package, pinned in requirements.lock, which bundles
axe.min.js) on every kind of page of the shipped site, in Debian's Chromium, in the light and
the dark colour scheme: no serious or critical violation (issue 21, item 7). Regression: one
guide failed the colour-contrast rule on 36 nodes (inline-styled code highlighting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbtest import serve, visit_all

pytestmark = [pytest.mark.site, pytest.mark.browser]

#: One page of each kind (the first of its folder when the kind has many).
KINDS = {
    "home": "",
    "answers": "answers/",
    "answer": "answers/wal-placement/",
    "run": "runs/*/",
    "runs list": "runs/",
    "group": "groups/*/",
    "comparison": "comparisons/wal-placement/",
    "comparisons": "comparisons/",
    "explorer": "results/",
    "hardware": "hardware/*/",
    "matrix": "matrix/kb-dev-epyc-2c/",
    "guide": "guides/adding-results/",
    "search": "search/",
    "sources": "sources/",
    "changes": "changes/",
    "downloads": "downloads/",
}
SERIOUS = {"serious", "critical"}


@pytest.fixture(scope="module")
def public(shipped_site: Path) -> Path:
    """The shipped site, built once for the session (read only)."""
    return shipped_site


def address(public: Path, pattern: str) -> str:
    if "*" not in pattern:
        assert (public / pattern / "index.html").is_file(), pattern
        return pattern
    found = sorted(public.glob(pattern + "index.html"))
    assert found, pattern
    return found[0].parent.relative_to(public).as_posix() + "/"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_or_critical_axe_violation_on_any_kind_of_page(public, browser, scheme):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = []
    kinds = {address(public, pattern): kind for kind, pattern in KINDS.items()}
    assert len(kinds) == len(KINDS)
    checked = []

    def serious_violations(page, path: str) -> None:
        checked.append(path)
        for violation in axe.run(page).response["violations"]:
            if violation.get("impact") in SERIOUS:
                nodes = len(violation.get("nodes") or [])
                found.append(f"{kinds[path]}: {violation['id']} ({violation['impact']}, {nodes})")

    with serve(public) as base:
        context = browser.new_context(color_scheme=scheme, bypass_csp=True)
        visit_all(context, base, list(kinds), serious_violations)
        context.close()
    assert sorted(checked) == sorted(kinds)  # axe ran on every kind of page
    assert found == []


def test_axe_finds_what_it_should(browser, tmp_path):
    """The check can fail: a page with text too faint to read and an image without a text
    alternative has serious violations."""
    from axe_playwright_python.sync_playwright import Axe

    (tmp_path / "index.html").write_text(
        '<!doctype html><html lang="en"><head><title>t</title>'
        '<link rel="stylesheet" href="faint.css"></head><body><main>'
        '<p class="faint">faint text</p><img src="x.png"></main></body></html>',
        encoding="utf-8",
    )
    (tmp_path / "faint.css").write_text(".faint { color: #eee; background: #fff; }")
    with serve(tmp_path) as base:
        page = browser.new_page()
        page.goto(base)
        ids = {
            v["id"] for v in Axe().run(page).response["violations"] if v.get("impact") in SERIOUS
        }
    assert {"color-contrast", "image-alt"} <= ids
