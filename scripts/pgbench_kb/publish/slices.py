"""The search index in slices, each re-indexed only when its pages changed.

The pages Pagefind indexes are split into slices: one per machine (its configuration and run
pages, found by the page's ``machine`` filter, and its hardware and comparison pages, found by
their address: ``hardware/<machine>/``, ``comparisons/<family>--<machine>/``), and one,
``pages``, for the others (home, guides, the comparison overviews…). A run added on one
machine changes that machine's pages and a few small ones, so two slices are indexed again.
Each slice is its own Pagefind bundle, ``pagefind/<slice>/``, and ``pagefind/slices.json``
lists them; our search page (``static/js/search.js``) queries every slice and merges the
results.

With a cache folder, each slice's bundle is kept there with a stamp: the digest of its pages'
paths and bytes (not their times: Hugo rewrites every file) and the digest of every file of
the bundle. A slice whose pages have the digest of its stamp, and whose files all have the
digests the stamp lists, is reused; any other is indexed again (a missing, partial or altered
cache entry is never trusted). Slices of pages that are gone are removed from the cache.
Slices are indexed two at a time (the machine has two cores; Pagefind is mostly one thread).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pgbench_kb.errors import SearchIndexError
from pgbench_kb.publish import search_index

#: The file listing the slices, in the bundle folder.
MANIFEST = "slices.json"
#: The stamp of a cached slice, written last.
STAMP = "stamp.json"
#: The slice of the pages that belong to no machine.
OTHER = "pages"
#: Pagefind processes at a time.
WORKERS = 2
#: How a page names its machine (layouts/groups/page.html, layouts/_partials/run/facets.html).
MACHINE = re.compile(rb'data-pagefind-filter="machine">([^<]+)<')
#: The address of a machine's hardware page or of one of its comparison pages.
MACHINE_PAGE = re.compile(r"^(?:hardware/|comparisons/[^/]+--)([^/]+)/index\.html$")


@dataclass
class Outcome:
    """What ``build`` did: every slice's name, those indexed again, those reused from the
    cache, the cache entries removed (their pages are gone), and filter files written."""

    slices: list[str]
    indexed: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    filters: int = 0


def slug(text: str) -> str:
    """A folder name for ``text``: lowercase letters, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unnamed"


def slice_of(relative: str, data: bytes) -> str:
    """The slice of the page at ``relative`` (a path under the site) holding ``data``."""
    found = MACHINE.search(data)
    if found:
        return "machine-" + slug(found.group(1).decode("utf-8", "replace"))
    by_address = MACHINE_PAGE.match(relative)
    if by_address:
        return "machine-" + slug(by_address.group(1))
    return OTHER


@dataclass
class _Slice:
    name: str
    pages: list[Path] = field(default_factory=list)
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)


def split(site: Path) -> dict[str, _Slice]:
    """The indexed pages of ``site`` by slice, with each slice's digest of paths and bytes."""
    found: dict[str, _Slice] = {}
    for page in search_index.pages_to_index(site):
        relative = page.relative_to(site).as_posix()
        data = page.read_bytes()
        name = slice_of(relative, data)
        part = found.setdefault(name, _Slice(name))
        part.pages.append(page)
        part.digest.update(f"{relative}\0{len(data)}\0".encode())
        part.digest.update(data)
    return dict(sorted(found.items()))


def _files(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path → SHA-256), symbolic links not followed."""
    digests = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise OSError(f"unexpected link {path}")
        if path.is_file():
            digests[path.relative_to(folder).as_posix()] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return digests


def cached(entry: Path, digest: str) -> bool:
    """Whether the cache entry ``entry`` holds a whole bundle of pages with ``digest``."""
    try:
        stamp = json.loads((entry / STAMP).read_text(encoding="utf-8"))
        return (
            isinstance(stamp, dict)
            and stamp.get("pages") == digest
            and stamp.get("files") == _files(entry / "bundle")
            and bool(stamp["files"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def index_slice(site: Path, part: _Slice, entry: Path) -> int:
    """Index ``part``'s pages into ``entry/bundle`` and stamp it; return filter files written."""
    shutil.rmtree(entry, ignore_errors=True)
    entry.mkdir(parents=True)
    bundle = entry / "bundle"
    search_index.run_pagefind(site, part.pages, bundle, entry / "input")
    done = search_index.stabilize(bundle)
    search_index.prune(bundle)
    stamp = {"pages": part.digest.hexdigest(), "files": _files(bundle)}
    temporary = entry / f".{STAMP}.tmp"
    temporary.write_text(json.dumps(stamp, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temporary, entry / STAMP)
    return done.filters


def _link_tree(source: Path, target: Path) -> None:
    """A copy of ``source`` at ``target`` made of hard links (copies where linking fails)."""
    for path in sorted(source.rglob("*")):
        destination = target / path.relative_to(source)
        if path.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, destination)
        except OSError:
            shutil.copyfile(path, destination)


def _manifest_text(names: Iterable[str]) -> str:
    return json.dumps({"slices": [f"{name}/" for name in names]}, indent=1) + "\n"


def build(site: Path, cache: Path | None = None) -> Outcome:
    """Index ``site`` into ``site/pagefind/`` (replaced whole): one bundle per slice and the
    manifest. With ``cache``, slices whose pages did not change are taken from it."""
    if not site.is_dir():
        raise SearchIndexError("no such folder", path=str(site), hint="build it with Hugo first")
    parts = split(site)
    if not parts:
        raise SearchIndexError("no page to index", path=str(site), hint="build it with Hugo first")
    with tempfile.TemporaryDirectory(prefix=f".{site.name}.search-", dir=site.parent) as tmp:
        store = cache if cache is not None else Path(tmp)
        store.mkdir(parents=True, exist_ok=True)
        outcome = Outcome(slices=list(parts))
        stale = [p for p in parts.values() if not cached(store / p.name, p.digest.hexdigest())]
        outcome.indexed = [p.name for p in stale]
        outcome.reused = [name for name in parts if name not in outcome.indexed]
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            counts = list(pool.map(lambda p: index_slice(site, p, store / p.name), stale))
        outcome.filters = sum(counts)
        for entry in sorted(store.iterdir()):
            if entry.name not in parts:
                outcome.dropped.append(entry.name)
                (shutil.rmtree if entry.is_dir() else Path.unlink)(entry)
        bundle = site / "pagefind"
        shutil.rmtree(bundle, ignore_errors=True)
        for name in parts:
            _link_tree(store / name / "bundle", bundle / name)
        (bundle / MANIFEST).write_text(_manifest_text(parts), encoding="utf-8")
    return outcome
