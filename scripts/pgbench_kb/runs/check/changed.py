"""``kb check --changed [BASE]``: the contributor's own files first, apart from the project's
standing warnings.

The files changed since BASE (default ``origin/main`` when that branch is known, else ``main``)
are those ``git diff`` lists against the merge base of BASE and HEAD — committed or not — and
the untracked ones. The whole tree is still checked (a change can break a rule across files),
but the report shows the problems of the changed files first; errors elsewhere are shown
after them, and the warnings of files the contributor did not touch are only counted. In a
changed file a smoke run is an error, not a warning: a pull request may not add one.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from pgbench_kb.errors import UsageError
from pgbench_kb.runs.check.report import Finding, Report, format_report, note_lines
from pgbench_kb.runs.check.smoke_rules import SMOKE_FIELD, SMOKE_MESSAGE

DEFAULT_BASES = ("origin/main", "main")


@dataclass(frozen=True)
class Changed:
    base: str
    files: frozenset[str]  # absolute, resolved paths


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(
            f"cannot run git: {exc}", field="--changed", hint="install git, or run kb check"
        ) from None


def changed_files(root: Path, base: str | None) -> Changed:
    """The files changed since ``base`` (or the first of DEFAULT_BASES git knows)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise UsageError(
            f"{root} is not in a git checkout",
            field="--changed",
            hint="run it in your clone, or check everything with kb check",
        )
    toplevel = Path(top.stdout.strip())
    candidates = (base,) if base else DEFAULT_BASES
    for name in candidates:
        found = _git(root, "merge-base", name, "HEAD")
        if found.returncode == 0:
            break
    else:
        raise UsageError(
            f"no branch {' or '.join(candidates)} to compare with",
            field="--changed",
            hint="name the branch your pull request goes to, e.g. kb check --changed main",
        )
    merge_base = found.stdout.strip()
    diff = _git(root, "diff", "--name-only", "--no-renames", "-z", merge_base, "--")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    names = [n for text in (diff.stdout, untracked.stdout) for n in text.split("\0") if n]
    files = frozenset(os.path.realpath(toplevel / n) for n in names)
    return Changed(base=name, files=files)


def _mine(finding: Finding, changed: Changed) -> bool:
    return os.path.realpath(finding.path) in changed.files


def _as_error_in_a_pull_request(finding: Finding) -> Finding:
    if finding.field == SMOKE_FIELD and finding.message == SMOKE_MESSAGE:
        return replace(finding, severity="error")
    return finding


def split_report(report: Report, changed: Changed) -> tuple[Report, Report]:
    """(the changed files' findings, the others'); a smoke run among the first is an error."""
    mine = [_as_error_in_a_pull_request(f) for f in report.findings if _mine(f, changed)]
    others = [f for f in report.findings if not _mine(f, changed)]
    return replace(report, findings=mine), replace(report, findings=others)


def format_changed(report: Report, changed: Changed) -> tuple[str, bool]:
    """The report with the changed files first; and whether anything is an error."""
    mine, others = split_report(report, changed)
    lines = [
        f"your files (changed since {changed.base}: {len(changed.files)} file(s)):",
        *(str(f) for f in mine.findings if f.severity != "note"),
        *note_lines(mine.notes_found),
        f"your files: {len(mine.errors)} error(s), {len(mine.warnings)} warning(s)",
    ]
    if others.errors:
        lines.append(f"errors in files you did not change: {len(others.errors)}")
        lines += [str(f) for f in others.errors]
    lines.append(
        f"standing warnings of files you did not change: {len(others.warnings)} "
        "(kb check for the list)"
    )
    total = format_report(replace(report, findings=mine.findings + others.findings))
    lines.append(total.splitlines()[-1])
    return "\n".join(lines) + "\n", bool(mine.errors or others.errors)
