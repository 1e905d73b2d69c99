"""The bad-input corpus: every file (or folder) in tests/check/bad/ is checked as a contributor
would submit it, and the whole report must equal its ``.expected`` file exactly — the path shown
as ``{path}``. Nothing may crash; every case must fail with exit status 1.

Add a case by dropping a file in bad/ and writing its .expected file (or run the tests with
KB_UPDATE_GOLDENS=1 once, then read every new .expected file before committing it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checkkit import BAD, stage
from kbtest import UPDATE_GOLDENS, assert_golden
from pgbench_kb.runs.check import check_paths, format_report

CASES = sorted(p for p in BAD.iterdir() if p.is_dir() or p.suffix in {".yaml", ".md"})


def expected_path(case: Path) -> Path:
    return BAD / f"{case.stem if case.is_file() else case.name}.expected"


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 30


def test_every_case_has_its_expected_message() -> None:
    missing = [c.name for c in CASES if not expected_path(c).is_file()]
    assert not missing or UPDATE_GOLDENS


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_bad_input(case: Path, project: Path) -> None:
    dest = stage(case, project)
    report = check_paths([str(dest)], root=project)
    text = format_report(report).replace(str(dest), "{path}")
    expected = expected_path(case)
    assert_golden(expected, text)
    assert report.errors, "a bad input must produce at least one error"


def test_cli_on_the_whole_corpus_fails_cleanly(project: Path) -> None:
    """All cases at once through the real CLI: exit 1, one line per problem, no traceback."""
    for case in CASES:
        stage(case, project)
    kb = Path(sys.executable).parent / "kb"
    done = subprocess.run(
        [str(kb), "check", "--root", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[-1].startswith("checked ")


def test_huge_file_is_refused_before_parsing(project: Path) -> None:
    path = project / "data" / "runs" / "huge.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    line = "# " + "x" * 1022 + "\n"
    path.write_text("schema_version: 1\n" + line * 5 * 1024, encoding="utf-8")
    report = check_paths([str(path)], root=project)
    assert format_report(report).replace(str(path), "{path}") == (
        "{path}:1: (file): file is 5.0 MiB; the limit is 4 MiB (keep long series in the raw "
        "output, not in the run file)\n"
        "checked 1 run file(s) and 0 hardware note(s): 1 error(s), 0 warning(s)\n"
    )
