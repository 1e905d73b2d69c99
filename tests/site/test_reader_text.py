"""What a reader sees on the built site (issue 21, items 1, 6, 7), checked on every page of the
shipped data built with the real Hugo: no field path or Python value in reader text, each
statement once, settings as postgresql.conf lines, a short footer, the home page's answers,
sitemap.xml, the Atom feed, Open Graph tags, and nothing a content security policy of the
site alone would block (no inline script or style)."""

from __future__ import annotations

import html.parser
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.site

#: What must not reach a reader: a run file's dotted field path, a Python tuple or dict, a
#: bare Python value.
FIELD_PATH = re.compile(
    r"\b(?:server|client|storage|postgres|benchmark|results|provenance|repeat|server_stats)"
    r"(?:\.[a-z_0-9]+)+\b"
)
PYTHON_VALUE = re.compile(r"\('[^']*',\)|\{'[^']*':|\b(?:None|True|False)\b")
FOOTER_CHARS = 300
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def public(shipped_site: Path) -> Path:
    """The shipped site, built once for the session (read only)."""
    return shipped_site


def pages(public: Path) -> list[Path]:
    return sorted(p for p in public.rglob("*.html") if "pagefind" not in p.parts)


class Reader(html.parser.HTMLParser):
    """The text a reader sees (and hovers: title, alt, aria-label), without code blocks (raw
    pgbench output, commands, postgresql.conf lines, file names); list items and footer."""

    HIDDEN = frozenset({"script", "style", "code", "pre", "template"})

    def __init__(self) -> None:
        super().__init__()
        self.hidden = 0
        self.text: list[str] = []
        self.items: list[list[str]] = []
        self.footer: list[str] | None = None
        self.in_footer = False

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden += 1
        if tag == "li":
            self.items.append([])
        if tag == "footer":
            self.in_footer, self.footer = True, []
        for name, value in attrs:
            if name in {"title", "alt", "aria-label"} and value:
                self.text.append(value)

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden -= 1
        if tag == "footer":
            self.in_footer = False

    def handle_data(self, data):
        if self.in_footer and self.footer is not None:
            self.footer.append(data)
        if self.hidden:
            return
        self.text.append(data)
        for item in self.items:
            item.append(data)


def read(path: Path) -> Reader:
    reader = Reader()
    reader.feed(path.read_text(encoding="utf-8"))
    return reader


def words(parts: list[str]) -> str:
    return " ".join(" ".join(parts).split())


def test_no_field_path_or_python_value_where_a_reader_looks(public: Path):
    """Regression (issue 21): `server.os.release = 12`, `('storage.data.array',)` and
    `benchmark.workload.scripts.1.weight` were shown on comparison and run pages."""
    found = []
    for path in pages(public):
        text = words(read(path).text)
        for pattern in (FIELD_PATH, PYTHON_VALUE):
            found += [f"{path.relative_to(public)}: {m.group(0)}" for m in pattern.finditer(text)]
    assert found == []


def test_footer_is_short_and_links_the_change(public: Path):
    """Regression (issue 21): every footer carried a long commit message."""
    for path in pages(public):
        footer = read(path).footer
        if footer is None:
            continue
        text = words(footer)
        assert len(text) < FOOTER_CHARS, f"{path}: {len(text)} characters: {text}"
    run = next((public / "runs").glob("*/index.html")).read_text(encoding="utf-8")
    assert "View the data file" in run.split("<footer")[1]


def test_each_statement_once_on_answer_home_and_comparison_lists(public: Path):
    """Regression (issue 21): an interaction was listed as a finding and as an interaction."""
    checked = [public / "index.html", *(public / "answers").rglob("index.html")]
    checked += list((public / "comparisons").rglob("index.html"))
    for path in checked:
        page = path.read_text(encoding="utf-8")
        if "/comparisons/" in path.as_posix():
            # The findings and interactions (each comparison's own details come after).
            page = page.split("<h2>Findings</h2>")[-1].split("<figure")[0].split("<section")[0]
        reader = Reader()
        reader.feed(page)
        items = Counter(words(i) for i in reader.items if len(words(i)) > 40)
        assert [t for t, n in items.items() if n > 1] == [], path


def test_settings_are_postgresql_conf_lines_with_units(public: Path):
    run = next(
        p for p in (public / "runs").glob("200606-hp-*/index.html")
        if "shared_buffers = 23987" in p.read_text(encoding="utf-8")
    )  # fmt: skip
    page = run.read_text(encoding="utf-8")
    assert "<code>shared_buffers = 23987  # 8 kB pages ≈ 187 MB</code>" in page
    assert "<code>commit_delay = 20000  # µs = 20 ms</code>" in page
    assert "23,987" not in page.split('id="facts"')[0]


def home_answers(public: Path) -> list[str]:
    page = (public / "index.html").read_text(encoding="utf-8")
    block = page.split('<ul class="answers">')[1].split("</ul>")[0]
    return [words([re.sub(r"<[^>]+>", " ", li)]) for li in block.split("<li>")[1:]]


