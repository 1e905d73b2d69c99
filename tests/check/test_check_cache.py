"""kb check's per-file cache (``ROOT/build/cache/check.pickle``): reused only while everything a
file's findings came from is unchanged. Each test changes one input and sees the report change;
one test sees that an unchanged file is not checked again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checkkit import good_run, report_of, write
from pgbench_kb.runs.check import collect


@pytest.fixture
def cached(project: Path) -> Path:
    (project / "build" / "cache").mkdir(parents=True)
    return project


def touch_later(path: Path) -> None:
    """A new modification time even on a file system with coarse timestamps."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    checked: list[str] = []
    real = collect._check_one

    def check_one(job):
        checked.append(job[0])
        return real(job)

    monkeypatch.setattr(collect, "_check_one", check_one)
    return checked


def test_an_unchanged_file_is_not_checked_again(cached, monkeypatch):
    run = write(cached, good_run())
    first = report_of(cached, run)
    assert (cached / "build" / "cache" / "check.pickle").is_file()
    checked = counting(monkeypatch)
    assert report_of(cached, run) == first
    assert checked == []


def test_without_the_cache_folder_nothing_is_kept(project):
    run = write(project, good_run())
    report_of(project, run)
    assert not (project / "build").exists()


def test_an_edited_run_file_is_checked_again(cached):
    data = good_run()
    run = write(cached, data)
    assert " 0 error(s)" in report_of(cached, run)
    data["machine"] = "no-such-box"
    write(cached, data)
    touch_later(run)
    assert "no hardware note content/hardware/no-such-box.md" in report_of(cached, run)


def test_a_changed_raw_file_is_checked_again(cached):
    data = good_run()
    run = write(cached, data)
    assert " 0 error(s)" in report_of(cached, run)
    raw = cached / data["raw"][0]["path"]
    raw.write_bytes(raw.read_bytes() + b"\n")
    touch_later(raw)
    assert "sha256" in report_of(cached, run).split("checked")[0]


def test_a_removed_hardware_note_is_seen(cached):
    run = write(cached, good_run())
    assert " 0 error(s)" in report_of(cached, run)
    (cached / "content" / "hardware" / "test-box.md").unlink()
    assert "no hardware note content/hardware/test-box.md" in report_of(cached, run)


def test_rules_across_files_see_an_added_and_a_removed_run(cached):
    data = good_run()
    run = write(cached, data)
    folder = cached / "data" / "runs"
    assert " 0 error(s)" in report_of(cached, folder)
    twin = write(cached, data | {"id": "twin-of-the-good-run"})
    with_twin = report_of(cached, folder)
    assert "checked 2 run file(s)" in with_twin
    assert "twin-of-the-good-run" in with_twin.split("checked")[0]
    twin.unlink()
    assert report_of(cached, folder) == report_of(cached, run)


def test_a_broken_file_is_reported_every_time(cached):
    run = cached / "data" / "runs" / "broken.yaml"
    run.parent.mkdir(parents=True, exist_ok=True)
    run.write_text("id: [unclosed\n", encoding="utf-8")
    first = report_of(cached, run)
    assert "1 error(s)" in first
    assert report_of(cached, run) == first
