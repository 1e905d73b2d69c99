"""Pull requests that try to hijack the site (issue #22), against the real build: the day-one
project is built once with the real Hugo and Pagefind; then each attack is added and the build
(`scripts/site.sh`) must stop with a located error and leave public/ as it was — and `kb
derive` alone (a build whose `kb check` was skipped) must refuse it too. The layouts' content
security policy is on every page, and Hugo itself ignores Markdown attributes and writes no
inline style, whatever reaches it."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kbtest import KB, REPO, copy_built

pytestmark = pytest.mark.site

CSP = (
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; font-src 'self'; manifest-src 'self'; "
    "base-uri 'none'; form-action 'self'; object-src 'none'"
)
#: A shipped run with a progress chart that shades its checkpoints (inline SVG under the policy).
FIRST_RUN = "20261127T014210Z-kb-dev-epyc-2c-tpcb-like-s8-c4-658f5881"


@pytest.fixture(scope="module")
def built(tmp_path_factory, shipped_site: Path) -> Path:
    """A copy of the session's shipped site, built, to attack."""
    return copy_built(shipped_site, tmp_path_factory.mktemp("attacks") / "kb")


def digest(public: Path) -> str:
    """The SHA-256 of every file of ``public`` (paths and bytes)."""
    total = hashlib.sha256()
    for path in sorted(public.rglob("*")):
        if path.is_file():
            total.update(path.relative_to(public).as_posix().encode() + b"\0")
            total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


def site(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "scripts" / "site.sh"), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def derive(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KB), "derive", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


ATTACKS = {
    "shadow run page": (
        f"content/runs/{FIRST_RUN}.md",
        "---\ntitle: Replaced\n---\nThis run was 10 times faster.\n",
        f"content/runs/{FIRST_RUN}.md:1: (file): kb derive writes the pages under /runs/",
    ),
    "shadow explorer": (
        "content/results/_index.md",
        "---\ntitle: Results\ncascade:\n  build:\n    list: never\n---\nx\n",
        "content/results/_index.md:1: (file): kb derive writes the pages under /results/",
    ),
    "guide taking the home page": (
        "content/guides/home.md",
        "---\ntitle: Home\nurl: /\n---\nA new home.\n",
        "content/guides/home.md:3: url: changes where a page is published",
    ),
    "hardware bundle": (
        "content/hardware/index.md",
        "---\ntitle: All gone\n---\nx\n",
        "content/hardware/index.md:1: (file): 'index.md'",
    ),
    "overlay by attributes": (
        "content/guides/overlay.md",
        '---\ntitle: Overlay\n---\n## Hi {style="position:fixed;inset:0;z-index:9"}\n',
        "content/guides/overlay.md:4: (body): Markdown attributes",
    ),
    "outside embed": (
        "content/guides/video.md",
        "---\ntitle: Video\n---\n{{< youtube dQw4w9WgXcQ >}}\n",
        "content/guides/video.md:4: (body): shortcode 'youtube' is not allowed",
    ),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_stops_the_build_and_leaves_the_site_as_it_was(built: Path, attack: str) -> None:
    relative, text, located = ATTACKS[attack]
    before = digest(built / "public")
    target = built / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    try:
        done = site(built)
        assert done.returncode == 1, done.stdout + done.stderr
        assert located in done.stderr, done.stderr
        assert "kb check found errors" in done.stderr
        assert digest(built / "public") == before
        # kb check skipped: kb derive refuses the same file, with the same location.
        alone = derive(built)
        assert alone.returncode != 0
        assert alone.stderr.startswith(f"error: {located}"), alone.stderr
        assert "Traceback" not in alone.stderr
    finally:
        target.unlink()
        if not any(target.parent.iterdir()) and target.parent.name in ("runs", "results"):
            target.parent.rmdir()


def test_every_page_carries_the_content_security_policy(built: Path) -> None:
    pages = sorted((built / "public").rglob("*.html"))
    assert len(pages) > 100
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in text, page
        assert not re.search(r"\sstyle=", text), f"{page}: an inline style the policy blocks"
        assert not re.search(r"<script(?![^>]*\ssrc=)[^>]*>", text), f"{page}: inline script"
        assert not re.search(r"\son[a-z]+=", text), f"{page}: an event handler attribute"


def test_hugo_ignores_markdown_attributes_even_without_the_check(
    built: Path, tmp_path: Path
) -> None:
    """config.toml turns Goldmark's attributes off and highlights code with classes: a page
    that reached Hugo anyway (kb check and kb derive skipped) gets no style attribute."""
    guide = built / "content" / "guides" / "overlay.md"
    guide.write_text(
        '---\ntitle: Overlay\n---\n## Hi {style="position:fixed;inset:0"}\n\n'
        "```sql\nselect 1;\n```\n",
        encoding="utf-8",
    )
    try:
        out = tmp_path / "site"
        done = subprocess.run(
            [
                str(KB),
                "render",
                "--root",
                str(built),
                "--config",
                str(built / "build/hugo.toml"),
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        html = (out / "guides" / "overlay" / "index.html").read_text(encoding="utf-8")
        heading = re.search(r"<h2[^>]*>.*?</h2>", html, re.S).group(0)
        assert heading.startswith('<h2 id="hi-stylepositionfixedinset0">'), heading
        assert "{style=" in heading  # shown as text, not applied
        assert "select" in html and not re.search(r"\sstyle=", html)
    finally:
        guide.unlink()
        shutil.rmtree(tmp_path / "site", ignore_errors=True)


VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e =>
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.mark.browser
def test_pages_work_in_chromium_under_the_policy_and_it_blocks_what_it_should(
    built: Path, browser, tmp_path: Path
) -> None:
    """In Debian's Chromium: the home page, a run page, the explorer and a search (Pagefind's
    WebAssembly) work with no policy violation and no console error; an inline script added to
    a page is blocked and reported (so the policy is in force, and this test can fail)."""
    from kbtest import serve

    public = tmp_path / "public"
    shutil.copytree(built / "public", public)
    tampered = public / "guides" / "index.html"
    tampered.write_text(
        tampered.read_text(encoding="utf-8").replace(
            "</main>", "<script>window.pwned = 1</script></main>"
        ),
        encoding="utf-8",
    )
    with serve(public) as base:
        page = browser.new_page()
        page.add_init_script(VIOLATIONS)
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        for path in ("", f"runs/{FIRST_RUN.lower()}/", "results/"):
            page.goto(base + path, wait_until="networkidle")
            assert page.evaluate("window.__violations") == [], path
        page.goto(base + "search/?q=raid", wait_until="networkidle")
        page.wait_for_function(
            "+(document.getElementById('search').dataset.done || 0) > 0", timeout=15_000
        )
        assert page.locator("#search-results li").count() > 0
        assert page.evaluate("window.__violations") == []
        assert errors == []
        page.goto(base + "guides/", wait_until="networkidle")
        assert page.evaluate("window.pwned") is None
        assert page.evaluate("window.__violations") == ["script-src-elem inline"]
        assert any("Content Security Policy" in e for e in errors), errors
