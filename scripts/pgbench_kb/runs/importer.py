"""``kb import``: raw pgbench output + metadata → a new run file and its raw copy.

Two ways in:
- a trial folder written by ``scripts/bench.sh`` (``--harness-dir``): everything is detected,
  except what a person adds with ``--set`` or ``--meta`` (listed in ``provenance.declared``);
- raw output files or standard input, plus metadata from ``--meta`` and ``--set``: for results
  run by hand or transcribed from a publication.

A transcribed run (``--set origin=transcribed``) may come without raw output: its figures are
then all declared in the metadata.

Every value a person gives is listed (as a dotted path, at most two levels deep) in
``provenance.declared``; everything else came from the harness's facts or from parsing the raw
output. ``provenance.masked`` paths are set to null before anything is written. The
contributor, when nobody names one, is ``git config user.name`` (else the login name).

Nothing is written until the whole run file has been built and validated (schema and the
one-file rules of ``kb check``, what a run must carry and the settings included); every problem
is reported at once, one per line, each at its field (or its ``--meta`` line), naming the
``--set``/``--meta`` field it involves: missing metadata, wrong values, contradictions with the
raw output and a raw output already kept all come in one round. The raw copy, the logs, a
draft note and the run file are written atomically, all or none (signals wait until the last
is in place), and never overwrite an existing file.

The jobs live in their own modules: ``import_declared`` (what a person gives), ``import_raw``
(raw output and logs), ``import_files`` (id, contributor, draft note); settings read from a
``SHOW ALL`` dump or a postgresql.conf (``--settings-from``) come from ``pgsettings``.
"""

from __future__ import annotations

import copy
import gzip
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pgbench_kb.errors import RunImportError
from pgbench_kb.runs import latency_zeros
from pgbench_kb.runs.check import masked_path_problem, single_run_issues
from pgbench_kb.runs.check.values import dotted_get
from pgbench_kb.runs.files import run_files
from pgbench_kb.runs.import_declared import (
    _overlaps,
    all_problems,
    declared_paths,
    deep_merge,
    gather_declared,
    leaf_paths,
    located_problems,
    mask,
    parse_set,
)
from pgbench_kb.runs.import_files import (
    _year_month,
    contributor_name,
    draft_note,
    git_user_name,
    run_id,
)
from pgbench_kb.runs.import_raw import RAW_HINT, _figures_hash, _read_logs, build_from_raw
from pgbench_kb.runs.pgsettings import (
    major_of,
    read_settings_text,
    settings_of,
    settings_to_record,
)
from pgbench_kb.runs.runfile import (
    HARDWARE_DIR,
    RAW_DIR,
    RUNS_DIR,
    dump_run,
    read_bytes_bounded,
    sha256_bytes,
    write_file_if_absent,
    write_new_files,
)
from pgbench_kb.runs.schema import validate_run

__all__ = ["RAW_HINT", "Detected", "Imported", "contributor_name", "git_user_name", "import_run"]

HOSTNAME_PATHS = ("server.hostname", "client.hostname")
LOG_KINDS = {"transaction_log", "aggregate_log"}
MAX_SETTINGS_BYTES = 2 * 2**20
#: What a missing field is asked for with.
REQUIRED_HOW = {
    "machine": "--machine SLUG, the name of the server's content/hardware/SLUG.md",
    "provenance.recorded_at": "--set provenance.recorded_at=2026-11-22T10:00:00Z, when the run "
    "was made",
    "provenance.source.title": "--set provenance.source.title=… (or a source: section in --meta)",
    "provenance.source.kind": "--set provenance.source.kind=… (or a source: section in --meta)",
}
#: Stand-ins for missing fields while the other rules are applied (never written).
PLACEHOLDERS = {"machine": "placeholder-machine"}


@dataclass(frozen=True)
class Imported:
    """What ``import_run`` wrote, and what the person should do next (advice, not errors)."""

    run_path: Path
    advice: list[str]


