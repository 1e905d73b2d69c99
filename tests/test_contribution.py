"""A contributor's first pull request (issue 35): setting names and values checked with "did
you mean", settings from SHOW ALL or postgresql.conf, every problem of an import at once, smoke
runs marked and refused among a pull request's files, the contributor's own files first in
``kb check --changed``. Through the real ``kb`` CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kbtest import run_kb, shipped_root
from pgbench_kb.runs.pgsettings import (
    major_of,
    read_settings_text,
    settings_of,
    settings_to_record,
    value_problem,
)
from pgbench_kb.runs.runfile import load_yaml_file
from pgbench_kb.runs.tryout import is_smoke, label

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "tests" / "parse" / "fixtures" / "pg18-tpcb-P1-r.txt"
WHEN = "provenance.recorded_at=2026-11-20T10:00:00Z"
MEASURED = ("--set", "postgres.version=18.1", "--set", "storage.data.filesystem=ext4")
NOTE = "---\nschema_version: 1\ntitle: Box\ndescription: A box.\nroles: [server]\n---\nA box.\n"

SHOW_ALL_ALIGNED = """\
            name            |  setting  |                 description
----------------------------+-----------+---------------------------------------------
 allow_alter_system         | on        | Allows running the ALTER SYSTEM command.
 data_directory             | /srv/pg   | Sets the server's data directory.
 fsync                      | off       | Forces synchronization of updates to disk.
 shared_buffers             | 4GB       | Sets the number of shared memory buffers.
 max_connections            | 100       | Sets the maximum number of connections.
 synchronous_commit         | off       | Sets the current transaction's synchronization.
