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
import yaml

from kbtest import shipped_root
from pgbench_kb.runs.runfile import read_run

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
    """What a reader sees and hovers (title, alt, aria-label), outside code, scripts, elements
    marked ``hidden`` (search's sort keys) and a run page's facts table; headings, legends and
    link texts as lines of their own."""

    HIDDEN = frozenset({"script", "style", "code", "pre", "template"})

    def __init__(self) -> None:
        super().__init__()
        self.hidden: list[str] = []
        self.text: list[str] = []
        #: The text without what a person wrote (``class="authored"``: a run's notes, which
        #: may quote a source's figures as it printed them): what the site itself writes.
        self.generated: list[str] = []
        self.authored: list[str] = []

    VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"})

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        facts = tag == "table" and "facts" in (attributes.get("class") or "")
        unseen = "hidden" in attributes and tag not in self.VOID  # no reader sees it
        nested = bool(self.hidden) and tag == self.hidden[-1]  # its end tag closes this one
        if tag in self.HIDDEN or facts or unseen or nested or (self.hidden and tag == "table"):
            self.hidden.append(tag)
        authored = "authored" in (attributes.get("class") or "").split()
        if tag not in self.VOID and (authored or (self.authored and tag == self.authored[-1])):
            self.authored.append(tag)
        if not self.hidden:
            self._add([v for k, v in attrs if k in ("title", "alt", "aria-label") and v])
        self._add(["\n"])

    def handle_endtag(self, tag):
        if self.hidden and self.hidden[-1] == tag:
            self.hidden.pop()
        if self.authored and self.authored[-1] == tag:
            self.authored.pop()
        self._add(["\n"])

    def handle_data(self, data):
        if not self.hidden:
            self._add([data])

    def _add(self, texts: list[str]) -> None:
        self.text += texts
        if not self.authored:
            self.generated += texts


def reader_text(page: Path) -> str:
    return reader_texts(page)[0]


def reader_texts(page: Path) -> tuple[str, str]:
    """What a reader sees, and the part of it the site wrote (``Reader.generated``)."""
    reader = Reader()
    reader.feed(page.read_text(encoding="utf-8"))
    return "".join(reader.text), "".join(reader.generated)


#: "Per transaction, …: 2.0× the WAL per transaction and …" said it twice (issue 31).
REPEATED_PER_TRANSACTION = re.compile(
    r"\bper transaction\b(?:(?!\. )[^\n])*\bper transaction\b", re.I
)


#: A metric's field name ("latency_stddev_ms 314.739 → 101.553" on the talk's claim).
METRIC_NAME = re.compile(r"\b(?:latency_[a-z0-9]+_ms|[a-z_]+_per_txn)\b")


#: A setting named with "=default", which names no value (issue 31): the value, "at its
#: default (5min)" or "server default" instead.
SETTING_DEFAULT = re.compile(r"\b[a-z_]+ ?= ?default\b")
#: A number with a fraction: written by the one formatter (scripts/pgbench_kb/numbers.py) it
#: has at most four significant digits beside its integer part ("125.740000", "0.199382" and
#: "5015.48" leaked past it); a change in percent and a ratio keep one or two decimals.
NUMBER = re.compile(r"(?<![\w.,\-])(\d{1,3}(?:,\d{3})+|\d+)\.(\d+)(?![\w.%×])")


def raw_figures(text: str) -> list[str]:
    """Numbers in ``text`` that did not go through the formatter (see ``NUMBER``)."""
    found = []
    for match in NUMBER.finditer(text):
        integer, fraction = match.group(1).replace(",", ""), match.group(2)
        significant = (integer + fraction).lstrip("0")
        if len(significant) > max(4, len(integer.lstrip("0"))) and len(fraction) > 0:
            line = text[max(0, match.start() - 60) : match.end() + 20].replace("\n", " ")
            found.append(f"raw figure: …{line.strip()}…")
    return found


def problems(text: str, generated: str | None = None) -> list[str]:
    """What a reader should not see in ``text``; figures are checked in ``generated`` (the
    text without a person's own words), ``text`` itself when not given."""
    found = raw_figures(text if generated is None else generated)
    for name, pattern in (
        ("field path", FIELD_PATH),
        ("session token", SESSION_TOKEN),
        ("boolean as yes/no", BOOLEAN_SETTING),
        ("profile name as a configuration", PROFILE_AS_NAME),
        ("'per transaction' twice in a sentence", REPEATED_PER_TRANSACTION),
        ("metric field name", METRIC_NAME),
        ("setting as =default", SETTING_DEFAULT),
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
        if wrong := problems(*reader_texts(page)):
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
    shown = [f"{c['title']} — {c['when']}" for m in index["machines"] for c in m["configurations"]]
    for path in sorted((public / "compare" / "data").glob("*/*.json")):
        data = json.loads(path.read_text("utf-8"))["configuration"]
        shown += [data["session"], *(f"{k}: {v}" for k, v in data["facts"].items())]
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
        (
            "Per transaction, checkpoint_timeout 30s against 30min: 2.0× the WAL per "
            "transaction and 3.9–4.0× the full-page images.",
            "'per transaction' twice",
        ),
        ("holds: latency_stddev_ms 314.739 → 101.553 (published 314.7 → 101.6)", "metric field"),
        ("PG 18.6, -M simple, scale 8, checkpoint_timeout=default, max_wal_size=1GB", "setting as"),
        ("(the pgbench talk): holds. tps 0.199382 → 0.231663 (published 0.1994)", "raw figure"),
        ("average latency (ms) 5015.48 → 4316.6", "raw figure"),
        ("with and without connection time (67.540663 and 15,423.090062 tps", "raw figure"),
    ],
)
def test_the_check_finds_what_readers_found(text: str, kind: str):
    """The check can fail: what careful readers found on the site (issue 31)."""
    assert [p for p in problems(text) if p.startswith(kind)], (text, problems(text))


