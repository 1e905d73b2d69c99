"""The ``kb`` command line: the only module that talks to a terminal.

Each command is a small function that takes the parsed arguments and returns an exit status.
Domain errors (``KbError``) become one ``error: …`` line on stderr (one per problem when an
import finds several) and the error's exit status;
nothing else is caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pgbench_kb import __version__
from pgbench_kb.errors import KbError

if TYPE_CHECKING:
    from pgbench_kb.runs.documents import DocumentCheck, DocumentKind


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    example: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ---------------------------------------------------------------------------------------------
# kb parse


def _configure_parse(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="pgbench output or log file(s); '-' reads standard input; several per-thread "
        "log files of one run are merged",
    )


def _run_parse(args: argparse.Namespace) -> int:
    from pgbench_kb.parse import parse_paths

    result = parse_paths(args.files)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


# ---------------------------------------------------------------------------------------------
# kb import


def _configure_import(p: argparse.ArgumentParser) -> None:
    p.add_argument("raw", nargs="*", metavar="RAW", help="raw pgbench output file(s); '-' = stdin")
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


def _run_import(args: argparse.Namespace) -> int:
    from pgbench_kb.runs.importer import import_run

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


# ---------------------------------------------------------------------------------------------
# kb check


def _configure_check(p: argparse.ArgumentParser) -> None:
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


def _run_check(args: argparse.Namespace) -> int:
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


# ---------------------------------------------------------------------------------------------
# kb derive


def _configure_derive(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where generated content and data go (default: ROOT/build/site)",
    )
    p.add_argument(
        "--runs",
        type=Path,
        default=None,
        help="folder of run files (default: ROOT/data/runs; ROOT/runs for a kb synth tree)",
    )


def _run_derive(args: argparse.Namespace) -> int:
    from pgbench_kb.derive.site import derive_site

    summary = derive_site(root=args.root, out=args.out, runs_dir=args.runs)
    print(summary)
    return 0


# ---------------------------------------------------------------------------------------------
# kb charts


def _configure_charts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    p.add_argument(
        "--specs",
        type=Path,
        default=None,
        help="the chart specs kb derive wrote (default: ROOT/build/site/specs)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where the SVG charts go, nothing else kept there (default: ROOT/build/charts)",
    )


def _run_charts(args: argparse.Namespace) -> int:
    from pgbench_kb.derive.charts import SPECS_DIR, draw_charts

    specs = args.specs or args.root / "build" / "site" / SPECS_DIR
    out = args.out or args.root / "build" / "charts"
    done = draw_charts(specs, out, args.root / "build" / "cache" / "charts")
    print(
        f"charts: {done.charts:,} in {out} in {done.seconds:.1f} s ({done.drawn:,} drawn by "
        f"vl-convert, {done.reused:,} from the cache, {done.removed:,} old one(s) removed)"
    )
    return 0


# ---------------------------------------------------------------------------------------------
# kb compare


def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the Comparisons JSON object (docs/comparisons.md) instead of the table",
    )
    p.add_argument(
        "--machine",
        metavar="SLUG",
        help="only comparisons, curves and stability rows of this machine (server or client)",
    )
    p.add_argument(
        "--factor",
        metavar="FIELD",
        help="only comparisons of this run-file field or prefix, e.g. storage.wal.placement, "
        "postgres.settings.commit_delay, storage; the curves that sweep it "
        "(benchmark.clients) and the stability rows of the groups they rest on",
    )


def _run_compare(args: argparse.Namespace) -> int:
    from pgbench_kb.analyze import build_knowledge
    from pgbench_kb.analyze.render import as_json, render_table
    from pgbench_kb.analyze.select import select

    knowledge = select(build_knowledge(args.root), machine=args.machine, factor=args.factor)
    if args.json:
        # One string instead of thousands of small writes.
        sys.stdout.write(as_json(knowledge) + "\n")
    else:
        sys.stdout.write(render_table(knowledge))
    return 0


# ---------------------------------------------------------------------------------------------
# kb plan


def _configure_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("profile", help="profile name (scripts/profiles/NAME.yaml) or a YAML path")
    p.add_argument(
        "--cores", type=int, default=None, help="client cores for choosing threads (default: nproc)"
    )
    p.add_argument(
        "--for-bash",
        action="store_true",
        help="print the plan scripts/bench.sh reads (format: pgbench_kb/bench/profile/wire.py)",
    )
    p.add_argument(
        "--known-settings",
        type=Path,
        metavar="FILE",
        help="output of `postgres --describe-config`: reject setting names the server lacks",
    )


def _run_plan(args: argparse.Namespace) -> int:
    from pgbench_kb.bench.profile import describe_plan, load_profile, render_plan
    from pgbench_kb.errors import UsageError

    known = None
    if args.known_settings is not None:
        try:
            text = args.known_settings.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(
                f"cannot read: {exc.strerror or exc}",
                path=str(args.known_settings),
                field="--known-settings",
                hint="give the file `postgres --describe-config` wrote",
            ) from None
        known = {line.split("\t", 1)[0] for line in text.splitlines() if line.strip()}
    profile = load_profile(args.profile, known_settings=known)
    render = render_plan if args.for_bash else describe_plan
    sys.stdout.write(render(profile, cores=args.cores))
    return 0


# ---------------------------------------------------------------------------------------------
# kb synth


def _configure_synth(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, required=True, help="folder to write into (not data/)")
    p.add_argument("--count", type=int, default=1000, help="number of run files (default: 1000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")


def _run_synth(args: argparse.Namespace) -> int:
    from pgbench_kb.runs.synth import generate

    print(generate(args.out, count=args.count, seed=args.seed))
    return 0


# ---------------------------------------------------------------------------------------------
# kb docgen


def _configure_docgen(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    p.add_argument(
        "--check", action="store_true", help="only report whether the file is up to date"
    )


def _run_docgen(args: argparse.Namespace) -> int:
    from pgbench_kb.runs import docgen

    if args.check:
        if docgen.is_fresh(args.root):
            print(f"{docgen.DOC_PATH} is up to date")
            return 0
        print(f"{docgen.DOC_PATH} is stale: run `kb docgen`", file=sys.stderr)
        return 1
    print(docgen.write(args.root))
    return 0


# ---------------------------------------------------------------------------------------------
# kb index


def _configure_index(p: argparse.ArgumentParser) -> None:
    p.add_argument("site", type=Path, metavar="SITE", help="the folder Hugo wrote (public/)")
    p.add_argument(
        "--cache",
        type=Path,
        metavar="DIR",
        help="keep the index here and index again only when an indexed page changed "
        "(scripts/site.sh: ROOT/build/cache/search); without it, the site is indexed",
    )


def _run_index(args: argparse.Namespace) -> int:
    from pgbench_kb.publish import slices

    done = slices.build(args.site, args.cache)
    print(
        f"search index: {args.site}/pagefind, one bundle: "
        f"{len(done.indexed)} indexed ({done.filters} filter file(s) in a fixed order), "
        f"{len(done.reused)} reused, {len(done.dropped)} removed"
    )
    for label, names in (("indexed", done.indexed), ("reused", done.reused),
                         ("removed", done.dropped)):  # fmt: skip
        if names:
            print(f"  {label}: {' '.join(names)}")
    return 0


# ---------------------------------------------------------------------------------------------
# kb render


def _configure_render(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="the Hugo configuration (default: ROOT/config.toml; scripts/site.sh gives the "
        "one it writes, build/hugo.toml)",
    )
    p.add_argument(
        "destination", type=Path, metavar="DESTINATION", help="a new folder for the site"
    )


def _run_render(args: argparse.Namespace) -> int:
    from pgbench_kb.errors import UsageError
    from pgbench_kb.publish.hugo_build import CACHE, render

    if args.destination.exists():
        raise UsageError(
            f"{args.destination} exists", hint="kb render writes a new folder; remove it first"
        )
    root = args.root.resolve()
    done = render(root, args.config or root / "config.toml", args.destination)
    how = "all laid out again" if done.cold else f"{done.reused:,} from {CACHE}/"
    print(
        f"render: {args.destination} ({done.drawn + done.reused:,} run and configuration "
        f"pages: {done.drawn:,} laid out by Hugo, {how}; {done.removed:,} removed)"
    )
    return 0


# ---------------------------------------------------------------------------------------------
# kb diff


def _configure_diff(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "base",
        metavar="BASE",
        help="what to compare against: a git revision of ROOT's repository (branch, tag, "
        "commit) or the folder of another checkout",
    )
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--json", action="store_true", help="print the diff as one JSON object")
    how.add_argument(
        "--markdown", action="store_true", help="print it as Markdown for a pull-request comment"
    )


def _run_diff(args: argparse.Namespace) -> int:
    from pgbench_kb.review.comment import as_markdown, as_text
    from pgbench_kb.review.diff import knowledge_diff

    found = knowledge_diff(args.base, args.root.resolve())
    if args.json:
        json.dump(found, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(as_markdown(found) if args.markdown else as_text(found))
    return 0


# ---------------------------------------------------------------------------------------------
# kb review


def _configure_review(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "base", metavar="BASE", help="the branch the pull request goes into (a revision)"
    )
    p.add_argument("head", metavar="HEAD", help="the pull request's head commit (a revision)")
    p.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        help="the git repository holding both (default: .); HEAD is read from it as data only",
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument("--json", action="store_true", help="print the review as one JSON object")
    how.add_argument("--markdown", action="store_true", help="print it as the pull-request comment")


def _run_review(args: argparse.Namespace) -> int:
    from pgbench_kb.review.comment import as_markdown, as_text
    from pgbench_kb.review.pullrequest import refused, review

    found = review(args.repo.resolve(), args.base, args.head)
    if args.json:
        json.dump(found, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(as_markdown(found) if args.markdown else as_text(found))
    if refused(found):
        print("error: the pull request changes paths it may not (listed first)", file=sys.stderr)
        return 1
    return 0


COMMANDS: tuple[Command, ...] = (
    Command(
        "parse",
        "read pgbench output or a log (8.0 to 18) and print it as JSON",
        "kb parse pgbench-output.txt\n  kb parse pgbench_log.1234 pgbench_log.1234.1\n"
        "  kb parse - < pgbench-output.txt",
        _configure_parse,
        _run_parse,
    ),
    Command(
        "import",
        "turn raw pgbench output and its metadata into a new run file",
        "kb import out.txt --machine my-box --set provenance.recorded_at=2026-11-20T10:00:00Z "
        "--set postgres.version=18.1 --set 'postgres.settings={}' "
        "--set storage.data.array.media=ssd",
        _configure_import,
        _run_import,
    ),
    Command(
        "check",
        "validate run files, hardware notes and every other file under content/ and data/; "
        "every problem as path:line: field: message",
        "kb check\n  kb check data/runs/2006 content/hardware/hp-proliant-dl380-g4.md"
        "\n  kb check content/guides/adding-results.md",
        _configure_check,
        _run_check,
    ),
    Command(
        "derive",
        "write the generated pages, data and chart specs that Hugo lays out",
        "kb derive && kb charts && hugo",
        _configure_derive,
        _run_derive,
    ),
    Command(
        "charts",
        "draw the Vega-Lite chart specs kb derive wrote as SVG (cached by spec)",
        "kb derive && kb charts && hugo",
        _configure_charts,
        _run_charts,
    ),
    Command(
        "plan",
        "expand a bench profile into its trials (one line each, for scripts/bench.sh)",
        "kb plan smoke",
        _configure_plan,
        _run_plan,
    ),
    Command(
        "compare",
        "controlled comparisons of groups of repeats (tps and latency), with noise-aware "
        "verdicts, curves, stability, interactions and findings",
        "kb compare --machine hp-proliant-dl380-g4 --factor storage.data.array.level\n"
        "  kb compare --factor benchmark.clients\n"
        "  kb compare --json > comparisons.json",
        _configure_compare,
        _run_compare,
    ),
    Command(
        "diff",
        "what a change does to the knowledge: runs, comparisons, verdicts that flip, key "
        "findings, claims, new check messages, and what a reviewer must look at",
        "kb diff main\n  kb diff main --markdown > comment.md\n  kb diff main --json > diff.json",
        _configure_diff,
        _run_diff,
    ),
    Command(
        "review",
        "the review of a pull request, by this checkout's code with the pull request's files "
        "as data only: every changed path accounted for, the knowledge diff, the words changed",
        "kb review main HEAD --markdown > comment.md",
        _configure_review,
        _run_review,
    ),
    Command(
        "synth",
        "write realistic synthetic run files (marked synthetic) for scale tests",
        "kb synth --out kb-synth --count 1000\n"
        "  kb check --root kb-synth kb-synth/runs kb-synth/content/hardware",
        _configure_synth,
        _run_synth,
    ),
    Command(
        "render",
        "lay out the site with Hugo, run and configuration pages again only when changed",
        "kb derive && kb charts && kb render public.new",
        _configure_render,
        _run_render,
    ),
    Command(
        "index",
        "index a site Hugo built for search (Pagefind), byte-stable from build to build",
        "kb derive && kb charts && kb render site && kb index site --cache build/cache/search",
        _configure_index,
        _run_index,
    ),
    Command(
        "docgen",
        "regenerate docs/data-format.md from the run and hardware-note schemas",
        "kb docgen\n  kb docgen --check",
        _configure_docgen,
        _run_docgen,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kb",
        description="pgbench-kb: parse, check, import and publish pgbench results.",
        epilog="Run 'kb COMMAND --help' for a command's options and an example.",
    )
    parser.add_argument("--version", action="version", version=f"kb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.summary,
            description=command.summary[0].upper() + command.summary[1:] + ".",
            epilog=f"example:\n  {command.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.configure(p)
        p.set_defaults(handler=command.run)
    return parser


def _interrupt_once(_signum: int, _frame: object) -> None:
    """Ctrl-C: stop the command (KeyboardInterrupt); a second Ctrl-C while it unwinds —
    freeing 10,000 runs' data takes a moment — is the same request and is ignored.

    Regression: a second Ctrl-C during kb derive ended it with a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt_once)
    try:
        return args.handler(args)
    except KbError as exc:
        from pgbench_kb.runs.check import one_line

        for problem in getattr(exc, "problems", [exc]):
            print(f"error: {one_line(str(problem), 1000)}", file=sys.stderr)
        return exc.exit_status
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # (when it did not come through Ctrl-C)
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
