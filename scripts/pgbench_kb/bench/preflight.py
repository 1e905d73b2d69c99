"""What a person declares for a bench, checked before anything starts.

``scripts/bench.sh`` runs this before it creates a temporary folder or a server::

    python -m pgbench_kb.bench.preflight --machine SLUG [--meta FILE] [--set KEY=VALUE]…
                                         [--mask-hostnames]

The machine slug, the ``--meta`` file and every ``--set`` are checked exactly as ``kb import``
will check them for each trial (``pgbench_kb.runs.import_declared``), so that a typo stops the bench
at once instead of after the first trial has run and been thrown away. Setting values and
client counts a server would refuse are checked by bench.sh itself, with the server's own
binary, before the server first starts (``kb_server_check_settings``).

stdout: nothing. stderr: one ``error: …`` line per problem, naming the field and the fix.
Exit: 0 when everything is acceptable, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pgbench_kb.errors import KbError, RunImportError
from pgbench_kb.runs.import_declared import declared_values


def check_declared(machine: str | None, meta: Path | None, sets: Sequence[str]) -> None:
    """Raise the ``KbError`` that ``kb import`` would raise for these declarations."""
    if meta is not None and not meta.is_file():
        raise RunImportError("no such file", path=str(meta), field="--meta", hint="check the path")
    declared_values(meta, list(sets), machine)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pgbench_kb.bench.preflight",
        description="check a bench's --machine, --meta and --set before anything starts",
    )
    parser.add_argument("--machine")
    parser.add_argument("--meta", type=Path)
    parser.add_argument("--set", dest="sets", action="append", default=[])
    parser.add_argument("--mask-hostnames", action="store_true")
    args = parser.parse_args(argv)
    try:
        check_declared(args.machine, args.meta, args.sets)
    except KbError as exc:
        for problem in getattr(exc, "problems", [exc]):
            text = " ".join(str(problem).split())
            print(
                f"error: {text} (checked before the bench started: nothing was run)",
                file=sys.stderr,
            )
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