@dataclass(frozen=True)
class Detected:
    """A run measured by a harness: the raw output's exact bytes, the run sections it detected
    (without id and raw) and its transaction logs as (name, bytes). The bench harness builds it
    from a trial folder (``pgbench_kb.bench.trial.read_trial_folder``)."""

    raw_bytes: bytes
    run: dict[str, Any]
    logs: list[tuple[str, bytes]]


def import_run(
    *,
    raw_paths: Sequence[str],
    machine: str | None,
    meta_path: Path | None,
    sets: Sequence[str],
    detected: Detected | None,
    root: Path,
    dry_run: bool,
    log_paths: Sequence[str] = (),
    mask_hostnames: bool = False,
    settings_from: Path | None = None,
    keep_raw: bool = True,
    check_duplicates: bool = True,
    kept: dict[str, Path] | None = None,
    given: dict[str, Any] | None = None,
    stdin: IO[str] = sys.stdin,
    stdout: IO[str] = sys.stdout,
) -> Imported | None:
    """Build, validate and write one run file; say where (None with ``dry_run``). Every
    problem found is raised at once (``ImportProblems`` when there are several). Without
    ``keep_raw`` the raw output is parsed but not kept: its sha256 goes into
    ``provenance.source.sha256`` beside the address the source gives (``kb import TREE``, for
    a tree whose terms do not allow keeping it). ``kept``: the outputs already in the knowledge
    base (``kept_outputs``), read once by a caller that imports many runs; without it they
    are read here when needed."""
    declared, problems = gather_declared(meta_path, sets, machine, base=given)
    given_paths = list(dict.fromkeys([*_set_keys(sets), *leaf_paths(declared)]))
    transcribed = declared.get("origin") == "transcribed"
    try:
        if detected is not None:
            raw_bytes, run = detected.raw_bytes, copy.deepcopy(detected.run)
            logs = list(detected.logs)
        else:
            run, raw_bytes, logs = build_from_raw(raw_paths, stdin, transcribed=transcribed)
            logs = logs + _read_logs(log_paths, run)
    except RunImportError as exc:
        merged = deep_merge({"provenance": {}}, declared)
        raise all_problems([*problems, exc, *_missing(merged, transcribed)]) from None
    run = deep_merge(run, declared)
    advice: list[str] = []
    if settings_from is not None:
        problem = _apply_settings_file(run, settings_from, declared, advice)
        if problem is not None:
            problems.append(problem)
    already = set(run["provenance"].get("declared") or [])
    named = set(declared_paths(declared)) | ({"postgres.settings"} if settings_from else set())
    run["provenance"]["declared"] = sorted(already | named)
    masked = list(run["provenance"].get("masked") or [])
    if mask_hostnames:
        masked += [p for p in HOSTNAME_PATHS if p not in masked]
    run["provenance"]["masked"] = masked
    for index, dotted in enumerate(masked):
        problem = masked_path_problem(dotted)
        if problem is not None:
            problems.append(RunImportError(problem, field=f"provenance.masked.{index}"))
    mask(run, [p for p in masked if masked_path_problem(p) is None])
    if run["provenance"].get("contributed_at") is None:
        run["provenance"]["contributed_at"] = datetime.now(UTC).strftime("%Y-%m-%d")
    if not run["provenance"].get("contributor"):
        run["provenance"]["contributor"] = contributor_name(root)
    reported = [p.field or "" for p in problems]
    missing = [
        p
        for p in _missing(run, run.get("origin") == "transcribed")
        if not any(f == p.field or f.startswith(f"{p.field}.") for f in reported)
    ]
    problems += missing

    had_output = raw_bytes is not None
    raw_hash = sha256_bytes(raw_bytes) if raw_bytes is not None else _figures_hash(run)
    run["id"] = run_id(run, raw_hash)
    year, month = _year_month(run["provenance"].get("recorded_at"))
    raw_rel = RAW_DIR / year / month / f"{run['id']}.txt"
    run["raw"] = []
    blobs: dict[str, bytes] = {}
    if raw_bytes is not None and not keep_raw:
        run["provenance"].setdefault("source", {})["sha256"] = raw_hash
        raw_bytes = None
    if raw_bytes is not None:
        run["raw"].append({"path": raw_rel.as_posix(), "sha256": raw_hash, "kind": "output"})
        blobs[raw_rel.as_posix()] = raw_bytes
    log_files = []
    for index, (name, blob) in enumerate(logs):
        kind = name if name in LOG_KINDS else "log"
        packed = gzip.compress(blob, mtime=0)
        rel = RAW_DIR / year / month / f"{run['id']}.log{index}.gz"
        run["raw"].append({"path": rel.as_posix(), "sha256": sha256_bytes(packed), "kind": kind})
        blobs[rel.as_posix()] = packed
        log_files.append((rel, packed))

    skip = {*reported, *(p.field or "" for p in missing)}
    found, notes = _invalid(run, root, blobs, given_paths, skip=skip)
    problems += found
    advice += notes
    run_path = root / RUNS_DIR / year / month / f"{run['id']}.yaml"
    if run_path.exists() and not dry_run:
        problems.append(
            RunImportError(
                "a run file for this output exists already",
                path=str(run_path),
                hint="nothing to do",
            )
        )
    elif had_output and check_duplicates:
        # An output kept here or referenced by its hash (keep_raw off) is imported once.
        where = (kept if kept is not None else kept_outputs(root)).get(raw_hash)
        if where is not None:
            problems.append(_duplicate_problem(where, raw_hash))
    if problems:
        raise all_problems(_unique(problems))

    text_out = dump_run(run)
    if dry_run:
        stdout.write(text_out)
        return None
    files: list[tuple[Path, bytes]] = []
    if raw_bytes is not None and not (root / raw_rel).exists():
        files.append((root / raw_rel, raw_bytes))
    files.extend((root / rel, packed) for rel, packed in log_files if not (root / rel).exists())
    note = root / HARDWARE_DIR / f"{run['machine']}.md"
    # The run file comes last: once it exists, everything it refers to exists too.
    files.append((run_path, text_out.encode("utf-8")))
    write_new_files(files)
    if not note.exists():
        # A draft of the machine's note, unless one appeared meanwhile (two benches started on
        # a new machine at once): either way the run is kept.
        text = draft_note(
            run["machine"],
            run.get("server"),
            detected=detected is not None,
            storage=run.get("storage"),
        )
        if write_file_if_absent(note, text.encode("utf-8")):
            advice.append(
                f"{note.relative_to(root).as_posix()} did not exist: kb import started a draft "
                "(draft_note: true); describe the machine there — disks and their roles, "
                "controller, cache — before `make check` (see CONTRIBUTING.md)"
            )
    return Imported(run_path, advice)


