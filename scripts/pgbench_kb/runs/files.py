"""The one list of a project's files: run files, raw files, hardware notes and hand-written
pages, as every stage reads them (``kb check``, ``kb derive``, ``kb compare``, ``kb diff`` and
``kb import``'s duplicate search).

Regression (issue #33, attack 1): ``kb check`` skipped dot-named files while derive, analyze and
diff listed ``data/runs/**/*.yaml`` with ``rglob``, which also finds ``.ID.yaml``: a hidden run
file nobody checked was published and flipped a claim's verdict. Now there is one rule:

- a name starting with a dot (a file or a folder) anywhere under ``data/`` or ``content/`` is
  refused by ``kb check`` (``hidden_entries``), and ``kb derive`` refuses to build while one
  exists;
- the listings below never hold a path with a dot-named part, so no stage reads one even where
  the refusal was skipped;
- the one exception is ``kb import``'s own temporary file (``.NAME.XXXX.tmp``, made beside the
  file it becomes and renamed or removed before ``kb import`` ends): one left by a killed import
  is not read by any stage, and ``kb check`` reports it as a stray file to remove
  (``check.collect.stray_files``) rather than as a dot name.

Folders are walked without following symbolic links (``kb check`` refuses links under
``content/`` and ``data/``, and ``kb derive`` refuses to build while one exists).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from pgbench_kb.runs.runfile import HARDWARE_DIR, RAW_DIR, RUNS_DIR

#: What a run file's name ends with (``kb import`` writes ``.yaml``).
RUN_SUFFIXES = (".yaml", ".yml")
#: The top folders a pull request contributes to, where dot names are refused.
CONTRIBUTED_TOPS = ("content", "data")
#: ``kb import``'s temporary files (``runfile.write_new``: ``.NAME.XXXXXXXX.tmp``).
IMPORT_TEMP_PREFIX = "."
IMPORT_TEMP_SUFFIX = ".tmp"
DOT_NAME_FIELD = "file name"


def is_hidden(name: str) -> bool:
    """Whether a file or folder name starts with a dot (hidden from ``ls``, skipped by some
    tools and not others: refused under ``content/`` and ``data/``)."""
    return name.startswith(".")


def is_import_temp(name: str) -> bool:
    """Whether ``name`` is one of ``kb import``'s temporary files (a stray one when seen)."""
    return name.startswith(IMPORT_TEMP_PREFIX) and name.endswith(IMPORT_TEMP_SUFFIX)


def hidden_part(relative: PurePosixPath | Path) -> str | None:
    """The first dot-named part of ``relative``, or None."""
    for part in relative.parts:
        if part not in (".", "..") and is_hidden(part):
            return part
    return None


def dot_name_message(name: str, *, folder: bool = False) -> str:
    """What ``kb check`` says of a dot-named entry (field ``file name``)."""
    kind = "a folder" if folder else "a file"
    return (
        f"{name!r} is {kind} whose name starts with a dot: hidden names are skipped by some "
        "tools and read by others, so none is allowed under content/ or data/; rename it "
        "without the leading dot"
    )


def walk_files(folder: Path) -> Iterator[Path]:
    """Every regular file or link under ``folder`` whose path from it has no dot-named part,
    not descending into links; nothing when ``folder`` is no folder."""
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if is_hidden(entry.name):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                stack.append(Path(entry.path))
            elif stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                yield Path(entry.path)


def _sorted(paths: Iterator[Path]) -> list[Path]:
    return sorted(paths, key=lambda p: p.parts)


def run_files(root: Path, runs_dir: Path | None = None) -> list[Path]:
    """The run files under ``runs_dir`` (default ``ROOT/data/runs``), in path order."""
    folder = runs_dir if runs_dir is not None else root / RUNS_DIR
    return _sorted(p for p in walk_files(folder) if p.suffix in RUN_SUFFIXES)


def raw_files(root: Path) -> list[Path]:
    """Every file under ``ROOT/data/raw``, in path order."""
    return _sorted(walk_files(root / RAW_DIR))


def note_files(root: Path) -> list[Path]:
    """The hardware notes, ``ROOT/content/hardware/SLUG.md`` (not the section's ``_index.md``),
    in name order."""
    folder = root / HARDWARE_DIR
    return _sorted(
        p
        for p in walk_files(folder)
        if p.parent == folder and p.suffix == ".md" and not p.name.startswith("_")
    )


def content_pages(root: Path) -> list[Path]:
    """Every Markdown page under ``ROOT/content``, in path order."""
    return _sorted(p for p in walk_files(root / "content") if p.suffix == ".md")


def hidden_entries(root: Path, tops: tuple[str, ...] = CONTRIBUTED_TOPS) -> list[tuple[Path, bool]]:
    """Each dot-named file or folder under ``ROOT/<top>`` (path, is a folder), outermost only
    (what is inside a hidden folder is not listed again), ``kb import``'s temporary files
    left out; in path order."""
    found = []
    for top in tops:
        stack = [root / top]
        while stack:
            current = stack.pop()
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            for entry in entries:
                try:
                    is_dir = stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode)
                except OSError:
                    is_dir = False
                if is_hidden(entry.name):
                    if is_dir or not is_import_temp(entry.name):
                        found.append((Path(entry.path), is_dir))
                elif is_dir:
                    stack.append(Path(entry.path))
    return sorted(found, key=lambda item: item[0].parts)
