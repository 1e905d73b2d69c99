"""Golden tests: every input in fixtures/ is parsed and compared with the JSON beside it.

An input is a file ``<name>.txt`` or ``<name>.log``, or a folder ``<name>/`` whose files are
parsed together (per-thread logs of one run, or a run's output with its logs). The expected
result is ``<name>.json``; for input the parser must refuse it is ``{"error": "<message>"}``.

Add a test by dropping an input in fixtures/ and running once with ``KB_UPDATE_GOLDENS=1`` to
write its JSON — then read that JSON against the input before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kbtest import assert_golden
from pgbench_kb.errors import ParseError
from pgbench_kb.parse import parse_paths

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_inputs() -> list[Path]:
    """Every input in fixtures/: files other than .json, and folders."""
    return sorted(p for p in FIXTURES.iterdir() if p.suffix != ".json")


def input_paths(entry: Path) -> list[str]:
    """The paths to parse for one fixture, relative to fixtures/ so that results are stable."""
    if entry.is_dir():
        return [f"{entry.name}/{p.name}" for p in sorted(entry.iterdir())]
    return [entry.name]


def parse_fixture(entry: Path) -> dict[str, Any]:
    """The parse result of a fixture, or ``{"error": message}``; run from inside fixtures/."""
    cwd = os.getcwd()
    os.chdir(FIXTURES)
    try:
        return parse_paths(input_paths(entry))
    except ParseError as exc:
        return {"error": str(exc)}
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("entry", fixture_inputs(), ids=lambda p: p.name)
def test_golden(entry: Path) -> None:
    golden = entry.with_suffix(".json") if entry.is_file() else entry.parent / f"{entry.name}.json"
    result = json.loads(json.dumps(parse_fixture(entry)))
    assert_golden(golden, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