def test_the_check_passes_plain_words():
    assert not problems(
        "fsync: on → off. PG 18.6, -M simple, scale 8, fsync=off. Bench session "
        "2026-11-27 07:52 UTC. The profile of latency; a baseline is chosen. "
        "checkpoint_timeout at its default (5min). 125.7 tps, 0.1994 tps, 15,423 tps, "
        "0.000016 blocks, +1,548.3%, 16.48×, PG 8.4.22, --sampling-rate=0.00034."
    )


# What readers found on particular pages (issue 31, "Reader text"), each checked where it was.


def _page(public: Path, address: str) -> str:
    return reader_text(public / address / "index.html")


def _overview_labels(public: Path, address: str) -> list[str]:
    """The bar labels of a comparison page's overview chart (its SVG, as the browser gets it)."""
    page = (public / address / "index.html").read_text(encoding="utf-8")
    charts = re.findall(r'<img src="([^"]+\.svg)" alt="Change of B against A', page)
    assert len(charts) == 1, charts
    svg = (public / address / charts[0]).resolve().read_text(encoding="utf-8")
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    return [t for t in texts if re.match(r"\d+\. ", t)]


def test_raid_overview_bars_say_what_else_differs(public: Path):
    """Every bar read "RAID5 → RAID1+0": the three comparisons differ in the disks' speed and
    in where the WAL is, and the labels must say so."""
    labels = _overview_labels(public, "comparisons/raid-level")
    assert len(labels) == 3
    words = [label.split(". ", 1)[1] for label in labels]
    assert len(set(words)) == 3, labels
    assert all("rpm" in w and "WAL" in w for w in words), labels


def test_raid_comparisons_say_commit_delay_was_20000_on_every_arm(public: Path):
    """The run files record commit_delay 20000 on every RAID arm; the held-equal list must
    say so, not leave it out or call it unset."""
    lines = _page(public, "comparisons/raid-level").splitlines()
    text = "\n".join(lines)
    held = [lines[n + 1] for n, line in enumerate(lines[:-1]) if line.strip() == "Held equal:"]
    assert len(held) == 3, held
    assert all("commit_delay = 20,000 µs" in line for line in held), held
    assert "not set" not in text


def test_sources_page_lists_every_source_an_answer_cites_there(public: Path):
    """The checkpoints answer cited the 2007 thread "see the Sources page", which the Sources
    page did not list (it had no run)."""
    answers = yaml.safe_load((shipped_root() / "data" / "answers.yaml").read_text("utf-8"))
    page = (public / "sources" / "index.html").read_text(encoding="utf-8")
    listed = [html.unescape(h) for h in re.findall(r"<h2>([^<]+)</h2>", page)]
    cited = [c["title"] for c in answers["cites"].values() if "Sources page" in c.get("note", "")]
    assert any("thread" in c for c in cited)
    for title in cited:
        name = re.split(r" \(|, \d{4}", title)[0]
        assert any(h.startswith(name) for h in listed), (title, listed)


def test_sources_page_shows_the_tuning_path_step_by_step(public: Path):
    page = (public / "sources" / "index.html").read_text(encoding="utf-8")
    tables = re.findall(r'<table class="path">.*?</table>', page, re.S)
    assert len(tables) == 2
    text = reader_text(public / "sources" / "index.html")
    assert "409 → 2,323 tps (+468.0%)" in text and "462 → 2,350 tps (+408.7%)" in text


def test_home_page_counts_the_runs_that_keep_their_output(public: Path):
    """The home page said every figure links to its raw output; 16 of the 29 transcribed
    runs had none. Its count must be the run files' own."""
    root = shipped_root()
    # read_run (the fast reader, equal to the full loader on every shipped run file:
    # tests/runs/test_fastyaml_exact.py), not PyYAML's pure-Python loader (50 s for 1,029)
    runs = [read_run(p).data for p in (root / "data" / "runs").rglob("*.yaml")]
    kept = sum(
        1 for r in runs if any((root / str(x.get("path"))).is_file() for x in r.get("raw") or [])
    )
    text = " ".join(_page(public, ".").split())
    assert f"{kept:,} of the {len(runs):,} runs keep the pgbench output" in text
    assert not re.search(r"every figure[^.]*(raw|pgbench) output", text, re.I)


#: An element coloured as a win or a loss, and its text up to the element's end.
COLOURED = re.compile(
    r'class="[^"]*\bverdict-(?:higher|lower)\b[^"]*"[^>]*>(.*?)</(?:p|td|span)>', re.S
)


def test_no_verdict_is_coloured_as_a_win_or_loss_that_its_adjustment_denies(public: Path):
    """Issue 31: a row read "higher; not significant after Holm (54 tests)" in green. The
    colour follows the adjusted verdict (comparison_pages.verdict_tone)."""
    pages = sorted((public / "comparisons").rglob("*.html"))
    coloured = [(p, text) for p in pages for text in COLOURED.findall(p.read_text("utf-8"))]
    assert len(coloured) > 50
    wrong = [f"{p.relative_to(public)}: {t[:120]}" for p, t in coloured if "not significant" in t]
    assert not wrong, wrong[:5]
