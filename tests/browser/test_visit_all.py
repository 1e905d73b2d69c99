"""``kbtest.visit_all`` (pages loaded four at a time) sees what loading them one by one with
``wait_until="networkidle"`` saw: a console error on any tab, a request still in flight when a
page's load event fired, and what the check finds on each page; the test fails when visit_all
waits for the load event only."""

from __future__ import annotations

import functools
import http.server
import threading
import time
from pathlib import Path

import pytest

from kbtest import visit_all

pytestmark = pytest.mark.browser

PLAIN = "<!doctype html><html lang='en'><head><title>{n}</title></head><body>{n}{extra}</body>"
#: The last page asks for a missing file that takes the server 2 s to refuse: only a wait for
#: the page's network to fall idle sees the refusal before visit_all returns. Page 2 logs an
#: error (on the second tab); page 5 (the first tab again) is one the check must name.
EXTRA = {
    2: "<script>console.error('two went wrong')</script>",
    5: "<script>window.__kb_pwned = 1</script>",
    7: "<script>addEventListener('load', () => fetch('slow-missing.json'))</script>",
}
SLOW_S = 2.0


class _SlowToRefuse(http.server.SimpleHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.endswith("/slow-missing.json"):
            time.sleep(SLOW_S)
        super().do_GET()

    def log_message(self, *_args) -> None:
        pass


def test_visit_all_sees_late_requests_errors_on_any_tab_and_the_checks(browser, tmp_path: Path):
    paths = []
    for n in range(1, 8):
        (tmp_path / f"p{n}").mkdir()
        page = PLAIN.format(n=n, extra=EXTRA.get(n, ""))
        (tmp_path / f"p{n}" / "index.html").write_text(page, encoding="utf-8")
        paths.append(f"p{n}/")
    checked, pwned = [], []

    def check(page, path: str) -> None:
        checked.append((path, page.title()))
        if page.evaluate("typeof window.__kb_pwned") != "undefined":
            pwned.append(path)

    handler = functools.partial(_SlowToRefuse, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        problems = visit_all(browser, base, paths, check)
    finally:
        server.shutdown()
        server.server_close()
    assert checked == [(f"p{n}/", str(n)) for n in range(1, 8)]
    assert pwned == ["p5/"]
    assert "console error: two went wrong" in problems
    assert any(p.startswith("HTTP 404: ") and p.endswith("/p7/slow-missing.json") for p in problems)
