"""The commands that build the site: ``kb derive``, ``kb charts``, ``kb index``, ``kb render``.

Each ``configure_X`` adds the options of ``kb X``; each ``run_X`` runs it and returns its exit
status (domain errors are raised, and turned into one line by ``cli.main``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


# kb derive


def configure_derive(p: argparse.ArgumentParser) -> None:
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


def run_derive(args: argparse.Namespace) -> int:
    from pgbench_kb.derive.site import derive_site

    summary = derive_site(root=args.root, out=args.out, runs_dir=args.runs)
    print(summary)
    return 0


# kb charts


def configure_charts(p: argparse.ArgumentParser) -> None:
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


def run_charts(args: argparse.Namespace) -> int:
    from pgbench_kb.derive.charts import SPECS_DIR, draw_charts

    specs = args.specs or args.root / "build" / "site" / SPECS_DIR
    out = args.out or args.root / "build" / "charts"
    done = draw_charts(specs, out, args.root / "build" / "cache" / "charts")
    print(
        f"charts: {done.charts:,} in {out} in {done.seconds:.1f} s ({done.drawn:,} drawn by "
        f"vl-convert, {done.reused:,} from the cache, {done.removed:,} old one(s) removed)"
    )
    return 0


# kb index


def configure_index(p: argparse.ArgumentParser) -> None:
    p.add_argument("site", type=Path, metavar="SITE", help="the folder Hugo wrote (public/)")
    p.add_argument(
        "--cache",
        type=Path,
        metavar="DIR",
        help="keep the index here and index again only when an indexed page changed "
        "(scripts/site.sh: ROOT/build/cache/search); without it, the site is indexed",
    )


def run_index(args: argparse.Namespace) -> int:
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


# kb render


def configure_render(p: argparse.ArgumentParser) -> None:
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


def run_render(args: argparse.Namespace) -> int:
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
