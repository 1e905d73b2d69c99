"""The harness's and maintainers' tools: ``kb plan``, ``kb synth``, ``kb docgen``.

Each ``configure_X`` adds the options of ``kb X``; each ``run_X`` runs it and returns its exit
status (domain errors are raised, and turned into one line by ``cli.main``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


# kb plan


def configure_plan(p: argparse.ArgumentParser) -> None:
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


def run_plan(args: argparse.Namespace) -> int:
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


# kb synth


def configure_synth(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, required=True, help="folder to write into (not data/)")
    p.add_argument("--count", type=int, default=1000, help="number of run files (default: 1000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")


def run_synth(args: argparse.Namespace) -> int:
    from pgbench_kb.runs.synth import generate

    print(generate(args.out, count=args.count, seed=args.seed))
    return 0


# kb docgen


def configure_docgen(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    p.add_argument(
        "--check", action="store_true", help="only report whether the file is up to date"
    )


def run_docgen(args: argparse.Namespace) -> int:
    from pgbench_kb.runs import docgen

    if args.check:
        if docgen.is_fresh(args.root):
            print(f"{docgen.DOC_PATH} is up to date")
            return 0
        print(f"{docgen.DOC_PATH} is stale: run `kb docgen`", file=sys.stderr)
        return 1
    print(docgen.write(args.root))
    return 0
