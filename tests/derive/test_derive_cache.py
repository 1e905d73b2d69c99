"""kb derive's cache of prepared runs (``build/cache/derive-runs.pickle``) and its rewrite of only
the changed files: never a stale page. Each test changes one input (a run edited, removed,
added; a raw output; a hardware note; the code) and sees the output change, and that the runs
it did not touch were not prepared again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_derive import FIXTURES, fixture_root

from pgbench_kb.derive import prepared
from pgbench_kb.derive.site import derive_site

RUN_ID = "20261122T101500Z-ci-box-tpcb-like-s2-c4-1f3a9c2e"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = fixture_root(tmp_path)
    derive_site(root=root)
    return root


@pytest.fixture
def prepared_files(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run files ``kb derive`` prepares (reads and computes) from here on."""
    seen: list[str] = []
    real = prepared._prepare_file

    def prepare_file(job):
        seen.append(Path(job[0]).name)
        return real(job)

    monkeypatch.setattr(prepared, "_prepare_file", prepare_file)
    return seen


def page(root: Path, run_id: str) -> dict:
    text = (root / "build" / "site" / "content" / "runs" / f"{run_id}.md").read_text("utf-8")
    return json.loads(text)


def run_file(root: Path) -> Path:
    return root / "data" / "runs" / "measured-example.yaml"


def later(path: Path) -> None:
    """A modification time that differs even on a file system with coarse timestamps."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def test_nothing_changed_nothing_prepared(root, prepared_files):
    before = page(root, RUN_ID)
    derive_site(root=root)
    assert prepared_files == []
    assert page(root, RUN_ID) == before


def test_an_edited_run_shows_its_new_figures(root, prepared_files):
    path = run_file(root)
    path.write_text(path.read_text("utf-8").replace("tps: 4399.842018", "tps: 5123.5"), "utf-8")
    later(path)
    derive_site(root=root)
    assert prepared_files == ["measured-example.yaml"]
    figures = {f["label"]: f["value"] for f in page(root, RUN_ID)["params"]["figures"]}
    assert figures["Throughput"].startswith("5,124")
    runs_json = (root / "build" / "site" / "static" / "downloads" / "runs.json").read_text()
    assert "5123.5" in runs_json and "4399.842018" not in runs_json


def test_a_removed_run_leaves_no_page_and_an_added_one_gets_its_page(root, prepared_files):
    pages = root / "build" / "site" / "content" / "runs"
    run_file(root).unlink()
    derive_site(root=root)
    assert not (pages / f"{RUN_ID}.md").exists()
    assert prepared_files == []
    downloads = json.loads((root / "build/site/static/downloads/runs.json").read_text())
    assert RUN_ID not in {r["id"] for r in downloads["runs"]}
    # Back under another name and id: a new page, prepared once.
    text = (FIXTURES / "measured-example.yaml").read_text("utf-8")
    (root / "data" / "runs" / "again.yaml").write_text(text.replace(RUN_ID, "again-1"), "utf-8")
    derive_site(root=root)
    assert prepared_files == ["again.yaml"]
    assert page(root, "again-1")["params"]["run"]["id"] == "again-1"


def test_a_raw_output_that_appears_or_changes_is_shown(root, prepared_files):
    raw = page(root, RUN_ID)["params"]["raw"]
    assert raw["text"] is None  # the fixture's raw output is not there
    path = root / raw["path"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("pgbench output, first version\n", "utf-8")
    derive_site(root=root)
    assert prepared_files == ["measured-example.yaml"]
    assert page(root, RUN_ID)["params"]["raw"]["text"] == "pgbench output, first version\n"
    path.write_text("pgbench output, second version\n", "utf-8")
    later(path)
    derive_site(root=root)
    assert page(root, RUN_ID)["params"]["raw"]["text"] == "pgbench output, second version\n"


def test_a_changed_hardware_note_is_shown(root, prepared_files):
    notes = root / "content" / "hardware"
    notes.mkdir(parents=True)
    note = notes / "ci-box.md"
    note.write_text("---\ntitle: CI box\ncpu:\n  model: Old CPU 1\n---\nA box.\n", "utf-8")
    derive_site(root=root)
    machines = root / "build" / "site" / "data" / "machines.json"
    assert "Old CPU 1" in machines.read_text("utf-8")
    note.write_text("---\ntitle: CI box\ncpu:\n  model: New CPU 2\n---\nA box.\n", "utf-8")
    later(note)
    derive_site(root=root)
    assert "New CPU 2" in machines.read_text("utf-8")
    assert "Old CPU 1" not in machines.read_text("utf-8")
    assert prepared_files == []


def test_new_code_prepares_every_run_again(root, prepared_files, monkeypatch):
    monkeypatch.setattr(prepared, "code_fingerprint", lambda: "another version of the code")
    derive_site(root=root)
    assert len(prepared_files) == len(list((root / "data" / "runs").glob("*.yaml")))


def test_a_damaged_cache_is_ignored(root, prepared_files):
    cache = root / "build" / "cache" / prepared.CACHE_NAME
    cache.write_bytes(b"not a pickle")
    before = page(root, RUN_ID)
    derive_site(root=root)
    assert page(root, RUN_ID) == before
    assert len(prepared_files) == len(list((root / "data" / "runs").glob("*.yaml")))


def test_a_derivation_to_another_folder_matches_a_cold_one(root, tmp_path):
    """Warm (from the cache) and cold derivations write the same bytes."""
    warm = tmp_path / "warm"
    derive_site(root=root, out=warm)
    shutil.rmtree(root / "build" / "cache")
    cold = tmp_path / "cold"
    derive_site(root=root, out=cold)
    files = sorted(p.relative_to(warm) for p in warm.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(cold) for p in cold.rglob("*") if p.is_file())
    for name in files:
        if name.name != ".kb-derive-manifest.json":
            assert (warm / name).read_bytes() == (cold / name).read_bytes(), name
