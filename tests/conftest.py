"""Fixtures shared by every test folder (helpers are in kbtest.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kbtest import (
    CHROMIUM_ARGS,
    CHROMIUM_CANDIDATES,
    REPO,
    SHIPPED_KNOWLEDGE,
    SITE_SOURCES,
    build_day_one_site_with_payload,
    build_site,
    copy_day_one,
    shipped_root,
    shipped_source,
    tree_digest,
)


def pytest_report_header() -> list[str]:
    return [f"shipped knowledge: {shipped_source()}"]


#: Session fixtures built once (a whole site build each): under pytest-xdist (``make test``
#: runs two workers, ``--dist loadgroup``) the tests that use one of them run in one worker, so
#: each site is built once per session; the two sites' groups go to different workers.
SHARED_SITES = ("shipped_site", "payload_site")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = [name for name in SHARED_SITES if name in getattr(item, "fixturenames", ())]
        if used:
            item.add_marker(pytest.mark.xdist_group(used[0].replace("_", "-")))


@pytest.fixture
def project_root(tmp_path: Path) -> Path:
    """A throwaway project root: the site sources of this checkout (content/ as shipped),
    empty data/."""
    root = tmp_path / "kb"
    root.mkdir()
    for name in SITE_SOURCES:
        source = (shipped_root() if name in SHIPPED_KNOWLEDGE else REPO) / name
        if source.is_dir():
            shutil.copytree(source, root / name)
        else:
            shutil.copy2(source, root / name)
    (root / "data" / "runs").mkdir(parents=True)
    return root


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium. Missing: a failure under CI=true, a loud skip elsewhere."""
    for candidate in CHROMIUM_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    reason = (
        "Chromium is not installed (apt-get install chromium): browser tests cannot run. "
        ".ci/run installs it on a fresh machine."
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def _built_once(public: Path):
    """Yield ``public`` to every test of the session, then fail the session if any test
    changed it (a test that needs to change a site copies it first)."""
    before = tree_digest(public)
    yield public
    assert tree_digest(public) == before, f"a test changed the shared site {public}: copy it"


@pytest.fixture(scope="session")
def shipped_knowledge() -> dict:
    """The analysis (`kb compare`'s knowledge) of the shipped data as committed, computed once
    per test process and shared. Read only: a test that plants a change works on a
    ``copy.deepcopy`` of it."""
    from pgbench_kb.analyze import build_knowledge

    return build_knowledge(shipped_root())


@pytest.fixture(scope="session")
def shipped_derived(tmp_path_factory) -> Path:
    """What `kb derive` makes of the shipped data as committed (a copy of it), once per test
    process: the build/site folder (content/, data/, static/). Read only."""
    from pgbench_kb.derive.site import derive_site

    root = copy_day_one(tmp_path_factory.mktemp("derived") / "kb")
    derive_site(root=root)
    return root / "build" / "site"


@pytest.fixture(scope="session")
def shipped_site(tmp_path_factory) -> Path:
    """The shipped site (this checkout's layouts; data and content as committed) built once
    with the real scripts/site.sh for the whole session: its public/ folder. Read only."""
    yield from _built_once(build_site(copy_day_one(tmp_path_factory.mktemp("shipped") / "kb")))


@pytest.fixture(scope="session")
def payload_site(tmp_path_factory) -> Path:
    """The shipped site with the payload run (kbtest.PAYLOAD in every free-text field) imported
    beside it, built once for the session: its public/ folder. Read only."""
    root = tmp_path_factory.mktemp("payload") / "kb"
    yield from _built_once(build_day_one_site_with_payload(root))


@pytest.fixture(scope="session")
def browser(chromium_path: str):
    """A real headless Chromium driven by Playwright (Debian's binary, not a download), one
    for the session; each test opens its own pages or contexts and closes them."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(autouse=True)
def _close_browser_pages(request):
    """Close what a test opened in the session's browser (its pages and their contexts)."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            context.close()
