"""The ``kb`` command line: the only part of the package that talks to a terminal.

Each command is a pair of small functions (in ``input_commands``, ``site_commands``,
``knowledge_commands`` and ``tool_commands``): its options, and its run, which takes the parsed
arguments and returns an exit status.
Domain errors (``KbError``) become one ``error: …`` line on stderr (one per problem when an
import finds several) and the error's exit status;
nothing else is caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pgbench_kb import __version__
from pgbench_kb.cli.input_commands import (
    configure_check,
    configure_import,
    configure_parse,
    run_check,
    run_import,
    run_parse,
)
from pgbench_kb.cli.knowledge_commands import (
    configure_compare,
    configure_diff,
    configure_review,
    run_compare,
    run_diff,
    run_review,
)
from pgbench_kb.cli.site_commands import (
    configure_charts,
    configure_derive,
    configure_index,
    configure_render,
    run_charts,
    run_derive,
    run_index,
    run_render,
)
from pgbench_kb.cli.tool_commands import (
    configure_docgen,
    configure_plan,
    configure_synth,
    run_docgen,
    run_plan,
    run_synth,
)
from pgbench_kb.errors import KbError


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    example: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: tuple[Command, ...] = (
    Command(
        "parse",
        "read pgbench output or a log (8.0 to 18) and print it as JSON",
        "kb parse pgbench-output.txt\n  kb parse pgbench_log.1234 pgbench_log.1234.1\n"
        "  kb parse - < pgbench-output.txt",
        configure_parse,
        run_parse,
    ),
    Command(
        "import",
        "turn raw pgbench output and its metadata into a new run file",
        "kb import out.txt --machine my-box --set provenance.recorded_at=2026-11-20T10:00:00Z "
        "--set postgres.version=18.1 --set 'postgres.settings={}' "
        "--set storage.data.array.media=ssd",
        configure_import,
        run_import,
    ),
    Command(
        "check",
        "validate run files, hardware notes and every other file under content/ and data/; "
        "every problem as path:line: field: message",
        "kb check\n  kb check data/runs/2006 content/hardware/hp-proliant-dl380-g4.md"
        "\n  kb check content/guides/adding-results.md",
        configure_check,
        run_check,
    ),
    Command(
        "derive",
        "write the generated pages, data and chart specs that Hugo lays out",
        "kb derive && kb charts && hugo",
        configure_derive,
        run_derive,
    ),
    Command(
        "charts",
        "draw the Vega-Lite chart specs kb derive wrote as SVG (cached by spec)",
        "kb derive && kb charts && hugo",
        configure_charts,
        run_charts,
    ),
    Command(
        "plan",
        "expand a bench profile into its trials (one line each, for scripts/bench.sh)",
        "kb plan smoke",
        configure_plan,
        run_plan,
    ),
    Command(
        "compare",
        "controlled comparisons of groups of repeats (tps, latency and per-transaction costs), "
        "with noise-aware verdicts, curves, stability, interactions and findings",
        "kb compare --machine hp-proliant-dl380-g4 --factor storage.data.array.level\n"
        "  kb compare --factor benchmark.clients\n"
        "  kb compare --json > comparisons.json",
        configure_compare,
        run_compare,
    ),
    Command(
        "diff",
        "what a change does to the knowledge: runs, comparisons, verdicts that flip, key "
        "findings, claims, new check messages, and what a reviewer must look at",
        "kb diff main\n  kb diff main --markdown > comment.md\n  kb diff main --json > diff.json",
        configure_diff,
        run_diff,
    ),
    Command(
        "review",
        "the review of a pull request, by this checkout's code with the pull request's files "
        "as data only: every changed path accounted for, the knowledge diff, the words changed",
        "kb review main HEAD --markdown > comment.md",
        configure_review,
        run_review,
    ),
    Command(
        "synth",
        "write realistic synthetic run files (marked synthetic) for scale tests",
        "kb synth --out kb-synth --count 200\n"
        "  kb check --root kb-synth kb-synth/runs kb-synth/content/hardware",
        configure_synth,
        run_synth,
    ),
    Command(
        "render",
        "lay out the site with Hugo, run and configuration pages again only when changed",
        "kb derive && kb charts && kb render public.new",
        configure_render,
        run_render,
    ),
    Command(
        "index",
        "index a site Hugo built for search (Pagefind), byte-stable from build to build",
        "kb derive && kb charts && kb render site && kb index site --cache build/cache/search",
        configure_index,
        run_index,
    ),
    Command(
        "docgen",
        "regenerate docs/data-format.md from the run and hardware-note schemas",
        "kb docgen\n  kb docgen --check",
        configure_docgen,
        run_docgen,
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
