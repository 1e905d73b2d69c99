"""End to end, as a person uses it: measure with the real embedded PostgreSQL and pgbench
(the smoke profile under another name), build the site with the real Hugo and Pagefind, and
find the new run on the home page in real headless Chromium."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from kbtest import REPO, build_site, serve
from pgbench_kb.derive.site import format_figure

pytestmark = [pytest.mark.postgres, pytest.mark.site, pytest.mark.browser]


def test_bench_then_site_shows_the_run_just_measured(project_root, browser):
    # The smoke profile under another name: a smoke run is not a result, and the home page
    # lists none (issue 35); this test is about a result reaching the home page.
    tiny = project_root / "tiny.yaml"
    shutil.copy2(REPO / "scripts" / "profiles" / "smoke.yaml", tiny)
    bench = subprocess.run(
        [
            str(REPO / "scripts" / "bench.sh"),
            "--profile",
            str(tiny),
            "--root",
            str(project_root),
            "--machine",
            "skeleton-test",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert bench.returncode == 0, bench.stderr
    run_files = sorted((project_root / "data" / "runs").rglob("*.yaml"))
    assert len(run_files) == 1
    run = yaml.safe_load(run_files[0].read_text(encoding="utf-8"))
    assert run["origin"] == "measured"
    assert run["results"]["tps"] > 0
    assert run["benchmark"]["clients"] == 2
    assert run["postgres"]["version"].startswith("18")
    assert (project_root / "content" / "hardware" / "skeleton-test.md").is_file()
    # what the trial recorded besides pgbench's figures (issue #36): the storage fingerprint,
    # the OS each second and what the backends waited on
    assert run["storage"]["flush"]["wal"]["write_flush_8k_ms"] > 0
    series = run["results"]["os_series"][0]
    assert series["host"] == "server" and len(series["t_s"]) >= 1
    waits = run["results"]["wait_events"]
    assert waits["hz"] >= 10
    assert sum(e["count"] for e in waits["events"]) == waits["backend_samples"]

    public = build_site(project_root)
    with serve(public) as base:
        page = browser.new_page()
        page.goto(base)
        row = page.locator(f'tr[data-run-id="{run["id"]}"]')
        assert row.count() == 1
        assert format_figure(run["results"]["tps"]) in row.inner_text()
        # the run page shows that evidence at a phone's width and a desktop's, without
        # sideways scrolling; the machine page gives the measured flush
        for width in (360, 1280):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{base}/runs/{run['id'].lower()}/")
            why = page.locator("section", has_text="What the machine and the server were doing")
            assert why.count() == 1
            text = why.inner_text()
            assert "WAL flush" in text and "What the backends waited on" in text
            assert why.locator("table.waits tbody tr").count() >= 1
            assert why.locator("svg").count() >= 1
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{width} px: {overflow} px of sideways scrolling"
        page.goto(f"{base}/hardware/skeleton-test/")
        assert "Measured flush latency" in page.locator("main").inner_text()
