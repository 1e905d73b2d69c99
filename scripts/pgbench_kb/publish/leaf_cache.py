"""The leaves ``kb render`` lays out apart (``content/runs/<id>.md`` and
``content/groups/<id>.md``): where each one's page goes, and the cache of those laid out by
earlier builds, keyed by the fingerprint of what every leaf depends on (``hugo_build.py`` says
how a build uses them)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

#: The sections whose pages are leaves (one file per page, nothing lists them).
LEAF_SECTIONS = ("runs", "groups")
STATE_NAME = "state.json"
STATE_FORMAT = "pgbench-kb/render/1"


def is_leaf(relative: str) -> bool:
    """``runs/x.md`` and ``groups/x.md`` (content-relative, one level): a leaf page."""
    section, _, name = relative.partition("/")
    return (
        section in LEAF_SECTIONS
        and "/" not in name
        and name.endswith(".md")
        and (not name.startswith("_"))
    )


def leaf_folder(relative: str) -> str:
    """The folder of a leaf's page: ``runs/Some-Id.md`` → ``runs/some-id`` (the permalinks of
    config.toml, lower-cased as Hugo does)."""
    section, _, name = relative.partition("/")
    return f"{section}/{name[: -len('.md')].lower()}"


def leaf_output(relative: str) -> str:
    """Where Hugo writes a leaf: ``runs/Some-Id.md`` → ``runs/some-id/index.html``."""
    return f"{leaf_folder(relative)}/index.html"


def cached_name(relative: str) -> str:
    """A leaf's HTML in the cache: one flat file per page (``runs/some-id.html``), as making
    13,000 folders costs seconds on a slow disk."""
    return f"{leaf_folder(relative)}.html"


def write_json(path: Path, value: Any) -> None:
    """Written whole or not at all (a build cut off leaves the old file or none)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(value, sort_keys=True, indent=1), encoding="utf-8")
    partial.replace(path)


class LeafCache:
    """Leaves laid out by earlier builds: ``pages/<output>`` and ``state.json`` (the
    fingerprint, and each leaf's digest). A leaf is in the state only while its HTML in
    ``pages/`` is the layout of that digest: the state is saved without the leaves about to
    change before they change, so a build cut off anywhere lays them out again."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.folder = folder
        self.pages = folder / "pages"
        self.file = folder / STATE_NAME
        self.fingerprint = fingerprint
        self.cold = False
        try:
            state = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state = None
        if (
            isinstance(state, dict)
            and state.get("format") == STATE_FORMAT
            and state.get("fingerprint") == fingerprint
            and isinstance(state.get("leaves"), dict)
        ):
            self.leaves: dict[str, str] = {str(k): str(v) for k, v in state["leaves"].items()}
        else:
            self.leaves = {}
            self.cold = True
            shutil.rmtree(self.pages, ignore_errors=True)

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(
            self.file,
            {"format": STATE_FORMAT, "fingerprint": self.fingerprint, "leaves": self.leaves},
        )

    def stale(self, leaves: dict[str, str]) -> tuple[list[str], list[str]]:
        """(leaves to lay out again, leaves of pages that are gone)."""
        changed = [
            relative
            for relative, digest in leaves.items()
            if self.leaves.get(relative) != digest
            or not (self.pages / cached_name(relative)).is_file()
        ]
        gone = [relative for relative in self.leaves if relative not in leaves]
        return changed, gone

    def forget(self, relatives: list[str]) -> None:
        for relative in relatives:
            self.leaves.pop(relative, None)
        self.save()

    def drop(self, relative: str) -> None:
        """Remove a leaf's HTML."""
        (self.pages / cached_name(relative)).unlink(missing_ok=True)
