"""Last change of each data file and page, and the recent changes, from ``git log``.

One ``git log`` call for the whole tree. Outside a git repository (a tarball, a test folder)
there is no history: pages then simply say nothing about their last change, and the build still
succeeds.

The log is read with NUL separators (``-z``, ``%x00``) and every field is validated: a commit is
40 (or 64) hexadecimal digits and its short form a prefix of it, a date is ``YYYY-MM-DD``, a
status is one of git's letters, a path is under a watched folder and has no control character;
a subject has its control, bidi and zero-width characters written as escapes (``\x1e``) and is
cut at ``MAX_SUBJECT_CHARS``. A record that does not read so is left out, and the reading goes
on at the next commit. The pages link a change only as ``site.Params.repository`` (the
project's own repository, config.toml) + ``/commit/`` + the validated commit.

Regression (#33, attack 11): the log was read with ``\x1e`` between commits, so a ``\x1e`` in a
commit subject forged an entry on the changes page, with a "commit" that made its link resolve
to another repository.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pgbench_kb.runs.check.report import one_line

#: How many commits the recent-changes page lists.
RECENT = 50
WATCHED = ("data/runs", "content", "data/claims.yaml", "data/answers.yaml")
#: One commit's fields, NUL-separated (``-z`` ends the record with NUL too).
FORMAT = "%H%x00%h%x00%ad%x00%s"
COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
SHORT = re.compile(r"[0-9a-f]{4,64}")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
STATUS = re.compile(r"([ACDMRTUXB])\d{0,3}")
MAX_SUBJECT_CHARS = 200
MAX_PATH_CHARS = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _git_log(root: Path) -> str | None:
    """``git log``'s NUL-separated output for the watched paths, or None without history."""
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if inside.returncode != 0:
        return None
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "log",
            "-z",
            "--no-merges",
            "--relative",
            f"--format={FORMAT}",
            "--date=short",
            "--name-status",
            "--",
            *WATCHED,
        ],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
    )
    return done.stdout if done.returncode == 0 else None


def is_watched_path(path: str) -> bool:
    """A path git listed: relative, under a watched folder, no control character, no ``..``."""
    return (
        0 < len(path) <= MAX_PATH_CHARS
        and not _CONTROL.search(path)
        and ".." not in path.split("/")
        and any(path == w or path.startswith(w + "/") for w in WATCHED)
    )


def _change(fields: list[str]) -> dict[str, str] | None:
    """A commit's header fields (commit, short, date, subject) validated, or None."""
    commit, short, date, subject = fields
    if not COMMIT.fullmatch(commit) or not SHORT.fullmatch(short) or not commit.startswith(short):
        return None
    if not DATE.fullmatch(date):
        return None
    return {
        "commit": commit,
        "short": short,
        "date": date,
        "subject": one_line(subject, MAX_SUBJECT_CHARS),
    }


def _names(tokens: list[str], i: int) -> tuple[list[tuple[str, str]] | None, int]:
    """The (status letter, path) pairs of one commit from ``tokens[i]`` (git puts a newline
    before the first status), and where the next commit starts; None when they do not read."""
    changed: list[tuple[str, str]] = []
    if i >= len(tokens) or not tokens[i].startswith("\n"):
        return changed, i
    tokens = [tokens[i][1:], *tokens[i + 1 :]]
    start, i = i, 0
    while i < len(tokens) and (status := STATUS.fullmatch(tokens[i])) is not None:
        width = 2 if status[1] in "RC" else 1
        paths = tokens[i + 1 : i + 1 + width]
        if len(paths) != width or not all(is_watched_path(p) for p in paths):
            return None, start + i + 1
        changed.append((status[1], paths[-1]))
        i += 1 + width
    if not changed:
        return None, start + 1
    return changed, start + i


def read_log(output: str) -> Iterator[tuple[dict[str, str], list[tuple[str, str]]]]:
    """Each commit of ``git log -z --format=FORMAT --name-status`` output: its validated change
    and its (status letter, path) pairs. A record that does not read as one is skipped up to
    the next valid commit header."""
    tokens = output.split("\0")
    i = 0
    while i + 4 <= len(tokens):
        change = _change(tokens[i : i + 4])
        if change is None:
            i += 1  # not a commit's header here: look for the next one
            continue
        changed, i = _names(tokens, i + 4)
        if changed is not None:
            yield change, changed


def history(root: Path) -> dict[str, Any]:
    """``{"files": {path: change}, "recent": [change + "paths"]}``; a change is
    ``{"commit", "short", "date", "subject"}`` (date as YYYY-MM-DD, in the author's zone)."""
    output = _git_log(root)
    if output is None:
        return {"files": {}, "recent": []}
    files: dict[str, dict[str, str]] = {}
    recent = []
    for change, changed in read_log(output):
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
