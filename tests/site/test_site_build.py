"""The real Hugo + Pagefind build of a project holding one imported run."""

from __future__ import annotations

import re
import subprocess

import pytest

from kbtest import REPO, build_site, import_reference_run

pytestmark = pytest.mark.site


def test_home_page_lists_the_imported_run(project_root):
    run_file = import_reference_run(project_root)
    public = build_site(project_root)
    home = (public / "index.html").read_text(encoding="utf-8")
    run_id = run_file.stem
    assert f'data-run-id="{run_id}"' in home
    assert "124.9" in home  # tps 124.885813 (excluding connections), one decimal
    assert (public / "runs" / run_id.lower() / "index.html").is_file()
    assert (public / "pagefind" / "pagefind.js").is_file()
    assert (public / "pagefind" / "pagefind-ui.js").is_file()


def test_pages_reference_nothing_outside_the_site(project_root):
    import_reference_run(project_root)
    public = build_site(project_root)
    pages = list(public.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        # What the browser loads by itself: src= of any element and href= of <link>.
        # (<a href> to a source's public page is a link a reader may follow, not a request.)
        loaded = re.findall(r'\ssrc="([^"]+)"', text) + re.findall(
            r'<link[^>]*\shref="([^"]+)"', text
        )
        for url in loaded:
            assert not re.match(r"(?i)^(https?:)?//", url), f"{page}: outside reference {url}"


def test_a_run_file_with_errors_stops_the_build(project_root):
    run_file = import_reference_run(project_root)
    run_file.write_text(run_file.read_text().replace("origin: measured", "origin: guessed"))
    done = subprocess.run(
        [str(REPO / "scripts" / "site.sh"), "--root", str(project_root)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "origin" in done.stderr
    assert not (project_root / "public").exists()
