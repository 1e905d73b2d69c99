"""The command: which files to check, checking them (in parallel when there are many), and the
report.

Besides run files and pages, ``kb check`` validates the other documents with a published schema
(bench profiles, ``data/claims.yaml``, ``data/answers.yaml``: ``runs.documents``); ``cli``
hands their checks in (``documents``), since the rules a schema cannot say belong to the stages
that read them.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pgbench_kb.parallel import fork_safe, map_in_workers
from pgbench_kb.runs.check.across import across_runs
from pgbench_kb.runs.check.content import check_page, contributed, page_kind
from pgbench_kb.runs.check.notes import check_note
from pgbench_kb.runs.check.report import Finding, Report, RunSummary
from pgbench_kb.runs.check.run import check_run, is_file
from pgbench_kb.runs.check.text import OWN_RUNS
from pgbench_kb.runs.check.top_level import check_tree
from pgbench_kb.runs.documents import DocumentKind
from pgbench_kb.runs.files import (
    DOT_NAME_FIELD,
    dot_name_message,
    hidden_entries,
    hidden_part,
    is_hidden,
    is_import_temp,
    note_files,
    walk_files,
)
from pgbench_kb.runs.runfile import (
    HARDWARE_DIR,
    RAW_DIR,
    RUNS_DIR,
)
from pgbench_kb.runs.stamps import code_fingerprint, file_stamp

PARALLEL_FROM = 400
RUN_SUFFIXES = {".yaml", ".yml"}
#: Per-file results, kept only where this folder already exists (``make site`` makes it).
CACHE_DIR = Path("build") / "cache"
CACHE_NAME = "check.pickle"


def _collect(paths: Sequence[str], root: Path) -> tuple[list[Path], list[Path], list[Finding]]:
    """The run files and notes to check, and the findings for paths that hold nothing to check.

    Named paths must each be a run file (``.yaml``), a hardware note (``.md``) or a folder with
    at least one of them. Without paths, ROOT's data/runs and content/hardware must both exist
    (a fresh project has them, empty); a missing one means ROOT is not a project root."""
    runs: list[Path] = []
    notes: list[Path] = []
    problems = []

    def problem(target: Path, message: str) -> None:
        problems.append(Finding(str(target), None, "(file)", message))

    if paths:
        targets = [Path(p) for p in paths]
    else:
        targets = [root / RUNS_DIR, root / HARDWARE_DIR]
        if not is_dir(root):
            problem(root, "--root is not a folder (give the project's folder)")
            return [], [], problems
        for target in targets:
            if not is_dir(target):
                problem(
                    target,
                    f"no {target.relative_to(root).as_posix()} folder here (give --root the "
                    "project's folder, the one holding data/runs and content/hardware)",
                )
        if problems:
            return [], [], problems
    for target in targets:
        if not paths and _linked(target, root):
            continue  # a link on the way: reported by the walk of content/ and data/, not read
        hidden = _hidden_name(target, root) if paths else None
        if hidden is not None:
            folder = hidden != target.name or is_dir(target)
            message = dot_name_message(hidden, folder=folder)
            problems.append(Finding(str(target), None, DOT_NAME_FIELD, message))
            continue
        if is_dir(target):
            found = 0
            if paths:
                problems.extend(
                    Finding(str(path), None, DOT_NAME_FIELD, dot_name_message(path.name, folder=d))
                    for path, d in hidden_entries(target, ("",))
                )
            for path in _sorted_files(target):
                if not is_file(path):
                    continue
                if path.suffix in RUN_SUFFIXES:
                    runs.append(path)
                    found += 1
                elif path.suffix == ".md" and path.name != "_index.md":
                    notes.append(path)
                    found += 1
            if not found and paths:
                problem(target, "no run files (.yaml) or hardware notes (.md) in this folder")
        elif not exists(target):
            problem(target, "no such file or folder")
        elif target.suffix in RUN_SUFFIXES:
            runs.append(target)
        elif target.suffix == ".md":
            notes.append(target)
        else:
            problem(target, "not a run file (.yaml), a hardware note (.md) or a folder")
    return runs, notes, problems


def _hidden_name(target: Path, root: Path) -> str | None:
    """The dot-named part of a named path below ROOT (only its own name when outside ROOT)."""
    try:
        relative = target.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return target.name if is_hidden(target.name) else None
    return hidden_part(relative)


def _sorted_files(folder: Path) -> list[Path]:
    """The files under ``folder`` as every stage lists them (no dot-named part)."""
    return sorted(walk_files(folder))


def _pages(paths: Sequence[str], root: Path, notes: list[Path]) -> list[tuple[str, Path]]:
    """The hand-written pages other than hardware notes to check: every one under ROOT's
    content/ without paths; the named ones (a named guide is checked as a guide)."""
    if not paths:
        return [
            (kind, path)
            for kind, path in contributed(root, ("content",)).pages
            if kind != "hardware"
        ]
    found = []
    for path in list(notes):
        try:
            relative = PurePosixPath(path.resolve().relative_to(root.resolve()).as_posix())
        except (ValueError, OSError):
            continue
        kind = page_kind(relative)
        if kind is not None and kind != "hardware":
            notes.remove(path)
            found.append((kind, path))
    return found


def _linked(target: Path, root: Path) -> bool:
    """Whether a folder between ROOT and ``target`` (or ``target``) is a symbolic link."""
    current = root
    for part in target.relative_to(root).parts:
        current = current / part
        if os.path.islink(current):
            return True
    return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _check_one(job: tuple[str, str, str]) -> tuple[list[Finding], RunSummary | None]:
    """One run file; an unexpected failure on it becomes a finding, not the end of the report."""
    path, root, today = job
    try:
        return check_run(Path(path), Path(root), today=today)
    except Exception as exc:  # one bad file must not stop the whole report
        message = f"kb check failed on this file ({type(exc).__name__}: {exc}); please report it"
        return [Finding(path, None, "(file)", message)], None


def _jobs_for(count: int, jobs: int | None) -> int:
    if jobs is not None:
        return max(1, jobs)
    if count < PARALLEL_FROM or not fork_safe():
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def _documents(
    paths: Sequence[str], root: Path, kinds: Sequence[DocumentKind]
) -> tuple[list[str], list[tuple[DocumentKind, Path]]]:
    """The named paths left for the run files and notes, and the documents to check: every
    one of ROOT without paths; else the named files that are documents of a kind, and those
    inside a named folder."""
    if not paths:
        return [], [(kind, path) for kind in kinds for path in kind.paths(root)]
    known = {os.path.realpath(path): (kind, path) for kind in kinds for path in kind.paths(root)}
    rest, found = [], []
    for named in paths:
        real = os.path.realpath(named)
        if real in known and not os.path.islink(named):
            found.append((known[real][0], Path(named)))
            continue
        rest.append(named)
        if is_dir(Path(named)):
            inside = real.rstrip(os.sep) + os.sep
            found += [
                (kind, Path(named) / os.path.relpath(doc, real))
                for doc, (kind, _path) in known.items()
                if doc.startswith(inside)
            ]
    return rest, found


def _document_findings(kind: DocumentKind, path: Path) -> list[Finding]:
    return [Finding(p.path, p.line, p.field, p.text()) for p in kind.check(path, str(path))]


def check_paths(
    paths: Sequence[str],
    *,
    root: Path,
    jobs: int | None = None,
    documents: Sequence[DocumentKind] = (),
) -> Report:
    """Check the run files and notes under ``paths`` (default: the project's data and notes,
    and every document of ``documents``; a named file that is one is checked as one).

    Each run file's own findings are kept in ``ROOT/build/cache/check.pickle`` when that folder
    exists (see ``FileCache``): a file whose bytes, raw files, hardware notes, date and checking
    code are all unchanged is not checked again. The rules across files, the notes and the
    stray-file search always run in full."""
    named, docs = _documents(paths, root, documents)
    if paths and not named:
        runs, notes, missing = [], [], []
    else:
        runs, notes, missing = _collect(named, root)
    if docs:  # a folder named on the command line holds them: not run files
        found_docs = {os.path.realpath(path) for _kind, path in docs}
        runs = [path for path in runs if os.path.realpath(path) not in found_docs]
    pages = _pages(named, root, notes)
    report = Report(
        runs=len(runs),
        notes=len(notes),
        findings=list(missing),
        pages=len(pages),
        documents=len(docs),
    )
    today = datetime.now(UTC).strftime("%Y%m%d")
    cache = FileCache(root, today)
    outcomes: dict[str, tuple[list[Finding], RunSummary | None]] = {}
    work = []
    for path in runs:
        hit = cache.get(str(path))
        if hit is None:
            work.append((str(path), str(root), today))
        else:
            outcomes[str(path)] = hit
    workers = _jobs_for(len(work), jobs)
    if workers > 1:
        fresh = map_in_workers(_check_one, work, workers=workers)
    else:
        fresh = [_check_one(job) for job in work]
    for (path, _root, _today), outcome in zip(work, fresh, strict=True):
        outcomes[path] = outcome
        cache.put(path, outcome)
    cache.save([str(p) for p in runs])
    summaries = []
    found: list[Finding] = []
    for path in runs:
        findings, summary = outcomes[str(path)]
        found.extend(findings)
        if summary is not None:
            summaries.append(summary)
    found.extend(across_runs(summaries))
    for path in notes:
        found.extend(check_note(path))
    for kind, path in pages:
        found.extend(check_page(path, kind))
    for document, path in docs:
        found.extend(_document_findings(document, path))
    if not paths:
        collected = {str(p) for p in [*runs, *notes]}
        found.extend(f for f in contributed(root).findings if f.path not in collected)
        found.extend(check_tree(root))  # what would steer Hugo (config/, themes/, mounts…)
    # Each file's problems together, in line order, files in the order they were collected.
    checked = [*runs, *notes, *(p for _, p in pages), *(p for _, p in docs)]
    order = {str(path): index for index, path in enumerate(checked)}
    found.sort(key=lambda f: (order.get(f.path, len(order)), f.line or 0))
    report.findings.extend(found)
    if not paths:
        report.findings.extend(stray_files(root, runs, summaries))
    return report


class FileCache:
    """One run file's findings and summary, reused while everything they came from is unchanged:
    the run file (size, modification time, inode), every raw file it lists, the set of hardware
    notes (a run names its machine's), today's date (dates in the future are errors), the
    working folder (paths are shown as given) and the checking code. A file that could not be
    read as a run file is always checked again.

    Regression guard: a cache that missed one of these would report a fixed file as broken, or
    a broken one as fine (tests/check/test_check_cache.py changes each and sees the report
    change)."""

    def __init__(self, root: Path, today: str) -> None:
        folder = root / CACHE_DIR
        self.file = folder / CACHE_NAME if is_dir(folder) else None
        self.root = root
        self.entries: dict[str, Any] = {}
        #: Each file's stamp as it was before it was checked (a change while checking is seen).
        self.before: dict[str, Any] = {}
        self.changed = False
        if self.file is None:
            return
        notes = root / HARDWARE_DIR
        note_names = [p.name for p in note_files(root)] if is_dir(notes) else []
        # The list of the project's own runs decides whether a run may sign as the maintainers.
        own = file_stamp(root / OWN_RUNS)
        self.context = (code_fingerprint(), today, os.getcwd(), str(root), tuple(note_names), own)
        try:
            saved = pickle.loads(self.file.read_bytes())
        except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError):
            saved = None
        if isinstance(saved, dict) and saved.get("context") == self.context:
            self.entries = saved.get("entries") or {}

    def _deps(self, summary: RunSummary) -> tuple[tuple[str, Any], ...]:
        return tuple((raw, file_stamp(self.root / raw)) for raw in summary.raw_paths)

    def get(self, path: str) -> tuple[list[Finding], RunSummary | None] | None:
        if self.file is None:
            return None
        self.before[path] = now = file_stamp(path)
        entry = self.entries.get(path)
        if entry is None:
            return None
        stamp, deps, outcome = entry
        if stamp != now or any(file_stamp(self.root / raw) != was for raw, was in deps):
            return None
        return outcome

    def put(self, path: str, outcome: tuple[list[Finding], RunSummary | None]) -> None:
        if self.file is None:
            return
        summary = outcome[1]
        self.changed = True
        if summary is None:
            self.entries.pop(path, None)
            return
        self.entries[path] = (self.before.get(path), self._deps(summary), outcome)

    def save(self, paths: list[str]) -> None:
        """Write the cache (atomically): the entries of ``paths`` (just checked) and those of
        other files that still exist (a check of one folder keeps the rest)."""
        if self.file is None:
            return
        checked = set(paths)
        kept = {p: e for p, e in self.entries.items() if p in checked or os.path.exists(p)}
        if not self.changed and len(kept) == len(self.entries):
            return
        partial = self.file.with_suffix(f".{os.getpid()}.tmp")
        try:
            partial.write_bytes(
                pickle.dumps(
                    {"context": self.context, "entries": kept}, protocol=pickle.HIGHEST_PROTOCOL
                )
            )
            partial.replace(self.file)
        except OSError:
            partial.unlink(missing_ok=True)


STRAY_TEMP_HINT = (
    "a temporary file left by an interrupted kb import (nothing refers to it): remove it"
)


def stray_files(root: Path, runs: Sequence[Path], summaries: Sequence[RunSummary]) -> list[Finding]:
    """Files in the project's data and notes that nothing refers to: hidden temporary files
    of an interrupted write, and raw files that no run file lists in ``raw``.

    A raw file of a run file that could not be read (so its ``raw`` list is unknown) counts as
    referred to when its name starts with that run file's id, so one broken run file does not
    make its raw output a second problem."""
    referred = {path for s in summaries for path in s.raw_paths}
    unread = {Path(s.path) for s in summaries}
    unread_ids = [p.stem for p in runs if p not in unread]
    findings = []
    for folder in (RUNS_DIR, RAW_DIR, HARDWARE_DIR):
        top = root / folder
        if not is_dir(top):
            continue
        for path in sorted(top.rglob("*")):
            if not is_file(path):
                continue
            if is_import_temp(path.name) and hidden_part(path.parent.relative_to(root)) is None:
                findings.append(Finding(str(path), None, "(file)", STRAY_TEMP_HINT))
                continue
            if folder != RAW_DIR or hidden_part(path.relative_to(root)) is not None:
                continue  # a dot name is reported as such (check.content.contributed)
            rel = path.relative_to(root).as_posix()
            if rel in referred or any(path.name.startswith(f"{i}.") for i in unread_ids):
                continue
            findings.append(
                Finding(
                    str(path),
                    None,
                    "(file)",
                    "a raw file no run file refers to (left by an interrupted kb import, or "
                    "its run file was removed): remove it, or import the run again",
                )
            )
    return findings
