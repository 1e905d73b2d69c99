"""Real headless Chromium on the built site, served from 127.0.0.1."""

from __future__ import annotations

import pytest

from kbtest import build_site, import_reference_run, serve

pytestmark = [pytest.mark.site, pytest.mark.browser]


def test_home_page_shows_the_run_and_makes_no_outside_request(project_root, browser):
    run_file = import_reference_run(project_root)
    public = build_site(project_root)
    with serve(public) as base:
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(base)
        row = page.locator(f'tr[data-run-id="{run_file.stem}"]')
        assert row.count() == 1
        assert "124.9" in row.inner_text()
        row.locator("a").click()
        page.wait_for_load_state()
        assert "Throughput" in page.locator("dl.run-figures").inner_text()
        outside = [url for url in requests if not url.startswith(base)]
        assert outside == []


def test_search_finds_the_hardware_note_offline(project_root, browser):
    import_reference_run(project_root)
    public = build_site(project_root)
    with serve(public) as base:
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(base + "search/")
        page.fill("#search-q", "test machine")
        # Results arrive as their fragments load: wait for the note itself, not the first hit.
        page.locator("#search-results a", has_text="Test server").first.wait_for(timeout=10_000)
        assert [url for url in requests if not url.startswith(base)] == []
