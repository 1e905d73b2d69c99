"""The commands that say what the runs show: ``kb compare``, ``kb diff``, ``kb review``.

Each ``configure_X`` adds the options of ``kb X``; each ``run_X`` runs it and returns its exit
status (domain errors are raised, and turned into one line by ``cli.main``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


# kb compare


def configure_compare(p: argparse.ArgumentParser) -> None:
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


def run_compare(args: argparse.Namespace) -> int:
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


# kb diff


def configure_diff(p: argparse.ArgumentParser) -> None:
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


def run_diff(args: argparse.Namespace) -> int:
    from pgbench_kb.review.comment import as_markdown, as_text
    from pgbench_kb.review.diff import knowledge_diff

    found = knowledge_diff(args.base, args.root.resolve())
    if args.json:
        json.dump(found, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(as_markdown(found) if args.markdown else as_text(found))
    return 0


# kb review


def configure_review(p: argparse.ArgumentParser) -> None:
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


def run_review(args: argparse.Namespace) -> int:
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
