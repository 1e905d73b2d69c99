"""What the build caches of ``kb check`` and ``kb derive`` key their entries by: a file's
stamp (size, modification time, inode) and a digest of the package's code."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def file_stamp(path: str | Path) -> tuple[int, int, int] | None:
    """``(size, mtime_ns, inode)`` of ``path``, or None when it cannot be read."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino)


def code_fingerprint() -> str:
    """A digest of the package's code, schemas and settings lists: new code, new results."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in {".py", ".json", ".tsv"} and "__pycache__" not in path.parts:
            digest.update(path.relative_to(PACKAGE).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()
