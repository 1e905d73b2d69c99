"""`kb index`: the real Pagefind on a site the real Hugo built, then its filter index rewritten
in a fixed order, so that two builds of the same data give identical files (Pagefind issue
#638: its filter files and metadata came out in hash-map order)."""

from __future__ import annotations

import filecmp
import gzip
import html as html_text
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kbtest import REPO, run_kb
from pgbench_kb.errors import SearchIndexError
from pgbench_kb.publish import cbor, search_index

pytestmark = pytest.mark.site


@pytest.mark.parametrize(
    ("item", "hex_bytes"),
    [
        (0, "00"),
        (23, "17"),
        (24, "1818"),
        (255, "18ff"),
        (256, "190100"),
        (65536, "1a00010000"),
        (2**32, "1b0000000100000000"),
        ("", "60"),
        ("ü", "62c3bc"),
        ([], "80"),
        ([1, [2, 3]], "8201820203"),
        (["a" * 24], "817818" + "61" * 24),
    ],
)
def test_cbor_writes_the_shortest_form_and_reads_it_back(item, hex_bytes):
    data = bytes.fromhex(hex_bytes)
    assert cbor.encode(item) == data
    assert cbor.decode(data) == item


@pytest.mark.parametrize(
    "hex_bytes",
    ["a0", "20", "f6", "0000", "62c3", "9f", "1c"],
    ids=["map", "negative", "null", "trailing", "truncated", "indefinite", "reserved"],
)
def test_cbor_refuses_what_pagefind_does_not_write(hex_bytes):
    with pytest.raises(cbor.CborError):
        cbor.decode(bytes.fromhex(hex_bytes))


@pytest.fixture(scope="module")
def hugo_site(tmp_path_factory, shipped_site: Path) -> Path:
    """The session's shipped site (Hugo + `kb index`), copied without its pagefind/."""
    site = tmp_path_factory.mktemp("index") / "hugo-only"
    shutil.copytree(shipped_site, site, ignore=shutil.ignore_patterns("pagefind"))
    return site


def copy_of(site: Path, name: str) -> Path:
    target = site.parent / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(site, target)
    return target


def pagefind_alone(site: Path) -> None:
    exe = search_index.pagefind_executable()
    subprocess.run([str(exe), "--site", str(site), "--silent"], check=True)