def shingles(text: str) -> set[tuple[str, ...]]:
    found = re.findall(r"[a-z0-9.+%]+", text.lower())
    return {tuple(found[i : i + 3]) for i in range(len(found) - 2)}


def test_near_duplicates_are_caught():
    """The check can fail: the old home page's first two findings."""
    a = "fsync default → off: tps 20.2% higher (2,372 → 2,851, published mean of 3)"
    b = "fsync default → off: tps 19.5% higher (2,372 → 2,834, published mean of 3)"
    assert len(shingles(a) & shingles(b)) / len(shingles(a) | shingles(b)) >= 1 / 3


def test_home_page_leads_with_short_distinct_answers_from_three_sources(public: Path):
    page = (public / "index.html").read_text(encoding="utf-8")
    main = page.split('<main id="main"')[1]
    assert main.index('class="answers"') < main.index("Recent results")
    answers = home_answers(public)
    assert len(answers) >= 5
    leads = []
    for text in answers:
        # After the question; its scope may follow on a line of its own (issue 31).
        lead = text.split("?", 1)[1].split("Scope:")[0].strip()
        assert len(lead.split()) <= 45, lead
        leads.append(lead)
    # No near-duplicates (regression: the first two key findings were both "fsync default →
    # off"): no two leads share a third of their three-word runs (shingles). Leads from one
    # source share its name and how sure its figures are, a few shingles at most.
    sets = [shingles(lead) for lead in leads]
    for i, a in enumerate(sets):
        for j in range(i + 1, len(sets)):
            overlap = len(a & sets[j]) / len(a | sets[j])
            assert overlap < 1 / 3, (leads[i], leads[j])
    assert sum("Scope:" in text for text in answers) >= 3  # RAID, memory, OS
    questions = [text.split("?", 1)[0] for text in answers]
    for word in ("RAID", "WAL", "write cache", "PostgreSQL", "operating system"):
        assert any(word in q for q in questions), word
    covering = [
        lead for q, lead in zip(questions, leads, strict=True)
        if any(w in q for w in ("RAID", "WAL", "write cache", "PostgreSQL", "operating system"))
    ]  # fmt: skip
    machines = {p.stem for p in (public.parent / "content" / "hardware").glob("*.md")}
    named = {m for m in machines if any(m in lead for lead in covering)}
    assert len(named) >= 3, named


def test_sitemap_lists_every_page_once(public: Path):
    tree = ET.parse(public / "sitemap.xml")
    locations = [e.text for e in tree.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert len(locations) == len(set(locations))
    on_disk = {
        "/" + p.parent.relative_to(public).as_posix().removeprefix(".") + "/"
        for p in public.rglob("index.html")
        if "pagefind" not in p.parts and 'http-equiv="refresh"' not in p.read_text()[:600]
    }
    on_disk = {p.replace("//", "/") for p in on_disk}
    assert set(locations) == on_disk


def test_atom_feed_lists_the_answers_and_the_newest_runs(public: Path):
    feed = ET.parse(public / "feed.xml").getroot()
    assert feed.tag == f"{ATOM}feed"
    entries = feed.findall(f"{ATOM}entry")
    ids = [e.findtext(f"{ATOM}id") for e in entries]
    assert len(ids) == len(set(ids))
    answers = [e for e in entries if ":answer:" in e.findtext(f"{ATOM}id")]
    runs = [e for e in entries if ":run:" in e.findtext(f"{ATOM}id")]
    assert len(answers) == 10 and 0 < len(runs) <= 30
    updated = [e.findtext(f"{ATOM}updated") for e in entries]
    assert updated == sorted(updated, reverse=True)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", u) for u in updated)
    for entry in entries:
        href = entry.find(f"{ATOM}link").get("href")
        assert not href.startswith(("/", "http")), href  # relative to the feed
        assert (public / href / "index.html").is_file(), href
    home = (public / "index.html").read_text(encoding="utf-8")
    assert re.search(r'type="application/atom\+xml"[^>]*href="(\./)?feed\.xml"', home)


def test_open_graph_tags_and_styles_readers_expect(public: Path):
    for path in pages(public):
        page = path.read_text(encoding="utf-8")
        if "<head>" not in page or 'http-equiv="refresh"' in page[:600]:
            continue
        for prop in ("og:title", "og:description", "og:type", "og:site_name"):
            assert f'property="{prop}"' in page, (path, prop)
    css = (public / "css" / "site.css").read_text(encoding="utf-8")
    assert "@media (prefers-color-scheme: dark)" in css
    assert "@media print" in css


def test_nothing_a_site_only_content_security_policy_would_block(public: Path):
    """No inline script, no inline style, no style attribute (code highlighting carries
    classes: config.toml's markup.highlight.noClasses = false)."""
    for path in pages(public):
        page = path.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page), path
        assert "<style" not in page and " style=" not in page, path
