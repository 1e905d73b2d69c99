"""The commands that read what people give: ``kb parse``, ``kb import``, ``kb check``.

Each ``configure_X`` adds the options of ``kb X``; each ``run_X`` runs it and returns its exit
status (domain errors are raised, and turned into one line by ``cli.main``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pgbench_kb.runs.documents import DocumentCheck, DocumentKind


# kb parse


def configure_parse(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="pgbench output or log file(s); '-' reads standard input; several per-thread "
        "log files of one run are merged",
    )


def run_parse(args: argparse.Namespace) -> int:
    from pgbench_kb.parse import parse_paths

    result = parse_paths(args.files)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


# kb import


def configure_import(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "raw",
        nargs="*",
        metavar="RAW",
        help="raw pgbench output file(s); '-' = stdin; with --mapping, the top of a result tree",
    )
    p.add_argument(
        "--mapping",
        type=Path,
        metavar="YAML",
        help="import every output of the result tree RAW as the mapping file says (which path "
        "parts are the session, repeat, clients, mode; the author's facts; the source and its "
        "terms), e.g. kb import ../postgres-archaeology --mapping "
        "data/imports/tvondra-archaeology/mapping.yaml",
    )
    p.add_argument(
        "--machine", help="slug of the server's hardware note (content/hardware/SLUG.md)"
    )
    p.add_argument(
        "--meta", type=Path, metavar="YAML", help="metadata file (same keys as a run file)"
    )
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one metadata field by dotted path, e.g. storage.controller.battery_backed=true "
        "(repeatable; values are read as YAML scalars)",
    )
    p.add_argument(
        "--harness-dir",
        type=Path,
        metavar="DIR",
        help="a trial folder written by scripts/bench.sh (facts, command, raw output, logs)",
    )
    p.add_argument(
        "--root", type=Path, default=Path("."), help="project root holding data/ (default: .)"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the run file instead of writing it"
    )
    p.add_argument(
        "--log",
        dest="logs",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="the pgbench --log file(s) of the run, one per thread (--log pgbench_log.*, or "
        "the flag repeated); kept gzipped, their latency percentiles go into results",
    )
    p.add_argument(
        "--mask-hostnames",
        action="store_true",
        help="leave host names out (null) and list them in provenance.masked",
    )
    p.add_argument(
        "--settings-from",
        type=Path,
        metavar="FILE",
        help="the server's settings from psql's SHOW ALL output (aligned or -A unaligned) or "
        "its postgresql.conf; those not at their default are recorded, e.g. "
        "psql -c 'SHOW ALL' > settings.txt; kb import out.txt --settings-from settings.txt",
    )


def _run_import_tree(args: argparse.Namespace) -> int:
    from pgbench_kb.errors import UsageError
    from pgbench_kb.runs.import_tree import import_tree

    others = [
        flag
        for flag, used in (
            ("--machine", args.machine),
            ("--meta", args.meta),
            ("--set", args.sets),
            ("--harness-dir", args.harness_dir),
            ("--log", args.logs),
            ("--settings-from", args.settings_from),
            ("--mask-hostnames", args.mask_hostnames),
        )
        if used
    ]
    if len(args.raw) != 1 or others:
        raise UsageError(
            "--mapping imports one result tree: give its directory alone"
            + (f" (the mapping file gives what {', '.join(others)} would)" if others else ""),
            hint="kb import TREE --mapping MAPPING.yaml",
        )
    done = import_tree(Path(args.raw[0]), args.mapping, root=args.root, dry_run=args.dry_run)
    verb = "would import" if args.dry_run else "imported"
    print(
        f"{verb} {len(done.runs)} runs in {done.groups} repeat groups and {done.sessions} "
        f"sessions; {done.unmatched} files did not match files.pattern"
    )
    for rel, why in sorted(done.skipped.items()):
        print(f"left out {rel}: {why}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from pgbench_kb.runs.importer import import_run

    if args.mapping is not None:
        return _run_import_tree(args)

    detected = None
    if args.harness_dir is not None:
        from pgbench_kb.bench.trial import read_trial_folder

        detected = read_trial_folder(args.harness_dir, mask_hostnames=args.mask_hostnames)
    imported = import_run(
        raw_paths=args.raw,
        machine=args.machine,
        meta_path=args.meta,
        sets=args.sets,
        detected=detected,
        root=args.root,
        dry_run=args.dry_run,
        log_paths=args.logs,
        mask_hostnames=args.mask_hostnames,
        settings_from=args.settings_from,
        stdin=sys.stdin,
        stdout=sys.stdout,
    )
    if imported is not None:
        print(imported.run_path)
        for advice in imported.advice:
            print(f"note: {advice}", file=sys.stderr)
    return 0


# kb check


def configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="run files, hardware notes, other pages or folders (default: the whole of "
        "data/ and content/)",
    )
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (default: one per CPU when there are many files)",
    )
    p.add_argument(
        "--changed",
        nargs="?",
        const="",
        default=None,
        metavar="BASE",
        help="show the problems of the files changed since BASE first, and only count the "
        "warnings of the others; BASE defaults to origin/main, else main "
        "(e.g. kb check --changed, or kb check --changed upstream/main)",
    )


def _lazy_check(module: str, name: str) -> DocumentCheck:
    """``module.name``, imported only when a document of its kind is there to check (a tree
    without claims or answers, such as ``kb synth``'s, never loads the analysis)."""

    def check(path: Path, shown: str) -> list[Any]:
        from importlib import import_module

        return getattr(import_module(module), name)(path, shown)

    return check


def _documents() -> tuple[DocumentKind, ...]:
    """What ``kb check`` validates besides run files and pages: each document with a schema,
    where it lives and the stage that owns its rules."""
    from pgbench_kb.runs.documents import DocumentKind

    return (
        DocumentKind(
            "profile",
            ("scripts/profiles/*.yaml", "scripts/profiles/campaign/*.yaml"),
            _lazy_check("pgbench_kb.bench.profile", "profile_problems"),
        ),
        DocumentKind(
            "mapping",
            ("data/imports/*/mapping.yaml",),
            _lazy_check("pgbench_kb.runs.import_tree", "mapping_problems"),
        ),
        DocumentKind(
            "claims",
            ("data/claims.yaml",),
            _lazy_check("pgbench_kb.analyze.claims_file", "claims_problems"),
        ),
        DocumentKind(
            "answers",
            ("data/answers.yaml",),
            _lazy_check("pgbench_kb.derive.answers_file", "answers_problems"),
        ),
    )


def run_check(args: argparse.Namespace) -> int:
    from pgbench_kb.runs.check import check_paths, format_report

    changed = None
    if args.changed is not None:
        from pgbench_kb.runs.check.changed import changed_files

        changed = changed_files(args.root, args.changed or None)
    report = check_paths(args.paths, root=args.root, jobs=args.jobs, documents=_documents())
    if changed is not None:
        from pgbench_kb.runs.check.changed import format_changed

        text, failed = format_changed(report, changed)
        sys.stdout.write(text)
        return 1 if failed else 0
    sys.stdout.write(format_report(report))
    return 1 if report.errors else 0
