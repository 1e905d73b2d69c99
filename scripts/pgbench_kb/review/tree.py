"""A commit's files read as data: its changed paths and its ``data/``, ``content/`` and
``config.toml`` written into a folder, without running, installing or importing anything of it.

``git archive`` is not used for the files: it applies the archived tree's own
``.gitattributes``, so a pull request adding ``data/runs/.gitattributes`` with
``x.yaml export-ignore`` would hide ``x.yaml`` from the review while the site built from the
same commit publishes it (and ``export-subst`` would rewrite a file). The blobs are read with
``git ls-tree`` and ``git cat-file`` instead, which apply no attribute; a symbolic link or a
submodule is not written and is reported (``Extracted.refused``).
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pgbench_kb.errors import KbError, UsageError

#: What the review reads of each side, as data: all that the analysis and the checks read.
REVIEWED = ("data", "content", "config.toml")
#: Modes of ``git ls-tree`` written as files.
FILE_MODES = {"100644", "100755"}
#: The most bytes of blobs one side may hold (the workflow's memory bound is the other limit).
MAX_TREE_BYTES = 2 * 1024**3
#: Git itself is run with no user or system configuration of the machine's (no pager, no
#: external diff, no text conversion) and without a prompt for credentials.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}


class GitError(KbError):
    """A revision that cannot be read from the repository."""


@dataclass
class Extracted:
    """What was written of one commit: how many files, and the paths that were not written
    because they are not plain files (a link, a submodule)."""

    files: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` (no configuration but the repository's own) and return its output;
    raise on failure. Bytes that are not UTF-8 (a file name can hold any) are kept as
    surrogate escapes, so such a name is still written and shown escaped, never a crash."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, env=GIT_ENV, check=False
    )
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(
            f"git {args[0]} failed: {lines[-1] if lines else 'no message'}",
            path=str(repo),
            hint="give revisions of this repository (git log --oneline)",
        )
    return done.stdout.decode("utf-8", errors="surrogateescape")


def commit_of(repo: Path, revision: str) -> str:
    """The full commit id ``revision`` names in ``repo``."""
    if revision.startswith("-"):
        raise UsageError(f"{revision!r} is not a revision", hint="e.g. kb review main HEAD")
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").strip()
    except GitError:
        raise GitError(
            f"{revision!r} is not a commit of the repository at {repo}",
            hint="give a branch, tag or commit (git log --oneline)",
        ) from None


def merge_base(repo: Path, base: str, head: str) -> str:
    """Where ``head`` left ``base``: what the pull request changes is measured from there."""
    return git(repo, "merge-base", base, head).strip()


def changed_paths(repo: Path, old: str, new: str) -> list[str]:
    """Every path that differs between two commits (added, changed, removed; a rename is a
    removal and an addition), NUL-separated so no name can forge another."""
    done = git(
        repo,
        "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
        old, new, "--",
    )  # fmt: skip
    return sorted(p for p in done.split("\0") if p)


def top_level(repo: Path, commit: str) -> set[str]:
    """The names at the top of a commit's tree."""
    done = git(repo, "ls-tree", "-z", "--name-only", commit)
    return {p for p in done.split("\0") if p}


def _entries(repo: Path, commit: str) -> list[tuple[str, str, str, int]]:
    """(mode, object, path, size) of every entry under ``REVIEWED`` in ``commit``."""
    done = git(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", *REVIEWED)
    entries = []
    for record in done.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, _kind, obj, size = meta.split()
        entries.append((mode, obj, path, int(size) if size.isdigit() else 0))
    return entries


def _safe(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts


def extract(repo: Path, commit: str, folder: Path) -> Extracted:
    """Write ``commit``'s files under ``REVIEWED`` into ``folder`` (which exists), as plain
    files only."""
    out = Extracted()
    files = []
    for mode, obj, path, size in _entries(repo, commit):
        if mode not in FILE_MODES:
            why = "a symbolic link" if mode == "120000" else f"not a plain file (mode {mode})"
            out.refused.append((path, why))
        elif not _safe(path):
            out.refused.append((path, "a path outside the tree"))
        else:
            files.append((obj, path, size))
    if sum(size for _obj, _path, size in files) > MAX_TREE_BYTES:
        raise GitError(
            f"the files under {', '.join(REVIEWED)} of {commit[:12]} hold more than "
            f"{MAX_TREE_BYTES // 1024**3} GiB",
            hint="a pull request that large is reviewed by hand",
        )
    if not files:
        return out
    _write_blobs(repo, files, folder)
    out.files = len(files)
    return out


def _write_blobs(repo: Path, files: list[tuple[str, str, int]], folder: Path) -> None:
    """Each blob through one ``git cat-file --batch``, written to its path under ``folder``."""
    request = "".join(f"{obj}\n" for obj, _path, _size in files).encode()
    process = subprocess.Popen(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=GIT_ENV,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin = process.stdin

    def feed() -> None:  # in a thread: git's answers fill the pipe while it is still asked
        stdin.write(request)
        stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    for obj, path, _size in files:
        header = process.stdout.readline().split()
        if len(header) != 3 or header[0].decode() != obj:
            process.kill()
            raise GitError(f"git cat-file gave no blob for {path}", path=str(repo))
        length = int(header[2])
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as stream:
            remaining = length
            while remaining:
                chunk = process.stdout.read(min(remaining, 1 << 20))
                if not chunk:
                    raise GitError(f"git cat-file stopped inside {path}", path=str(repo))
                stream.write(chunk)
                remaining -= len(chunk)
        process.stdout.read(1)  # the newline after each blob
    process.stdout.close()
    writer.join()
    if process.wait() != 0:
        raise GitError("git cat-file failed", path=str(repo))
