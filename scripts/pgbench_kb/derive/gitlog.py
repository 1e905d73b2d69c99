"""Last change of each data file and page, and the recent changes, from ``git log``.

One ``git log`` call for the whole tree. Outside a git repository (a tarball, a test folder)
there is no history: pages then simply say nothing about their last change, and the build still
succeeds.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

#: How many commits the recent-changes page lists.
RECENT = 50
SEPARATOR = "\x1e"
WATCHED = ("data/runs", "content", "data/claims.yaml", "data/answers.yaml")


def history(root: Path) -> dict[str, Any]:
    """``{"files": {path: change}, "recent": [change + "paths"]}``; a change is
    ``{"commit", "short", "date", "subject"}`` (date as YYYY-MM-DD, in the author's zone)."""
    empty: dict[str, Any] = {"files": {}, "recent": []}
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return empty
    if inside.returncode != 0:
        return empty
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "log",
            "--no-merges",
            "--relative",
            f"--format={SEPARATOR}%H%x00%h%x00%ad%x00%s",
            "--date=short",
            "--name-status",
            "--",
            *WATCHED,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        return empty
    files: dict[str, dict[str, str]] = {}
    recent = []
    for block in done.stdout.split(SEPARATOR)[1:]:
        head, _, names = block.partition("\n")
        commit, short, date, subject = [*head.split("\x00"), "", "", "", ""][:4]
        change = {"commit": commit, "short": short, "date": date, "subject": subject}
        statuses = [line.split("\t") for line in names.splitlines() if line.strip()]
        changed = [(fields[0][:1], fields[-1].strip()) for fields in statuses if len(fields) >= 2]
        paths = [path for _, path in changed]
        for path in paths:
            files.setdefault(path, change)
        if len(recent) < RECENT:
            recent.append(
                change
                | {
                    "paths": paths[:20],
                    "more": max(0, len(paths) - 20),
                    "summary": summary(changed),
                }
            )
    return {"files": files, "recent": recent}


#: What a changed file is, for the recent-changes page: (path prefix or name, one, many).
KINDS = (
    ("data/runs/", "run file", "run files"),
    ("content/hardware/", "hardware note", "hardware notes"),
    ("content/guides/", "guide", "guides"),
    ("data/claims.yaml", "the sources' claims", "the sources' claims"),
    ("data/answers.yaml", "the answers' text", "the answers' text"),
    ("content/", "page", "pages"),
)
VERBS = {"A": "added", "M": "changed", "D": "removed", "R": "renamed", "C": "copied"}


def summary(changed: list[tuple[str, str]]) -> str:
    """What a commit did to the data, in words: ``3 run files added; 1 hardware note changed``."""
    counts: dict[tuple[str, str], int] = {}
    for status, path in changed:
        for prefix, _one, _many in KINDS:
            if path.startswith(prefix):
                verb = VERBS.get(status, "changed")
                key = (prefix, verb)
                counts[key] = counts.get(key, 0) + 1
                break
    parts = []
    for (prefix, verb), n in counts.items():
        one, many = next((o, m) for p, o, m in KINDS if p == prefix)
        if one == many:
            parts.append(f"{one} {verb}")
        else:
            parts.append(f"{n:,} {one if n == 1 else many} {verb}")
    return "; ".join(parts)
