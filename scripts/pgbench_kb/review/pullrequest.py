"""``kb review BASE HEAD``: the review of a pull request, computed by this checkout's code with
the pull request's files as data only.

The workflow (.github/workflows/review.yml) checks out the base branch — the code that runs —
fetches the pull request's commit without checking it out, and runs this. Both sides' files
(``data/``, ``content/``, ``config.toml``) are read out of git into a temporary folder
(``review.tree``: no attribute of the pull request's applies, no link is written); nothing of
the pull request is run, installed or imported. What the pull request changes is measured from
where it left the base (their merge base), so a base that moved on since is not counted as the
pull request removing its runs.

The result is the knowledge diff (``review.diff``) of the two sides, plus every changed path
accounted for (``review.paths``: refused, needing a maintainer's review by kind, or results)
and the words it changes, before and after (``review.texts``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from pgbench_kb.review.diff import diff_sides, read_side
from pgbench_kb.review.paths import account
from pgbench_kb.review.texts import changed_texts
from pgbench_kb.review.tree import changed_paths, commit_of, extract, merge_base, top_level
from pgbench_kb.runs.runfile import HARDWARE_DIR, RUNS_DIR


def _side(repo: Path, commit: str, folder: Path) -> list[tuple[str, str]]:
    """Write one side into ``folder``; return the paths refused as not plain files."""
    folder.mkdir()
    refused = extract(repo, commit, folder).refused
    for needed in (RUNS_DIR, HARDWARE_DIR):  # git keeps no empty folder; kb check needs both
        (folder / needed).mkdir(parents=True, exist_ok=True)
    return refused


def review(repo: Path, base: str, head: str) -> dict[str, Any]:
    """The review of ``head`` against ``base`` (revisions of the repository at ``repo``), as
    one JSON-ready object: ``kb diff``'s keys, plus ``paths``, ``texts`` and the commits."""
    base_commit, head_commit = commit_of(repo, base), commit_of(repo, head)
    fork = merge_base(repo, base_commit, head_commit)
    changed = changed_paths(repo, fork, head_commit)
    accounting = account(changed, top_level(repo, fork))
    with tempfile.TemporaryDirectory(prefix="kb-review-") as tmp:
        old, new = Path(tmp) / "base", Path(tmp) / "head"
        _side(repo, fork, old)
        for path, why in _side(repo, head_commit, new):
            accounting.refused.append((path, f"{why}: a pull request may bring plain files only"))
            if path in accounting.results:
                accounting.results.remove(path)
        found = diff_sides(read_side(old), read_side(new))
        texts = changed_texts(old, new, changed)
    found["format"] = "pgbench-kb/review/1"
    found["commits"] = {"base": fork, "head": head_commit}
    found["paths"] = accounting.as_json()
    found["texts"] = [{"what": t.what, "before": t.before, "after": t.after} for t in texts]
    return found


def refused(found: dict[str, Any]) -> bool:
    """Whether the pull request changes a path it may not (the review's exit status is 1)."""
    return bool(found.get("paths", {}).get("refused"))
