"""kb check reads run files with ``runfile.read_run``: canonical ones with the fast reader
(``runs/fastyaml.py``), anything else with the full loader; the report must be byte for byte
the one the full loader alone gives: same findings, lines, fields and messages, and the same
summaries for the rules across files."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from checkkit import BAD, FIXTURE_ROOT, GOOD, good_run, report_of, write
from pgbench_kb.runs import runfile
from pgbench_kb.runs.check import check_paths, check_run, format_report
from pgbench_kb.runs.check import run as run_module
from pgbench_kb.runs.runfile import dump_run

REPO = Path(__file__).resolve().parents[2]
TODAY = "20261123"


def one_of_each_form() -> list[Path]:
    """Every YAML file of tests/ (the odd and broken ones), and of data/runs the first file of
    each set of fields (after list indexes): the fast reader reads every run file exactly as
    the full loader does (data, types and lines: tests/runs/test_fastyaml_exact.py), and
    check_run's ``fast`` only chooses the reader, so the findings of the other run files
    follow; a file of each form shows the rules see the same thing either way."""
    forms: dict[frozenset[str], Path] = {}
    for path in sorted((REPO / "data" / "runs").rglob("*.yaml")):
        found = runfile.fast_load_lines(path.read_text(encoding="utf-8"))
        keys = found.lines if found else [str(path)]  # (one the fast reader refuses: kept)
        forms.setdefault(frozenset(re.sub(r"\.\d+(?=\.|$)", "", key) for key in keys), path)
    return sorted(forms.values()) + sorted((REPO / "tests").rglob("*.yaml"))


YAML_FILES = one_of_each_form()

sys.path.insert(0, str(REPO / "tests" / "runs"))
from trickyyaml import GIVES_UP, READS  # noqa: E402


def both_ways(path: Path, root: Path):
    """(fast, full): check_run's findings and summary each way."""
    return (
        check_run(path, root, today=TODAY, fast=True),
        check_run(path, root, today=TODAY, fast=False),
    )


@pytest.mark.parametrize(
    "path", YAML_FILES, ids=[p.relative_to(REPO).as_posix() for p in YAML_FILES]
)
def test_same_findings_and_summary_on_a_repository_file_of_each_form(path: Path):
    """Per file, findings and summary (what the rules across files and the report are made
    of) are equal, so the report on the project's data is too."""
    fast, full = both_ways(path, REPO)
    assert fast == full


def report(paths: list[str], root: Path) -> str:
    return format_report(check_paths(paths, root=root, jobs=1))


def test_same_report_on_the_check_cases(monkeypatch: pytest.MonkeyPatch):
    paths = [str(BAD), str(GOOD)]
    fast = report(paths, FIXTURE_ROOT)
    monkeypatch.setattr(runfile, "fast_load_lines", lambda _text: None)
    assert report(paths, FIXTURE_ROOT) == fast
    assert fast.count("\n") > 50  # the bad cases do report problems


TRICKY = {**GIVES_UP, **{name: text for name, (text, _) in READS.items()}}


@pytest.mark.parametrize("text", TRICKY.values(), ids=TRICKY.keys())
def test_tricky_files_are_reported_as_before(project: Path, text: str):
    path = project / "data" / "runs" / "tricky.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    fast, full = both_ways(path, project)
    assert fast == full


def test_tricky_values_in_a_good_run_are_reported_as_before(project: Path):
    """The same tricky values in an otherwise good run file, so the rules past the schema run
    too: each one reported exactly as the full loader alone reports it."""
    text = dump_run(good_run())
    cases = [
        ("  tps: ", "  tps: 012"),
        ("  tps: ", "  tps: .nan"),
        ("  tps: ", "  tps: 1_000.5"),
        ("machine: ", "machine: yes"),
        ("machine: ", "machine: ~"),
        ("machine: ", "machine: 2024-01-02"),
        ("machine: ", "machine:  test-box"),
        ("machine: ", "machine:\ttest-box"),
        ("machine: ", "machine: test-box # the box"),
        ("machine: ", "machine: 'test-\n  box'"),
        ("machine: ", "machine: test-box\n\n  again"),
    ]
    for index, (prefix, replacement) in enumerate(cases):
        lines = text.split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
        lines[at] = replacement
        path = project / "data" / "runs" / f"case-{index}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
        fast, full = both_ways(path, project)
        assert fast == full, replacement


def test_good_run_is_read_fast_and_clean(project: Path):
    """The fast path is really taken on a canonical file (else this file tests nothing)."""
    path = write(project, good_run())
    text = path.read_text(encoding="utf-8")
    assert runfile.fast_load_lines(text) is not None
    findings, summary = check_run(path, project, today=TODAY)
    assert findings == [] and summary is not None and summary.lines["results.tps"] > 1


def test_duplicate_key_still_gets_its_located_error(project: Path):
    """Regression guard: a duplicate key must never be read by the fast path (which would keep
    one value silently); the full loader names both lines."""
    text = dump_run(good_run())
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("machine: "))
    lines.insert(first + 1, "machine: other-box")
    path = project / "data" / "runs" / "dup.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    assert report_of(project, path) == (
        f"data/runs/dup.yaml:{first + 2}: machine: duplicate key 'machine' "
        f"(first at line {first + 1}) (keep one of them)\n"
        "checked 1 run file(s) and 0 hardware note(s): 1 error(s), 0 warning(s)\n"
    )


def test_inside_agrees_with_resolving_every_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``inside`` resolves a file's folder once per folder: through linked folders, a linked
    file, ``..`` and relative paths it must answer as resolving the whole path would."""
    runs = tmp_path / "root" / "data" / "runs"
    (runs / "2025").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for folder in (runs / "2025", outside):
        (folder / "a.yaml").write_text("x: 1\n", encoding="utf-8")
    (tmp_path / "linked-runs").symlink_to(runs)
    (runs / "out.yaml").symlink_to(outside / "a.yaml")
    (outside / "in.yaml").symlink_to(runs / "2025" / "a.yaml")
    (runs / "away").symlink_to(outside)
    monkeypatch.chdir(tmp_path)
    paths = [
        runs / "2025" / "a.yaml",
        tmp_path / "linked-runs" / "2025" / "a.yaml",
        runs / "out.yaml",
        outside / "in.yaml",
        outside / "a.yaml",
        runs / "away" / "a.yaml",
        runs / "away" / ".." / "2025" / "a.yaml",
        Path("root/data/runs/2025/a.yaml"),
        Path("elsewhere/a.yaml"),
        Path("linked-runs/2025/../2025/a.yaml"),
    ]
    top = os.path.realpath(runs)
    for path in paths:
        expected = os.path.realpath(path).startswith(top + os.sep)
        assert run_module.inside(path, runs) is expected, path
        assert run_module.inside(path, tmp_path / "linked-runs") is expected, path
