"""Where a bench's throwaway server keeps its files, and who is credited, said before it starts.

``scripts/bench.sh`` runs it twice::

    python -m pgbench_kb.bench.placement --profile NAME|FILE --root DIR [--wal-dir DIR]
    python -m pgbench_kb.bench.placement --credit --root DIR [--meta FILE] [--set KEY=VALUE]…

The first, before it creates anything, prints on stdout the WAL directory to use (an empty
line: the WAL stays in the data directory): ``--wal-dir`` (``WAL_DIR=`` of ``make bench``) wins
over the profile's ``wal_dir:`` key; a relative ``wal_dir`` is relative to the profile's folder.
The directory must exist and be writable; the bench makes a folder of its own inside it and
removes it at the end. A profile that cannot be read is left to ``kb plan`` to report.

The second, when the first trial is about to start, prints who the runs will be credited to:
the ``provenance.contributor`` of ``--set``/``--meta``, else ``git config user.name``, else the
login name — and how to change it.

Exit: 0, or 1 with one ``error: …`` line on stderr (a wal_dir that is not a writable directory).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pgbench_kb.bench.profile import resolve_profile_path
from pgbench_kb.errors import KbError, ProfileError
from pgbench_kb.runs.import_declared import declared_values
from pgbench_kb.runs.import_files import contributor_name, git_user_name
from pgbench_kb.runs.runfile import load_yaml_file


def profile_wal_dir(profile: str) -> Path | None:
    """The ``wal_dir`` of a profile (absolute; relative to the profile's folder), or None."""
    path = resolve_profile_path(profile)
    try:
        loaded = load_yaml_file(path) if path.is_file() else None
    except KbError:
        loaded = None
    if loaded is None:
        return None  # kb plan reports a missing or unreadable profile in its own words
    data = loaded.data if isinstance(loaded.data, dict) else {}
    value = data.get("wal_dir")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ProfileError(
            "expected the path of a directory",
            path=str(path),
            line=loaded.line_of("wal_dir"),
            field="wal_dir",
            hint="e.g. wal_dir: /mnt/wal (on the device the WAL should be measured on)",
        )
    return (path.parent / os.path.expanduser(value)).resolve()


def wal_dir(profile: str, given: str | None) -> Path | None:
    """The WAL directory of this bench: ``given`` (--wal-dir) else the profile's, checked."""
    chosen = Path(given).expanduser().resolve() if given else profile_wal_dir(profile)
    if chosen is None:
        return None
    where = "--wal-dir (WAL_DIR=)" if given else "the profile's wal_dir"
    if not chosen.is_dir():
        raise ProfileError(
            f"{chosen} is not a directory",
            field=where,
            hint="create it on the device the WAL should be on, e.g. mkdir -p /mnt/wal",
        )
    if not os.access(chosen, os.W_OK | os.X_OK):
        raise ProfileError(
            f"{chosen} is not writable by this user",
            field=where,
            hint="pick a directory you can write to, or give it to this user",
        )
    return chosen


def credit_line(root: Path, meta: Path | None, sets: Sequence[str]) -> str:
    """``credited as: NAME (from …; change with …)``."""
    how = "change with --set provenance.contributor=… or CONTRIBUTOR=…"
    declared = declared_values(meta, list(sets), None)
    stated = (declared.get("provenance") or {}).get("contributor")
    if stated:
        return f"credited as: {stated} (as you declared; {how})"
    name = git_user_name(root)
    if name:
        return f"credited as: {name} (from git config user.name; {how})"
    name = contributor_name(root)
    unset = "your login name: git config user.name is not set"
    return f"credited as: {name or '(nobody)'} ({unset}; {how})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pgbench_kb.bench.placement")
    parser.add_argument("--profile")
    parser.add_argument("--credit", action="store_true")
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--wal-dir", default=None)
    parser.add_argument("--meta", type=Path)
    parser.add_argument("--set", dest="sets", action="append", default=[])
    args, _ = parser.parse_known_args(argv)  # --mask-hostnames and the like: not ours
    try:
        if args.credit:
            print(credit_line(args.root, args.meta, args.sets))
            return 0
        chosen = wal_dir(args.profile or "default", args.wal_dir or None)
    except KbError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(chosen or "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