def _set_keys(sets: Sequence[str]) -> list[str]:
    """The keys of the --set items that can be read (the others are reported apart)."""
    keys = []
    for item in sets:
        try:
            keys.append(parse_set(item)[0])
        except RunImportError:
            continue
    return keys


def _missing(run: dict[str, Any], transcribed: bool) -> list[RunImportError]:
    """What ``kb import`` cannot do without, each with the way to give it."""
    fields = ["machine", "provenance.recorded_at"]
    if transcribed:
        fields += ["provenance.source.title", "provenance.source.kind"]
    return [
        RunImportError(f"missing; give it with {REQUIRED_HOW[dotted]}", field=dotted)
        for dotted in fields
        if dotted_get(run, dotted) in (None, "")
    ]


def _unique(problems: Sequence[RunImportError]) -> list[RunImportError]:
    """Each problem once (a missing field is also a schema problem)."""
    seen: set[str] = set()
    kept = []
    for problem in problems:
        if str(problem) not in seen:
            seen.add(str(problem))
            kept.append(problem)
    return kept


def _apply_settings_file(
    run: dict[str, Any], path: Path, declared: dict[str, Any], advice: list[str]
) -> RunImportError | None:
    """Settings from a ``SHOW ALL`` dump or a postgresql.conf into the run: those not at their
    default (when kb knows the version's defaults); a --set or --meta setting wins."""
    try:
        text = read_bytes_bounded(
            path, max_bytes=MAX_SETTINGS_BYTES, hint="give SHOW ALL output or a postgresql.conf"
        ).decode("utf-8", errors="replace")
        given = read_settings_text(text, source=str(path))
    except RunImportError as exc:
        return RunImportError(exc.message, field="--settings-from", path=str(path), hint=exc.hint)
    except ValueError as exc:
        return RunImportError(str(exc), field="--settings-from")
    version = dotted_get(run, "postgres.version")
    major = major_of(version)
    if major is None or settings_of(major) is None:
        advice.append(
            f"settings of PostgreSQL {major or version or '(version not given)'} are not known "
            f"to kb: every setting of {path} is recorded as given, defaults included; give "
            "--set postgres.version=… first, or keep only the settings you changed"
        )
    picked = settings_to_record(given, major)
    stated = dotted_get(declared, "postgres.settings")
    run.setdefault("postgres", {})["settings"] = {**picked, **(stated or {})}
    return None


