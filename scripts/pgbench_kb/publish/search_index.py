"""The search index of a built site: Pagefind, then its filter index put in a fixed order.

Pagefind (1.5) collects filter values in hash maps seeded at random, so two indexings of the
same pages write the filter files (``pagefind/filter/*.pf_filter``) with their values in a
different order, hence under different names, and the metadata file
(``pagefind.<hash>.pf_meta``) lists the filters in a different order (Pagefind issue #638). The
search itself does not depend on either order: Pagefind's web code reads filter values into
a sorted map and filter names into a map. So after Pagefind ran, ``stabilize`` rewrites these
files with values and filters sorted by name, names them by the hash of their new bytes as
Pagefind does (so a browser cache never mixes two versions), and points
``pagefind-entry.json`` at the new metadata file. Every other file is left as Pagefind wrote it.

Each rewritten file is first read back and re-encoded unchanged; if that does not give the
bytes Pagefind wrote (a Pagefind upgrade changed the format), nothing is rewritten and
``SearchIndexError`` says so.

Pagefind also writes its own search UIs and a highlighting script, which our search page
(``static/js/search.js`` over ``pagefind.js``) never loads, and the search code of every
language it ships besides the site's; ``prune`` removes those files.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.errors import SearchIndexError
from pgbench_kb.publish import cbor

#: Every Pagefind index file starts with this, inside its gzip compression.
SIGNATURE = b"pagefind_dcd"
#: The Pagefind version whose formats this module was written against (requirements.lock).
KNOWN_VERSION = "1.5.2"
#: Positions in the metadata record (``MetaIndex`` in Pagefind's index_metadata.rs; 1.5 adds a
#: sixth, the meta field names, written in order already).
META_FILTERS, META_SORTS = 3, 4


#: Pagefind's marker of the part of a page to index (on ``<main>`` in our layouts).
MARKER = b"data-pagefind-body"
#: A page is read in pieces of this size (one piece for nearly every page), and no further
#: than the first piece holding the marker.
READ_SIZE = 1 << 16
#: What Pagefind writes that our search page never loads: its bundled UIs (``pagefind-ui``,
#: ``pagefind-component-ui``, ``pagefind-modular-ui``, each ``.js`` and ``.css``) and the
#: script that highlights words on a result page.
UNUSED = ("pagefind-*ui.js", "pagefind-*ui.css", "pagefind-highlight.js")


@dataclass(frozen=True)
class Rewritten:
    """What ``build`` did: filter files written, index files (old names) removed, and unused
    files of Pagefind's bundle removed."""

    filters: int
    removed: int
    pruned: int = 0


def pagefind_executable() -> Path:
    """The Pagefind binary of the ``pagefind_bin`` wheel (its Python wrapper prints a banner)."""
    import pagefind_bin

    return pagefind_bin.get_executable()


