"""``kb import`` through the real CLI (.venv/bin/kb): exact output, atomic writes, no overwrite,
missing fields named with the exact way to give them, --set / --meta / standard input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pgbench_kb.check import check_paths, format_report
from pgbench_kb.runfile import load_yaml_file

ROOT = Path(__file__).resolve().parents[1]
KB = str(Path(sys.executable).parent / "kb")
OUTPUT = ROOT / "tests" / "parse" / "fixtures" / "pg18-tpcb-P1-r.txt"
RUN = "data/runs/2026/11/20261120T100000Z-box-tpcb-like-s2-c4-c5d8be8b.yaml"
RAW = "data/raw/2026/11/20261120T100000Z-box-tpcb-like-s2-c4-c5d8be8b.txt"
WHEN = "provenance.recorded_at=2026-11-20T10:00:00Z"


def kb(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KB, "import", "--root", str(root), *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=root,
        timeout=60,
    )


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    notes = tmp_path / "content" / "hardware"
    notes.mkdir(parents=True)
    (notes / "box.md").write_text(
        "---\nschema_version: 1\ntitle: Box\ndescription: A box.\nroles: [server]\n---\nA box.\n",
        encoding="utf-8",
    )
    return tmp_path


def test_import_writes_run_and_raw_copy(root: Path) -> None:
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{root / RUN}\n", "")
    assert files(root) == ["content/hardware/box.md", RAW, RUN]
    assert (root / RAW).read_bytes() == OUTPUT.read_bytes()
    run = load_yaml_file(root / RUN).data
    assert run["results"]["tps"] == 4399.842018
    assert run["benchmark"]["threads"] == 2
    assert run["provenance"]["declared"] == ["provenance.recorded_at"]
    report = check_paths([], root=root)
    assert report.errors == [], format_report(report)


def test_import_refuses_to_overwrite(root: Path) -> None:
    assert kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN).returncode == 0
    before = (root / RUN).read_bytes()
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN)
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {root / RUN}: a run file for this output exists already (nothing to do)\n"
    )
    assert (root / RUN).read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--set", WHEN],
            "error: machine: missing; give it with --machine SLUG, the name of the server's "
            "content/hardware/SLUG.md\n",
        ),
        (
            ["--machine", "box"],
            "error: provenance.recorded_at: missing; give it with "
            "--set provenance.recorded_at=2026-11-22T10:00:00Z, when the run was made\n",
        ),
        (
            ["--machine", "box", "--set", WHEN, "--set", "origin=transcribed"],
            "error: provenance.source.title: missing; give it with "
            "--set provenance.source.title=… (or a source: section in --meta)\n",
        ),
        (
            ["--machine", "Box!", "--set", WHEN],
            "error: machine: 'Box!' is not a slug (use lower-case letters, digits and '-', "
            "e.g. --machine dl380-g4)\n",
        ),
        (
            ["--machine", "box", "--set", WHEN, "--set", "storage.data.array.level=raid-10"],
            "error: storage.data.array.level: 'raid-10' is not one of: single, jbod, raid0, "
            "raid1, raid5, raid6, raid10, raid50, raid60, zfs-stripe, zfs-mirror, zfs-raidz, "
            "zfs-raidz2, zfs-raidz3, other, or null (did you mean 'raid10'?)\n",
        ),
        (
            ["--machine", "box", "--set", WHEN, "--set", "benchmark.cleints=4"],
            "error: benchmark.cleints: unknown key (did you mean 'clients'?)\n",
        ),
        (
            ["--machine", "box", "--set", WHEN, "--set", "benchmark.threads=9"],
            "error: benchmark.threads: 9 threads for 4 clients; pgbench needs threads ≤ clients\n",
        ),
        (
            ["--machine", "box", "--set", "nonsense"],
            "error: --set: --set 'nonsense' is not KEY=VALUE "
            "(write it as --set storage.data.array.level=raid10)\n",
        ),
    ],
    ids=["machine", "recorded-at", "source", "slug", "enum", "unknown", "rule", "set-syntax"],
)
def test_refusals_name_the_field_and_write_nothing(
    root: Path, args: list[str], message: str
) -> None:
    done = kb(root, str(OUTPUT), *args)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message)
    assert files(root) == ["content/hardware/box.md"]


def test_measured_run_needs_raw_output(root: Path) -> None:
    done = kb(root, "--machine", "box", "--set", WHEN)
    assert done.returncode == 1
    assert done.stderr == (
        "error: RAW: no raw output given (name the pgbench output file(s), or '-' to paste it "
        "on standard input; only a transcribed run (--set origin=transcribed) may have figures "
        "only)\n"
    )


def test_import_from_standard_input(root: Path) -> None:
    done = kb(root, "-", "--machine", "box", "--set", WHEN, stdin=OUTPUT.read_text())
    assert (done.returncode, done.stderr) == (0, "")
    assert (root / RAW).read_text() == OUTPUT.read_text()


def test_meta_file_and_set_are_declared(root: Path) -> None:
    meta = root / "meta.yaml"
    meta.write_text(
        "provenance:\n  recorded_at: 2026-11-20T10:00:00Z\n  contributor: jdoe\n"
        "storage:\n  controller: {model: PERC H740, write_cache: write-back, "
        "battery_backed: true}\n",
        encoding="utf-8",
    )
    done = kb(
        root,
        str(OUTPUT),
        "--machine",
        "box",
        "--meta",
        str(meta),
        "--set",
        "client.network=loopback-tcp",
    )
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(root / RUN).data
    assert run["storage"]["controller"]["battery_backed"] is True
    assert run["provenance"]["recorded_at"] == "2026-11-20T10:00:00Z"
    assert run["provenance"]["declared"] == [
        "client.network",
        "provenance.contributor",
        "provenance.recorded_at",
        "storage.controller",
    ]


def test_transcribed_figures_only(root: Path) -> None:
    meta = root / "meta.yaml"
    meta.write_text(
        "origin: transcribed\nmachine: box\n"
        "provenance:\n  recorded_at: '2010'\n"
        "  source: {title: A study, kind: report, year: 2010}\n"
        "benchmark: {scale: 20, clients: 20, transactions_per_client: 2000}\n"
        "results: {statistic: mean, of_runs: 3, tps: 409, "
        "samples: {tps: [404, 408, 415]}}\n",
        encoding="utf-8",
    )
    done = kb(root, "--meta", str(meta))
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    run = load_yaml_file(path).data
    assert run["raw"] == [] and run["origin"] == "transcribed"
    assert files(root) == sorted(
        ["content/hardware/box.md", "meta.yaml", path.relative_to(root).as_posix()]
    )
    assert check_paths([], root=root).errors == []


def test_mask_hostnames(root: Path) -> None:
    done = kb(
        root,
        str(OUTPUT),
        "--machine",
        "box",
        "--set",
        WHEN,
        "--set",
        "server.hostname=db1.internal",
        "--mask-hostnames",
    )
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(root / RUN).data
    assert run["server"]["hostname"] is None
    assert run["provenance"]["masked"] == ["server.hostname", "client.hostname"]


def test_dry_run_writes_nothing(root: Path) -> None:
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN, "--dry-run")
    assert done.returncode == 0
    assert done.stdout.startswith("# pgbench-kb run file (schema_version 1).")
    assert files(root) == ["content/hardware/box.md"]


def test_unreadable_output_is_one_error_line(root: Path) -> None:
    junk = root / "junk.txt"
    junk.write_text("hello, this is not pgbench\n", encoding="utf-8")
    done = kb(root, str(junk), "--machine", "box", "--set", WHEN)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    assert files(root) == ["content/hardware/box.md", "junk.txt"]


def test_a_machine_without_a_note_is_imported_with_advice(root: Path) -> None:
    (root / "content" / "hardware" / "box.md").unlink()
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN)
    assert done.returncode == 0
    assert done.stdout == f"{root / RUN}\n"
    assert done.stderr == (
        "note: content/hardware/box.md does not exist yet: describe the machine there before "
        "`make check` (see CONTRIBUTING.md)\n"
    )