def _first_non_finite(value: Any, path: str = "") -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return path or "(top)"
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _first_non_finite(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


def _invalid(
    run: dict[str, Any],
    root: Path,
    blobs: dict[str, bytes],
    given: Sequence[str],
    *,
    skip: set[str],
) -> tuple[list[RunImportError], list[str]]:
    """The schema and every one-file rule of ``kb check``, the raw output re-parsed and
    compared: every error (naming the field a person gave, ``given``, that it involves), and
    the notes of what could not be checked. Fields already reported missing (``skip``) are
    stood in for, so that the other rules still speak."""
    bad = _first_non_finite(run)
    if bad is not None:
        return [
            RunImportError(
                "is not a finite number", field=bad, hint="write the figure, or null when unknown"
            )
        ], []
    probe = copy.deepcopy(run)
    for dotted, stand_in in PLACEHOLDERS.items():
        if not probe.get(dotted):
            probe[dotted] = stand_in
    if not probe["provenance"].get("recorded_at"):
        probe["provenance"]["recorded_at"] = probe["provenance"]["contributed_at"]
    schema = validate_run(probe)
    if schema:  # the rules need a run the schema accepts
        shown = [p for p in schema if not any(_overlaps(p.field, f) for f in skip)]
        return located_problems([(p.field, p.text(), ()) for p in shown], given), []
    today = datetime.now(UTC).strftime("%Y%m%d")
    issues = single_run_issues(probe, root, today=today, blobs=blobs)
    errors = [
        i for i in issues if i.severity == "error" and not any(_overlaps(i.field, f) for f in skip)
    ]
    notes = [
        f"{i.field}: {i.message}"
        for i in issues
        if i.severity == "note" or (i.severity == "warning" and latency_zeros.named(i.message))
    ]
    return located_problems([(i.field, i.message, i.related) for i in errors], given), notes


#: A hash a run file gives on a line of its own: of a raw output or log it keeps (``raw``), or
#: of the output its source keeps (``provenance.source.sha256``), as ``kb import`` writes them.
_SHA256_LINE = re.compile(rb"^[ -]*sha256: '?([0-9a-f]{64})'?[ \t]*$", re.MULTILINE)


def kept_outputs(root: Path) -> dict[str, Path]:
    """Every sha256 the run files under ROOT/data/runs give, → the first file that gives it:
    read once, so that importing n outputs looks each one up instead of reading every run
    file n times."""
    kept: dict[str, Path] = {}
    try:
        candidates = run_files(root) if (root / RUNS_DIR).is_dir() else []
    except OSError:
        return kept
    for path in candidates:
        try:
            with open(path, "rb") as stream:
                text = stream.read(8 * 2**20)
        except OSError:
            continue
        for found in _SHA256_LINE.finditer(text):
            kept.setdefault(found.group(1).decode("ascii"), path)
    return kept


def _duplicate_problem(path: Path, raw_hash: str) -> RunImportError:
    """Raw output that a run under ROOT/data/runs already keeps or references (whatever its
    date) is refused."""
    return RunImportError(
        f"the same raw output (sha256 {raw_hash[:12]}…) is already kept by {path}",
        field="RAW",
        hint="each run is imported once; a repeat of the benchmark has output of its own",
    )