def html_files(site: Path) -> list[str]:
    """The path of every ``.html`` file under ``site`` (symbolic links not followed), sorted."""
    found: list[str] = []
    folders = [str(site)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif entry.name.endswith(".html") and entry.is_file():
                    found.append(entry.path)
    return sorted(found)


def is_marked(page: Path | str, buffer: bytearray | None = None) -> bool:
    """Whether ``page`` holds Pagefind's marker anywhere. It is read in pieces of
    ``len(buffer)`` bytes (``READ_SIZE`` unless a buffer is given to reuse), each holding the
    last bytes of the one before in case the marker spans two, and no further than the first
    piece holding the marker; a page without it is read whole, since it could be anywhere."""
    buffer = bytearray(READ_SIZE) if buffer is None else buffer
    view, overlap = memoryview(buffer), len(MARKER) - 1
    descriptor = os.open(page, os.O_RDONLY)
    try:
        kept = 0
        while True:
            filled = kept
            while filled < len(buffer) and (read := os.readv(descriptor, [view[filled:]])):
                filled += read
            if buffer.find(MARKER, 0, filled) >= 0:
                return True
            if filled < len(buffer):
                return False
            buffer[:overlap] = buffer[-overlap:]
            kept = overlap
    finally:
        view.release()
        os.close(descriptor)


def pages_to_index(site: Path) -> list[Path]:
    """The HTML files Pagefind would index: those marked ``data-pagefind-body`` once any page
    is (Pagefind's own rule), else all of them."""
    pages, buffer = html_files(site), bytearray(READ_SIZE)
    marked = [page for page in pages if is_marked(page, buffer)]
    return [Path(page) for page in marked or pages]


def run_pagefind(site: Path, pages: list[Path], output: Path, mirror: Path) -> None:
    """Index ``pages`` (under ``site``, a folder Hugo wrote) into the bundle ``output``;
    Pagefind's own errors go to stderr as it writes them.

    Pagefind reads and parses every HTML file of the folder it is given, even those it will
    not index; at 10,000 runs most pages are repeats found through their configuration's
    page. So it is given ``mirror``, a folder holding only ``pages`` (hard links, at the same
    paths, so every URL is the same), removed afterwards."""
    shutil.rmtree(mirror, ignore_errors=True)
    try:
        for page in pages:
            target = mirror / page.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(page, target)
            except OSError:
                shutil.copyfile(page, target)
        done = subprocess.run(
            [str(pagefind_executable()), "--site", str(mirror), "--output-path",
             str(output), "--silent"]
        )  # fmt: skip
    finally:
        shutil.rmtree(mirror, ignore_errors=True)
    if done.returncode != 0:
        raise SearchIndexError(
            f"Pagefind failed (exit status {done.returncode})",
            path=str(site),
            hint="its message is above",
        )


def pagefind_hash(data: bytes) -> str:
    """Pagefind's ``full_hash``: SHA-1 with each byte written as hex without a leading zero."""
    return "".join(format(byte, "x") for byte in hashlib.sha1(data).digest())


def read_index_file(path: Path) -> cbor.Item:
    """The CBOR record of a Pagefind ``.pf_meta`` or ``.pf_filter`` file, checked to
    re-encode to the very bytes Pagefind wrote."""
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:
        raise SearchIndexError(f"cannot read: {exc}", path=str(path)) from exc
    if not data.startswith(SIGNATURE):
        raise SearchIndexError("not a Pagefind index file (no signature)", path=str(path))
    body = data[len(SIGNATURE) :]
    try:
        item = cbor.decode(body)
    except (cbor.CborError, UnicodeDecodeError) as exc:
        raise SearchIndexError(f"unexpected Pagefind format: {exc}", path=str(path)) from exc
    if cbor.encode(item) != body:
        raise SearchIndexError(
            "unexpected Pagefind format: the file does not re-encode to the same bytes",
            path=str(path),
            hint=f"this code reads Pagefind {KNOWN_VERSION}'s format",
        )
    return item


def _write_atomic(path: Path, data: bytes) -> None:
    """``data`` into ``path`` whole or not at all (a temporary file renamed into place)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def index_file_bytes(item: cbor.Item) -> bytes:
    """``item`` as Pagefind writes it: signature + CBOR, gzip-compressed (no time stamp)."""
    return gzip.compress(SIGNATURE + cbor.encode(item), compresslevel=9, mtime=0)


def short_name(language: str, data: bytes, taken: set[str]) -> str:
    """``en_1a2b3c4`` for a filter file, lengthened while another file has it (as Pagefind)."""
    full = f"{language}_{pagefind_hash(data)}"
    length = len(language) + 8
    while full[:length] in taken and length < len(full):
        length += 1
    return full[:length]


def _is_pairs(items: Any, second: type) -> bool:
    """Whether ``items`` is a list of ``[str, second]`` pairs."""
    return isinstance(items, list) and all(
        isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and isinstance(pair[1], second)
        for pair in items
    )


def _sorted_filter(record: Any, path: Path) -> list[Any]:
    """A filter record ``[name, [[value, [pages]], …]]`` with its values sorted."""
    if not (isinstance(record, list) and len(record) == 2 and _is_pairs(record[1], list)):
        raise SearchIndexError("unexpected Pagefind filter record", path=str(path))
    name, values = record
    return [name, sorted(values, key=lambda pair: pair[0])]


@dataclass
class _Plan:
    """One language's rewrite, worked out before anything is written."""

    meta_hash: str
    writes: dict[Path, cbor.Item]
    old: set[Path]


def plan_language(bundle: Path, language: str, meta_hash: str) -> _Plan:
    """Read one language's metadata and filter files; return what to write in their place."""
    meta_path = bundle / f"pagefind.{meta_hash}.pf_meta"
    meta = read_index_file(meta_path)
    if not (
        isinstance(meta, list)
        and len(meta) >= 5
        and isinstance(meta[0], str)
        and _is_pairs(meta[META_FILTERS], str)
        and _is_pairs(meta[META_SORTS], list)
    ):
        raise SearchIndexError("unexpected Pagefind metadata record", path=str(meta_path))
    old = {meta_path}
    new_filters: list[cbor.Item] = []
    writes: dict[Path, cbor.Item] = {}
    taken: set[str] = set()
    for name, filter_hash in sorted(meta[META_FILTERS], key=lambda pair: pair[0]):
        path = bundle / "filter" / f"{filter_hash}.pf_filter"
        record = _sorted_filter(read_index_file(path), path)
        new_hash = short_name(language, cbor.encode(record), taken)
        taken.add(new_hash)
        old.add(path)
        writes[bundle / "filter" / f"{new_hash}.pf_filter"] = record
        new_filters.append([name, new_hash])
    meta[META_FILTERS] = new_filters
    meta[META_SORTS] = sorted(meta[META_SORTS], key=lambda pair: pair[0])
    new_meta_hash = f"{language}_{pagefind_hash(cbor.encode(meta))[: len(language) + 8]}"
    writes[bundle / f"pagefind.{new_meta_hash}.pf_meta"] = meta
    return _Plan(meta_hash=new_meta_hash, writes=writes, old=old)


def stabilize(bundle: Path) -> Rewritten:
    """Put the filter index of the Pagefind bundle ``bundle`` (``public/pagefind``) in a fixed
    order; see the module's docstring. Everything is read and checked before anything is
    written; new files are written whole, then the entry file names them, then the files it
    no longer names are removed: at no point does the entry name a missing or partial file."""
    entry_path = bundle / "pagefind-entry.json"
    try:
        text = entry_path.read_text(encoding="utf-8")
        entry = json.loads(text)
    except (OSError, ValueError) as exc:
        raise SearchIndexError(f"cannot read: {exc}", path=str(entry_path)) from exc
    if _entry_text(entry) != text:
        raise SearchIndexError(
            "unexpected Pagefind format: the file does not re-encode to the same text",
            path=str(entry_path),
            hint=f"this code reads Pagefind {KNOWN_VERSION}'s format",
        )
    languages = entry.get("languages")
    if not (isinstance(languages, dict) and all("hash" in i for i in languages.values())):
        raise SearchIndexError("unexpected Pagefind entry: no languages", path=str(entry_path))
    plans = {lang: plan_language(bundle, lang, info["hash"]) for lang, info in languages.items()}
    written: set[Path] = set()
    for language, plan in plans.items():
        for path, item in plan.writes.items():
            _write_atomic(path, index_file_bytes(item))
            written.add(path)
        languages[language]["hash"] = plan.meta_hash
    _write_atomic(entry_path, _entry_text(entry).encode("utf-8"))
    removed = set().union(*(plan.old for plan in plans.values())) - written
    for path in removed:
        path.unlink()
    filters = sum(len(plan.writes) - 1 for plan in plans.values())
    return Rewritten(filters=filters, removed=len(removed))


def _entry_text(entry: dict[str, Any]) -> str:
    """``pagefind-entry.json`` as Pagefind writes it (serde_json: compact, UTF-8)."""
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def unused_files(bundle: Path) -> list[Path]:
    """The files of Pagefind's bundle that our search page never loads: its bundled UIs, its
    highlighting script, and the search code (``wasm.<language>.pagefind``) of every language
    ``pagefind-entry.json`` does not name."""
    entry_path = bundle / "pagefind-entry.json"
    try:
        entry = json.loads(entry_path.read_text(encoding="utf-8"))
        # pagefind.js loads wasm.<the language's "wasm">.pagefind, or wasm.unknown.pagefind.
        wasm = {
            f"wasm.{info.get('wasm') or 'unknown'}.pagefind" for info in entry["languages"].values()
        }
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        raise SearchIndexError(f"cannot read: {exc}", path=str(entry_path)) from exc
    unused = {path for pattern in UNUSED for path in bundle.glob(pattern)}
    unused |= {path for path in bundle.glob("wasm.*.pagefind") if path.name not in wasm}
    return sorted(unused)


def prune(bundle: Path) -> int:
    """Remove ``unused_files`` of ``bundle``; return how many."""
    unused = unused_files(bundle)
    for path in unused:
        path.unlink()
    return len(unused)


def build(site: Path) -> Rewritten:
    """Index ``site`` with Pagefind into one bundle, ``site/pagefind/`` (replaced whole), make
    the result byte-stable and remove what our search page does not load. ``kb index`` builds
    the same bundle through a cache (``publish/slices.py``)."""
    if not site.is_dir():
        raise SearchIndexError("no such folder", path=str(site), hint="build it with Hugo first")
    bundle = site / "pagefind"
    # Pagefind adds to an existing bundle and never removes a file of an earlier run.
    shutil.rmtree(bundle, ignore_errors=True)
    run_pagefind(site, pages_to_index(site), bundle, site.parent / f".{site.name}.pagefind-input")
    done = stabilize(bundle)
    return Rewritten(filters=done.filters, removed=done.removed, pruned=prune(bundle))