(6 rows)
"""
SHOW_ALL_UNALIGNED = """\
name|setting|description
fsync|off|Forces synchronization of updates to disk.
shared_buffers|128MB|Sets the number of shared memory buffers.
work_mem|64MB|Sets the maximum memory to be used for query workspaces.
(3 rows)
"""
POSTGRESQL_CONF = """\
# a comment
shared_buffers = 2GB            # min 128kB
#work_mem = 4MB
checkpoint_timeout = '15min'
log_line_prefix = '%m [%p] # not a comment'
"""


def kb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = root.parent / f"{root.name}.gitconfig"
    config.write_text("[user]\n\tname = Test Contributor\n", encoding="utf-8")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1"}
    return run_kb(*args, env=env, cwd=root)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    notes = tmp_path / "root" / "content" / "hardware"
    notes.mkdir(parents=True)
    (notes / "box.md").write_text(NOTE, encoding="utf-8")
    return tmp_path / "root"


# ---------------------------------------------------------------------------------------------
# The settings lists


def test_lists_exist_for_the_versions_the_knowledge_base_holds() -> None:
    assert settings_of("18") is not None and settings_of("15") is not None
    assert settings_of("8.0") is None
    assert (major_of("18.6"), major_of("17devel"), major_of("8.4.2")) == ("18", "17", "8.4")


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("fsync", "maybe", "'maybe' is not on or off (fsync is a boolean)"),
        ("fsync", False, None),
        ("shared_buffers", "8GB", None),
        ("shared_buffers", "fast", "'fast' is not a number (shared_buffers is a whole number"),
        ("checkpoint_timeout", "5kB", "'5kB': the unit 'kB' does not fit checkpoint_timeout"),
        ("wal_sync_method", "fdatasinc", "(did you mean fdatasync?)"),
        ("synchronous_commit", False, None),
        ("max_connections", 0, "0 is outside max_connections's range"),
    ],
)
def test_values_are_checked_against_the_list(name: str, value: object, problem: str | None):
    known = settings_of("18")
    assert known is not None
    found = value_problem(value, known[name])
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_show_all_aligned_keeps_what_is_not_at_its_default() -> None:
    given = read_settings_text(SHOW_ALL_ALIGNED, source="show-all.txt")
    assert given["shared_buffers"] == "4GB" and given["data_directory"] == "/srv/pg"
    assert settings_to_record(given, "18") == {
        "fsync": False,
        "shared_buffers": "4GB",
        "synchronous_commit": "off",
    }


def test_show_all_unaligned_and_postgresql_conf() -> None:
    given = read_settings_text(SHOW_ALL_UNALIGNED, source="x")
    assert settings_to_record(given, "18") == {"fsync": False, "work_mem": "64MB"}
    conf = read_settings_text(POSTGRESQL_CONF, source="postgresql.conf")
    assert conf == {
        "shared_buffers": "2GB",
        "checkpoint_timeout": "15min",
        "log_line_prefix": "%m [%p] # not a comment",
    }


# ---------------------------------------------------------------------------------------------
# kb import


def test_a_misspelled_setting_is_refused_with_did_you_mean(root: Path) -> None:
    """Regression (issue 35): `shared_bufers: 8GB` in a --meta file imported, and kb check said
    0 errors; the run then claimed the default shared_buffers."""
    meta = root / "meta.yaml"
    meta.write_text("postgres:\n  settings:\n    shared_bufers: 8GB\n", encoding="utf-8")
    done = kb(root, "import", str(OUTPUT), "--machine", "box", "--set", WHEN,
              "--meta", str(meta), *MEASURED)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == (
        "error: postgres.settings.shared_bufers: PostgreSQL 18 has no setting named "
        "'shared_bufers' (did you mean shared_buffers?)\n"
    )
    assert not (root / "data").exists()


def test_every_problem_of_an_import_at_once(root: Path) -> None:
    """Regression (issue 35): missing metadata came in rounds — first only
    provenance.recorded_at, then one 600-character line of three problems, contradictions
    hidden until then. Now each problem is one line, all in the first round."""
    done = kb(root, "import", str(OUTPUT), "--machine", "box", "--set", "benchmark.threads=9",
              "--set", "postgres.settings={fsync: maybe}")  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert all(line.startswith("error: ") and len(line) < 300 for line in lines)
    fields = [line.split(": ")[1] for line in lines]
    assert fields == [
        "provenance.recorded_at",
        "postgres.version",
        "storage.data",
        "benchmark.threads",
        "benchmark.threads",
    ]
    assert "9 but the raw output says 2" in lines[-1]


def test_a_duplicate_is_said_with_the_other_problems(root: Path) -> None:
    assert kb(root, "import", str(OUTPUT), "--machine", "box", "--set", WHEN,
              "--set", "postgres.settings={}", *MEASURED).returncode == 0  # fmt: skip
    done = kb(root, "import", str(OUTPUT), "--machine", "box", *MEASURED,
              "--set", "provenance.recorded_at=2026-11-21")  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0].startswith("error: postgres.settings: missing:")
    assert lines[1].startswith("error: RAW: the same raw output")


def test_settings_from_show_all(root: Path) -> None:
    dump = root / "show-all.txt"
    dump.write_text(SHOW_ALL_ALIGNED, encoding="utf-8")
    done = kb(root, "import", str(OUTPUT), "--machine", "box", "--set", WHEN, *MEASURED,
              "--settings-from", str(dump), "--set", "postgres.settings.work_mem=8MB")  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(root / done.stdout.strip()).data
    assert run["postgres"]["settings"] == {
        "fsync": False,
        "shared_buffers": "4GB",
        "synchronous_commit": "off",
        "work_mem": "8MB",
    }
    assert "postgres.settings" in run["provenance"]["declared"]


def test_settings_from_a_file_that_holds_none(root: Path) -> None:
    empty = root / "empty.txt"
    empty.write_text("\n# nothing\n", encoding="utf-8")
    done = kb(root, "import", str(OUTPUT), "--machine", "box", "--set", WHEN, *MEASURED,
              "--settings-from", str(empty))  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: --settings-from: {empty}: no setting found")


# ---------------------------------------------------------------------------------------------
# Smoke runs, and kb check --changed


def _smoke_run(root: Path) -> Path:
    done = kb(root, "import", str(OUTPUT), "--machine", "box", "--set", WHEN, *MEASURED,
              "--set", "postgres.settings={}", "--set", "provenance.harness.name=pgbench-kb",
              "--set", "provenance.harness.profile=smoke")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root / done.stdout.strip()


def test_a_smoke_run_is_marked_labelled_and_warned_about(root: Path) -> None:
    """Regression (issue 35): a 3-second, scale-2 smoke run passed check and showed on the home
    page as a result."""
    path = _smoke_run(root)
    run = load_yaml_file(path).data
    assert is_smoke(run)
    assert label(run) is not None and label(run).startswith("smoke run")
    done = kb(root, "check", str(path))
    assert done.returncode == 0
    assert "provenance.harness.profile: warning: a smoke run" in done.stdout


def test_check_changed_puts_your_files_first_and_refuses_a_smoke_run(root: Path) -> None:
    """Regression (issue 35): make check printed 32 warnings about the project's own runs, the
    contributor's drowned among them."""
    shipped = shipped_root()
    shutil.copytree(shipped / "data" / "runs" / "2006", root / "data" / "runs" / "2006")
    shutil.copytree(shipped / "data" / "raw" / "2006", root / "data" / "raw" / "2006")
    # the project's own runs, signed with its name, are listed with their sha256 (issue 33)
    shutil.copy2(shipped / "data" / "maintainers-runs.sha256", root / "data")
    for note in ("hp-proliant-dl380-g4.md",):
        source = shipped / "content" / "hardware" / note
        shutil.copy2(source, root / "content" / "hardware" / note)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    whole = kb(root, "check")
    standing = int(whole.stdout.splitlines()[-1].split(", ")[-1].split(" ")[0])
    path = _smoke_run(root)
    done = kb(root, "check", "--changed")
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert lines[0] == "your files (changed since main: 2 file(s)):"
    rel = path.relative_to(root).as_posix()
    assert lines[1].startswith(f"{rel}:")
    assert ": provenance.harness.profile: a smoke run" in lines[1]
    assert "your files: 1 error(s), 0 warning(s)" in lines
    assert f"standing warnings of files you did not change: {standing} (kb check for the list)" in (
        lines
    )
    assert "2006" not in "\n".join(lines[:-2])
    done = kb(root, "check", "--changed", "no-such-branch")
    assert done.returncode == 2
    assert done.stderr.startswith("error: --changed: no branch no-such-branch to compare with")


