"""The reader's check (issue 31, item 5), over every page of the shipped site built with the
real Hugo: no page shows a run file's field path, our bench's settings profile name as the name
of a configuration, a bench session's random token, or a setting's boolean as yes/no.

A run page's table of facts (``table.facts``: every field of its run file, identifiers
included) is a record, not reader text, and is left out; so are code and preformatted blocks
(raw pgbench output, commands, postgresql.conf lines)."""

from __future__ import annotations

import html
import html.parser
import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.site

FIELD_PATH = re.compile(
    r"\b(?:server|client|storage|postgres|benchmark|results|provenance|repeat|server_stats)"
    r"(?:\.[a-z_0-9]+)+\b"
)
#: A bench session id: its start, then its random token.
SESSION_TOKEN = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}\b")
#: A changed value written yes/no, or a boolean setting read yes/no.
BOOLEAN_SETTING = re.compile(
    r"→ (?:yes|no)\b|\b(?:yes|no) →|\b(?:fsync|full_page_writes|synchronous_commit|"
    r"wal_compression|wal_log_hints|autovacuum|jit)(?: =|:|=)? ?(?:yes|no)\b"
)
#: Our bench's settings profiles (scripts/profiles): names of what a profile runs, not of a
#: configuration. A title part that is one of them names a configuration after it.
OUR_PROFILES = (
    "profile", "baseline", "commit-delay", "checkpoint-timeout-30min", "checkpoint-timeout-30s",
    "shared-buffers-128mb-does-not-fit", "shared-buffers-1gb-fits", "synchronous-commit-off",
    "unsafe-fsync-off", "unsafe-full-page-writes-off",
)  # fmt: skip
PROFILE_AS_NAME = re.compile(
    r"(?:, |· )(?:" + "|".join(re.escape(p) for p in OUR_PROFILES) + r")(?= →|[.,)]|$|\s*$)",
    re.MULTILINE,
)


class Reader(html.parser.HTMLParser):
    """What a reader sees and hovers (title, alt, aria-label), outside code, scripts and a run
    page's facts table; headings, legends and link texts as lines of their own."""

    HIDDEN = frozenset({"script", "style", "code", "pre", "template"})

    def __init__(self) -> None:
        super().__init__()
        self.hidden: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        facts = tag == "table" and "facts" in (attributes.get("class") or "")
        if tag in self.HIDDEN or facts or (self.hidden and tag == "table"):
            self.hidden.append(tag)
        if not self.hidden:
            self.text += [v for k, v in attrs if k in ("title", "alt", "aria-label") and v]
        self.text.append("\n")

    def handle_endtag(self, tag):
        if self.hidden and self.hidden[-1] == tag:
            self.hidden.pop()
        self.text.append("\n")

    def handle_data(self, data):
        if not self.hidden:
            self.text.append(data)


def reader_text(page: Path) -> str:
    reader = Reader()
    reader.feed(page.read_text(encoding="utf-8"))
    return "".join(reader.text)


def problems(text: str) -> list[str]:
    found = []
    for name, pattern in (
        ("field path", FIELD_PATH),
        ("session token", SESSION_TOKEN),
        ("boolean as yes/no", BOOLEAN_SETTING),
        ("profile name as a configuration", PROFILE_AS_NAME),
    ):
        for match in pattern.finditer(text):
            line = text[max(0, match.start() - 60) : match.end() + 20].replace("\n", " ")
            found.append(f"{name}: …{line.strip()}…")
    return found


@pytest.fixture(scope="module")
def public(shipped_site: Path) -> Path:
    return shipped_site


def test_no_page_shows_what_a_reader_should_not_see(public: Path):
    pages = sorted(p for p in public.rglob("*.html") if "pagefind" not in p.parts)
    assert len(pages) > 100
    found = {}
    for page in pages:
        if wrong := problems(reader_text(page)):
            found[page.relative_to(public).as_posix()] = wrong[:3]
    assert not found, f"{len(found)} page(s): " + "; ".join(
        f"{page}: {wrong}" for page, wrong in list(found.items())[:8]
    )


def test_the_check_reads_every_row_of_the_matrices(public: Path):
    """The per-machine matrices (issue 31, item 3) are read like any page, every row's name
    included: none is left out as a record."""
    pages = sorted((public / "matrix").glob("*/index.html"))
    assert pages
    for page in pages:
        source = page.read_text(encoding="utf-8")
        titles = re.findall(r'<th scope="row" class="config"><a [^>]*>([^<]+)</a>', source)
        assert len(titles) >= 2, page
        text = reader_text(page)
        assert all(html.unescape(t) in text for t in titles), page
        assert not problems(text), (page, problems(text)[:3])


def test_compare_names_configurations_and_sessions_in_words(public: Path):
    """Compare any N fills its menus and tables from JSON, which the pages' check does not
    read: the names and sessions it shows, checked here."""
    index = json.loads((public / "compare" / "data" / "index.json").read_text("utf-8"))
    shown = [f"{c['title']} — {c['when']}" for c in index["configurations"]]
    for path in sorted((public / "compare" / "data").glob("*.json")):
        if path.name != "index.json":
            data = json.loads(path.read_text("utf-8"))
            shown += [c["session"] for c in data["configurations"].values()]
    assert len(shown) > 50
    found = [p for text in shown for p in problems(text)]
    assert not found, found[:5]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("fsync: not stated → no", "boolean as yes/no"),
        ("fsync default → no: tps 135.7% higher", "boolean as yes/no"),
        ("synchronous_commit = yes", "boolean as yes/no"),
        ("curves of bench session 20261127T071748Z-56e14e", "session token"),
        ("PG 15.18, -M simple, scale 16, profile → PG 18.6", "profile name as a configuration"),
        (
            "select-only · 4 clients · PG 18.6, scale 8, unsafe-fsync-off",
            "profile name as a configuration",
        ),
        ("Held equal: postgres.settings.fsync = on", "field path"),
    ],
)
def test_the_check_finds_what_readers_found(text: str, kind: str):
    """The check can fail: what careful readers found on the site (issue 31)."""
    assert [p for p in problems(text) if p.startswith(kind)], (text, problems(text))


def test_the_check_passes_plain_words():
    assert not problems(
        "fsync: on → off. PG 18.6, -M simple, scale 8, fsync=off. Bench session "
        "2026-11-27 07:52 UTC. The profile of latency; a baseline is chosen."
    )
