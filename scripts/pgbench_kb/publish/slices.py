"""The search index: one Pagefind bundle for the whole site, kept in a cache and indexed
again only when a page it indexes changed.

Until issue #21 the pages were split into slices, one bundle per machine, so that adding a run
indexed two small slices again instead of the whole site; but the search page then loaded every
slice's ``pagefind.js``, WebAssembly, metadata and filters before it could answer (113
requests and about 1 MB on the day-one site, growing with every machine contributed). One
bundle answers in about 20 requests whatever the number of machines; it costs the time of
indexing every page after any change (see docs/performance.md).

The bundle is written at ``pagefind/`` (``pagefind/pagefind.js``). With a cache folder it is
kept there with a stamp: the digest of the indexed pages' paths and bytes (not their times:
Hugo rewrites every file) and the digest of every file of the bundle. A cached bundle whose
pages have the digest of its stamp, and whose files all have the digests the stamp lists, is
reused; otherwise the site is indexed again (a missing, partial or altered cache entry is
never trusted). The code keeps the word "slice" for the one cached part (``SITE``), so that
the cache's layout and stamps stay those of a part.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pgbench_kb.errors import SearchIndexError
from pgbench_kb.publish import search_index

#: The stamp of a cached slice, written last.
STAMP = "stamp.json"
#: The one part of the index: every indexed page.
SITE = "site"
#: Pagefind processes at a time.
WORKERS = 2


@dataclass
class Outcome:
    """What ``build`` did: every slice's name, those indexed again, those reused from the
    cache, the cache entries removed (their pages are gone), and filter files written."""

    slices: list[str]
    indexed: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    filters: int = 0


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
        name = SITE
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


def build(site: Path, cache: Path | None = None) -> Outcome:
    """Index ``site`` into ``site/pagefind/`` (replaced whole): one bundle. With ``cache``, it
    is taken from there when no indexed page changed."""
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
        _link_tree(store / SITE / "bundle", bundle)
    return outcome