def test_a_version_without_a_list_is_said_not_checked(root: Path) -> None:
    """Issue 35: settings of a version kb has no list of are a note, not silence."""
    done = kb(root, "import", str(OUTPUT), "--machine", "box", "--set", WHEN,
              "--set", "postgres.version=17.2", "--set", "storage.data.filesystem=ext4",
              "--set", "postgres.settings={shared_bufers: 8GB}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "note: postgres.settings: settings of PostgreSQL 17 are not known to kb (it knows 15, "
        "18); names not checked\n"
    )


def test_disk_roles_are_shown_on_the_machine_page() -> None:
    from pgbench_kb.derive.hardware import _disk

    disk = {"count": 2, "media": "ssd", "roles": ["data", "wal"]}
    assert _disk(disk).endswith("for data, WAL")


def test_a_cloud_volumes_type_is_shown_on_the_machine_page() -> None:
    """Issue 32: two groups of "virtual disk" said nothing of which was gp3 and which io2."""
    from pgbench_kb.derive.hardware import _disk

    assert _disk({"count": 16, "media": "virtual", "model": "gp3", "roles": ["data"]}) == (
        "16× virtual disk (gp3) for data"
    )
    assert _disk({"count": 2, "media": "ssd", "interface": "sata"}) == "2× SSD (sata)"
    assert _disk({"count": 1, "media": "nvme", "model": "X", "interface": "nvme"}) == (
        "1× NVMe (X, nvme)"
    )