def differing(a: Path, b: Path) -> list[str]:
    names = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    names |= {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    return sorted(
        n
        for n in names
        if not ((a / n).is_file() and (b / n).is_file() and filecmp.cmp(a / n, b / n, False))
    )


def read(path: Path):
    return cbor.decode(gzip.decompress(path.read_bytes())[len(search_index.SIGNATURE) :])


def index_content(bundle: Path) -> dict:
    """What a search can see: each filter's values and pages, the sort orders, the pages."""
    entry = json.loads((bundle / "pagefind-entry.json").read_text(encoding="utf-8"))
    meta_hash = entry["languages"]["en"]["hash"]
    meta = read(bundle / f"pagefind.{meta_hash}.pf_meta")
    filters = {}
    for name, filter_hash in meta[3]:
        record = read(bundle / "filter" / f"{filter_hash}.pf_filter")
        assert record[0] == name
        filters[name] = {value: pages for value, pages in record[1]}
    return {"pages": meta[1], "chunks": meta[2], "filters": filters, "sorts": dict(meta[4])}


def test_pagefind_alone_still_writes_its_filter_index_in_arbitrary_order(hugo_site):
    """Why `kb index` exists: if this fails, Pagefind fixed issue #638 and the rewrite can go."""
    a, b = copy_of(hugo_site, "raw-a"), copy_of(hugo_site, "raw-b")
    pagefind_alone(a)
    pagefind_alone(b)
    changed = differing(a, b)
    assert changed and all(n.startswith("pagefind/") for n in changed)
    assert "pagefind/pagefind-entry.json" in changed


def test_two_indexings_of_the_same_pages_are_identical(hugo_site):
    """Regression (Pagefind issue #638): the filter index differed between two builds."""
    a, b = copy_of(hugo_site, "kb-a"), copy_of(hugo_site, "kb-b")
    for site in (a, b):
        done = run_kb("index", str(site))
        assert done.returncode == 0, done.stderr
        assert "filter file(s) in a fixed order" in done.stdout
    assert differing(a, b) == []
    # One bundle for the site, with all eleven filters (a file each).
    assert len(list((a / "pagefind" / "filter").glob("*"))) == 11


def test_the_rewrite_keeps_everything_a_search_sees(hugo_site):
    raw, fixed = copy_of(hugo_site, "raw"), copy_of(hugo_site, "fixed")
    pagefind_alone(raw)
    pagefind_alone(fixed)
    before = index_content(raw / "pagefind")
    search_index.stabilize(fixed / "pagefind")
    after = index_content(fixed / "pagefind")
    assert after == before
    assert {"postgresql", "raid level", "origin", "machine"} <= set(after["filters"])
    assert len(after["sorts"]["tps"]) >= 70  # one page per configuration (74 day-one)
    # In order, named by their content, nothing left over.
    bundle = fixed / "pagefind"
    entry = json.loads((bundle / "pagefind-entry.json").read_text(encoding="utf-8"))
    meta = read(bundle / f"pagefind.{entry['languages']['en']['hash']}.pf_meta")
    assert [name for name, _ in meta[3]] == sorted(name for name, _ in meta[3])
    for _, filter_hash in meta[3]:
        record = read(bundle / "filter" / f"{filter_hash}.pf_filter")
        values = [value for value, _ in record[1]]
        assert values == sorted(values)
        body = cbor.encode(record)
        assert filter_hash == "en_" + search_index.pagefind_hash(body)[:7]
    assert sorted(p.stem for p in (bundle / "filter").iterdir()) == sorted(h for _, h in meta[3])
    assert len(list(bundle.glob("*.pf_meta"))) == 1
    assert list(bundle.rglob(".*.tmp")) == []


@pytest.mark.parametrize("which", ["metadata", "last filter"])
def test_a_format_it_does_not_know_is_one_line_and_nothing_is_rewritten(hugo_site, which):
    """Everything is read before anything is written: a bad last filter file leaves the
    metadata and the other filter files as Pagefind wrote them."""
    site = copy_of(hugo_site, "odd")
    pagefind_alone(site)
    bundle = site / "pagefind"
    if which == "metadata":
        bad = next(bundle.glob("*.pf_meta"))
    else:
        entry = json.loads((bundle / "pagefind-entry.json").read_text(encoding="utf-8"))
        meta = read(bundle / f"pagefind.{entry['languages']['en']['hash']}.pf_meta")
        last = max(meta[3])[1]  # sorted by name, the last one read
        bad = bundle / "filter" / f"{last}.pf_filter"
    # A CBOR map where Pagefind writes an array: what a format change would look like.
    bad.write_bytes(gzip.compress(search_index.SIGNATURE + bytes.fromhex("a0"), mtime=0))
    before = {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()}
    with pytest.raises(SearchIndexError) as caught:
        search_index.stabilize(bundle)
    assert str(caught.value).startswith(f"{bad}: unexpected Pagefind format")
    assert {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()} == before


def test_kb_index_of_a_missing_folder_is_one_line(tmp_path):
    done = run_kb("index", str(tmp_path / "public"))
    assert done.returncode == 1
    assert (
        done.stderr == f"error: {tmp_path / 'public'}: no such folder (build it with Hugo first)\n"
    )


def test_pagefind_reads_only_the_pages_it_indexes(tmp_path):
    """At 10,000 runs most pages are repeats that are not indexed (no data-pagefind-body), yet
    Pagefind parsed them all. It is now given only the marked pages (hard links at the same
    paths): the index holds exactly those, at their own URLs, and nothing is left beside."""
    site = tmp_path / "public"
    for name, marked in (("kept", True), ("repeat", False), ("another", True)):
        page = site / "runs" / name / "index.html"
        page.parent.mkdir(parents=True)
        body = " data-pagefind-body" if marked else ""
        page.write_text(
            f'<html lang="en"><body><main{body}><h1>{name}</h1><p>pgbench {name} page</p>'
            "</main></body></html>",
            encoding="utf-8",
        )
    assert [p.parent.name for p in search_index.pages_to_index(site)] == ["another", "kept"]
    search_index.build(site)
    entry = json.loads((site / "pagefind" / "pagefind-entry.json").read_text(encoding="utf-8"))
    assert entry["languages"]["en"]["page_count"] == 2
    fragments = [
        json.loads(gzip.decompress(f.read_bytes())[len(b"pagefind_dcd") :])
        for f in (site / "pagefind" / "fragment").glob("*.pf_fragment")
    ]
    assert sorted(f["url"] for f in fragments) == ["/runs/another/", "/runs/kept/"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]


def page_with_marker_at(tmp_path: Path, name: str, at: int | None, size: int) -> Path:
    """An HTML file of ``size`` bytes (about) holding the marker from byte ``at`` (or not)."""
    filler = b"<p>" + b"x" * (size - 7) + b"</p>"
    if at is not None:
        filler = filler[:at] + search_index.MARKER + filler[at:]
    page = tmp_path / name / "index.html"
    page.parent.mkdir(parents=True)
    page.write_bytes(filler)
    return page


@pytest.mark.parametrize(
    ("at", "size"),
    [
        (20, 3000),  # where our layouts put it (in the first KB)
        (search_index.READ_SIZE - 5, 100_000),  # across the end of the first piece
        (2 * search_index.READ_SIZE - len(search_index.MARKER) - 5, 200_000),  # of the second
        (2_150_000, 2_200_000),  # far down, after </main> for all it knows
    ],
    ids=["first-kb", "across-first-read", "across-second-read", "far-down"],
)
def test_the_marker_is_found_wherever_it_is_in_a_page(tmp_path, at, size):
    """pages_to_index no longer reads every page whole: it stops at the marker. It must still
    find a marker anywhere (Pagefind's rule), across the boundary of two reads included."""
    marked = page_with_marker_at(tmp_path, "marked", at, size)
    assert search_index.is_marked(marked)
    unmarked = page_with_marker_at(tmp_path, "unmarked", None, size)
    assert not search_index.is_marked(unmarked)
    assert search_index.pages_to_index(tmp_path) == [marked]


def test_reading_in_pieces_finds_what_reading_whole_finds(tmp_path):
    """With a 64-byte buffer, every offset of the marker around piece boundaries, files that
    end exactly at a boundary, and a marker cut by the end of the file."""
    page, buffer = tmp_path / "index.html", bytearray(64)
    for size in (0, 17, 18, 63, 64, 65, 110, 111, 128, 129, 200):
        for at in [None, *range(0, max(size - 17, 1))]:
            data = bytearray(b"m" * size)
            if at is not None:
                data[at : at + 18] = search_index.MARKER
            page.write_bytes(bytes(data))
            expected = search_index.MARKER in data
            assert search_index.is_marked(page, buffer) == expected, (size, at)


def test_a_page_that_ends_inside_the_marker_is_not_marked(tmp_path):
    page = tmp_path / "index.html"
    page.write_bytes(b"x" * (search_index.READ_SIZE - 3) + search_index.MARKER[:-1])
    assert not search_index.is_marked(page)
    page.write_bytes(b"")
    assert not search_index.is_marked(page)


def test_with_no_marked_page_every_page_is_indexed_and_folders_are_not_pages(tmp_path):
    for name in ("b", "a", "a/c"):
        (tmp_path / name).mkdir(parents=True, exist_ok=True)
        (tmp_path / name / "index.html").write_text("<p>pgbench</p>", encoding="utf-8")
    (tmp_path / "odd.html").mkdir()  # a folder named like a page
    (tmp_path / "a" / "notes.txt").write_text("not a page", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in search_index.pages_to_index(tmp_path)] == [
        "a/c/index.html", "a/index.html", "b/index.html",
    ]  # fmt: skip


def test_the_bundle_holds_only_what_our_search_page_loads(hugo_site):
    """Pagefind wrote ~500 KB of bundled UIs (pagefind-ui.*, pagefind-component-ui.*,
    pagefind-modular-ui.*), a highlighting script and the search code of a language the site
    does not have; static/js/search.js loads pagefind.js, which loads the rest listed here.
    If Pagefind adds a file, this fails: decide whether search.js needs it."""
    site = copy_of(hugo_site, "pruned")
    done = search_index.build(site)
    bundle = site / "pagefind"
    top = sorted(p.name for p in bundle.iterdir())
    meta = next(bundle.glob("*.pf_meta")).name
    assert top == sorted([
        "filter", "fragment", "index", meta, "pagefind-entry.json", "pagefind-worker.js",
        "pagefind.js", "wasm.en.pagefind",
    ])  # fmt: skip
    assert done.pruned == 8
    for name in ("search.js",):
        script = (REPO / "static" / "js" / name).read_text(encoding="utf-8")
        assert "pagefind.js" in script and "pagefind-ui" not in script
    for layout in (REPO / "layouts").rglob("*.html"):
        assert "pagefind-ui" not in layout.read_text(encoding="utf-8"), layout


def fragments(bundle: Path) -> dict[str, str]:
    """Each indexed page's URL and the text Pagefind indexed for it."""
    pages = {}
    for path in (bundle / "fragment").glob("*.pf_fragment"):
        fragment = json.loads(gzip.decompress(path.read_bytes())[len(search_index.SIGNATURE) :])
        pages[fragment["url"]] = fragment["content"]
    return pages


def test_comparison_and_hardware_pages_index_sentences_not_tables(hugo_site):
    """At 10,000 runs the 32 comparison pages (46 MB, hundreds of comparisons each) and the
    hardware pages (every run of the machine in a table) were most of Pagefind's work. Search
    keeps their titles, introductions, findings and each comparison's context and verdict;
    figures, what was held equal, caveats and run lists are not indexed."""
    site = copy_of(hugo_site, "sentences")
    search_index.build(site)
    indexed = fragments(site / "pagefind")
    # The clients family spans machines with many verdicts: a page per machine.
    html = (site / "comparisons" / "clients--kb-dev-epyc-2c" / "index.html").read_text("utf-8")
    text = indexed["/comparisons/clients--kb-dev-epyc-2c/"]
    assert text.startswith("Clients on kb-dev-epyc-2c. ") and "Findings. On kb-dev-epyc-2c" in text
    verdict = re.search(r'<p class="verdict[^"]*">([^<]+)</p>', html).group(1)
    context = re.search(r'<p class="muted">([^<]+)</p>', html).group(1)
    assert html_text.unescape(verdict) in text and html_text.unescape(context) in text
    assert "Held equal" in html and "Held equal" not in text
    for family in sorted((site / "comparisons").glob("*/index.html")):
        if "<strong>Caveats:</strong>" in family.read_text(encoding="utf-8"):
            assert "Caveats" not in indexed[f"/comparisons/{family.parent.name}/"]
            break
    else:
        pytest.fail("no comparison with caveats in the day-one data")
    # Latency and what was held equal one click away (issue 31), not indexed either.
    assert "Latency and what was held equal" in html and "what was held equal" not in text
    assert "Centre" in html and "Centre" not in text  # the figures' table
    curves = indexed["/comparisons/curves--kb-dev-epyc-2c/"]
    assert "tps peaks at" in curves and "Latency avg" not in curves
    machine = indexed["/hardware/hp-proliant-dl380-g4/"]
    page = (site / "hardware" / "hp-proliant-dl380-g4" / "index.html").read_text(encoding="utf-8")
    assert "Specification. System HP ProLiant DL380 G4." in machine
    assert "Results this machine took part in" in machine
    assert 'class="runs"' in page and "Latency avg" not in machine  # the runs' table
    listed = re.search(r"<h2>Comparisons on this machine</h2>\s*<ul[^>]*><li><a[^>]*>([^<]+)", page)
    assert listed and listed.group(1) not in machine.split("Comparisons on this machine")[1]
