"""``kb import`` through the real CLI (its main, in this process; .venv/bin/kb where only a
process shows it): exact output, atomic writes, no overwrite,
missing fields named with the exact way to give them, --set / --meta / standard input."""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from kbtest import run_kb
from pgbench_kb.runs.check import check_paths, format_report
from pgbench_kb.runs.import_declared import located_problems
from pgbench_kb.runs.runfile import load_yaml_file

ROOT = Path(__file__).resolve().parents[1]
KB = str(Path(sys.executable).parent / "kb")
OUTPUT = ROOT / "tests" / "parse" / "fixtures" / "pg18-tpcb-P1-r.txt"
RUN = "data/runs/2026/11/20261120T100000Z-box-tpcb-like-s2-c4-c5d8be8b.yaml"
RAW = "data/raw/2026/11/20261120T100000Z-box-tpcb-like-s2-c4-c5d8be8b.txt"
WHEN = "provenance.recorded_at=2026-11-20T10:00:00Z"


#: What a measured run imported by hand must carry besides its output (CONTRIBUTING.md): the
#: version, the settings and the storage; the contributor comes from git config user.name.
MEASURED = (
    "--set",
    "postgres.version=18.1",
    "--set",
    "postgres.settings={}",
    "--set",
    "storage.data.filesystem=ext4",
)
MEASURED_DECLARED = ["postgres.settings", "postgres.version", "storage.data"]


def kb(
    root: Path, *args: str, stdin: str | None = None, measured: bool = True
) -> subprocess.CompletedProcess[str]:
    """``kb import --root ROOT ARGS``, with MEASURED added to a hand import of a measured run
    (in this process: kbtest.run_kb; the tests of bytes on standard input and of a memory
    limit run the installed kb)."""
    by_hand = not any(a in {"--harness-dir", "origin=transcribed", "--meta"} for a in args)
    extra = MEASURED if measured and by_hand else ()
    return run_kb(
        "import", "--root", str(root), *args, *extra, env=git_env(root), input=stdin, cwd=root
    )


def git_env(root: Path) -> dict[str, str]:
    """The environment with a git configuration of our own: user.name is Test Contributor."""
    config = root.parent / f"{root.name}.gitconfig"
    config.write_text("[user]\n\tname = Test Contributor\n", encoding="utf-8")
    return {**os.environ, "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1"}


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
    assert run["provenance"]["declared"] == sorted(["provenance.recorded_at", *MEASURED_DECLARED])
    assert run["provenance"]["contributor"] == "Test Contributor"  # from git config user.name
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
            "--set provenance.source.title=… (or a source: section in --meta)\n"
            "error: provenance.source.kind: missing; give it with "
            "--set provenance.source.kind=… (or a source: section in --meta)\n",
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
            "error: benchmark.threads: 9 threads for 4 clients; pgbench needs threads ≤ clients\n"
            "error: benchmark.threads: 9 but the raw output says 2\n",
        ),
        (
            ["--machine", "box", "--set", "nonsense"],
            "error: --set: --set 'nonsense' is not KEY=VALUE "
            "(write it as --set storage.data.array.level=raid10)\n"
            "error: provenance.recorded_at: missing; give it with "
            "--set provenance.recorded_at=2026-11-22T10:00:00Z, when the run was made\n",
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
        "postgres: {version: '18.1', settings: {}}\n"
        "storage:\n  controller: {model: PERC H740, write_cache: write-back, "
        "battery_backed: true}\n  data: {array: {media: ssd}}\n",
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
        "postgres.settings",
        "postgres.version",
        "provenance.contributor",
        "provenance.recorded_at",
        "storage.controller",
        "storage.data",
    ]


def test_transcribed_figures_only(root: Path) -> None:
    meta = root / "meta.yaml"
    meta.write_text(
        "origin: transcribed\nmachine: box\n"
        "provenance:\n  recorded_at: '2010'\n"
        "  source: {title: A study, title_is_descriptive: true, kind: report, year: 2010}\n"
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
        "note: content/hardware/box.md did not exist: kb import started a draft (draft_note: "
        "true); describe the machine there — disks and their roles, controller, cache — before "
        "`make check` (see CONTRIBUTING.md)\n"
    )
    note = (root / "content" / "hardware" / "box.md").read_text(encoding="utf-8")
    assert "started by `kb import` for output imported by hand" in note
    assert "draft_note: true" in note


# ---------------------------------------------------------------------------------------------
# Regressions from QA and review (each names the bug it guards).

FIXTURES = ROOT / "tests" / "parse" / "fixtures"
CONNECT_C = ROOT / "tests" / "check" / "outputs" / "pg13-connect-C-T10.txt"
DRY = ["--machine", "box", "--set", WHEN, "--dry-run"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("provenance=[]", "provenance: expected a mapping, got a list"),
        ("benchmark=null", "benchmark: expected a mapping, got null"),
        ("benchmark.workload=5", "benchmark.workload: expected a mapping, got 5"),
        ("provenance.declared=5", "provenance.declared: expected a list, got 5"),
        ("provenance.masked=5", "provenance.masked: expected a list, got 5"),
        ("provenance.masked=[[1]]", "provenance.masked.0: expected text, got a list"),
        (
            "provenance.masked=[provenance]",
            "provenance.masked.0: 'provenance' cannot be masked: it cannot be null (mask a value "
            "such as server.hostname)",
        ),
        (
            "provenance.masked=[benchmark.workload]",
            "provenance.masked.0: 'benchmark.workload' cannot be masked: it cannot be null "
            "(mask a value such as server.hostname)",
        ),
        (
            "server." + ".".join(["a"] * 2000) + "=1",
            "--set: key server.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a… is 2001 levels deep and 4006 "
            "characters long; no field of a run file is deeper than 8 levels (see "
            "docs/data-format.md for the fields)",
        ),
        (
            "benchmark.clients=" + "9" * 5000,
            "benchmark.clients: a number 5000 characters long is not a figure (write the figure "
            "itself, or quote it if it is text)",
        ),
        (
            "results.tps=.inf",
            "results.tps: .inf is not a finite number (write the figure, or null when it is "
            "unknown)",
        ),
        (
            "postgres.settings.random_page_cost=.nan",
            "postgres.settings.random_page_cost: .nan is not a finite number (write the figure, "
            "or null when it is unknown)",
        ),
        ("benchmark.scale=999", "benchmark.scale: 999 but the raw output says 2"),
        (
            "provenance.recorded_at=2026-02-30",
            "provenance.recorded_at: 2026-02-30 is not a real date: February 2026 has 28 days",
        ),
        (
            "provenance.recorded_at=2006-06-01T25:00:00Z",
            "provenance.recorded_at: 2006-06-01T25:00:00Z is not a real time: hour 25 is above 23",
        ),
        (
            "provenance.recorded_at=0001-01-01",
            "provenance.recorded_at: 0001-01-01 is before 1990; pgbench results are not that old",
        ),
        (
            "provenance.recorded_at=2026-13-45",
            "provenance.recorded_at: 2026-13-45 is not a real date: there is no month 13",
        ),
    ],
    ids=lambda v: v[:40],
)
def test_wrong_set_values_are_one_line_errors_not_tracebacks(
    root: Path, value: str, message: str
) -> None:
    """Regression: wrong-typed --set values (provenance=[], benchmark=null, masked=[[1]], …)
    crashed kb import with a traceback, a 2000-level key with RecursionError, a 5000-digit
    number with ValueError; .inf, values contradicting the raw output and impossible dates
    were written into run files that kb check then rejected."""
    done = kb(root, str(OUTPUT), *DRY, "--set", value)
    assert done.returncode == 1
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert all(line.startswith("error: ") for line in done.stderr.splitlines())
    line = done.stderr.splitlines()[0]
    date_hint = " (write an ISO 8601 date or time"
    assert line.split(date_hint)[0] == f"error: {message}"


def test_wrong_meta_value_names_the_meta_file_and_line(root: Path) -> None:
    """Regression: a wrong-typed value in --meta crashed kb import; the error names the file
    and the line the value is on."""
    meta = root / "meta.yaml"
    meta.write_text("provenance:\n  contributor: me\nbenchmark:\n  workload: 5\n", encoding="utf-8")
    done = kb(root, str(OUTPUT), *DRY, "--meta", str(meta), *MEASURED)
    assert (done.returncode, done.stderr) == (
        1,
        f"error: {meta}:4: benchmark.workload: expected a mapping, got 5\n",
    )
    meta.write_text("benchmark:\n  clients: " + "9" * 5000 + "\n", encoding="utf-8")
    done = kb(root, str(OUTPUT), *DRY, "--meta", str(meta), *MEASURED)
    assert done.stderr == (
        f"error: {meta}:2: benchmark.clients: a number 5000 characters long is not a figure "
        "(write the figure itself, or quote it if it is text)\n"
    )


def test_same_raw_output_twice_is_refused(root: Path) -> None:
    """Regression: the same raw output imported again with another recorded_at made a second
    run (and raw copy) that kb check then rejected as a duplicate."""
    assert kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN).returncode == 0
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", "provenance.recorded_at=2026-11-21")
    assert done.returncode == 1
    assert done.stderr == (
        "error: RAW: the same raw output (sha256 c5d8be8bcb49…) is already kept by "
        f"{root / RUN} (each run is imported once; a repeat of the benchmark has output of "
        "its own)\n"
    )
    assert files(root) == ["content/hardware/box.md", RAW, RUN]


@pytest.mark.parametrize(
    ("name", "transform"),
    [
        ("pg18-latin1-path.txt", None),
        ("pg18-tpcb-P1-r.txt", "crlf"),
    ],
)
def test_raw_copy_is_the_exact_bytes_given(root: Path, name: str, transform: str | None) -> None:
    """Regression: raw output was decoded with errors="replace" (Latin-1 'josé' stored as
    'jos\ufffd') and CRLF became LF, so the raw copy and its sha256 were not of the bytes
    given."""
    given = (FIXTURES / name).read_bytes()
    if transform == "crlf":
        given = given.replace(b"\n", b"\r\n")
    source = root / "given.txt"
    source.write_bytes(given)
    done = kb(root, str(source), "--machine", "box", "--set", WHEN)
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(Path(done.stdout.strip())).data
    kept = root / run["raw"][0]["path"]
    assert kept.read_bytes() == given
    assert run["raw"][0]["sha256"] == hashlib.sha256(given).hexdigest()
    assert check_paths([], root=root).errors == []


def test_raw_copy_from_standard_input_is_the_exact_bytes(root: Path) -> None:
    """Regression: standard input was read as text; now its bytes are kept."""
    given = OUTPUT.read_bytes().replace(b"\n", b"\r\n")
    done = subprocess.run(
        [KB, "import", "--root", str(root), "-", "--machine", "box", "--set", WHEN, *MEASURED],
        capture_output=True,
        input=given,
        cwd=root,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(Path(done.stdout.decode().strip())).data
    assert (root / run["raw"][0]["path"]).read_bytes() == given


def test_pre14_output_with_connect_per_transaction_imports_and_checks_clean(root: Path) -> None:
    """Regression: pre-14 output with -C (tps 499.87 including, 2890.12 excluding connections;
    5000 transactions in 10 s) was refused as "83% off"."""
    done = kb(root, str(CONNECT_C), "--machine", "box", "--set", "provenance.recorded_at=2020")
    assert done.returncode == 0, done.stderr
    report = check_paths([], root=root)
    assert report.findings == [], format_report(report)


@pytest.mark.parametrize("style", ["one-flag", "repeated"])
def test_log_takes_several_files(root: Path, style: str) -> None:
    """Regression: --log took one file per flag while CONTRIBUTING said --log pgbench_log.*;
    both forms work, and the percentiles say what they rest on."""
    logs = sorted(str(p) for p in (FIXTURES / "pg18-real-per-thread-logs-merged").iterdir())
    flags = ["--log", *logs] if style == "one-flag" else [x for p in logs for x in ("--log", p)]
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN, *flags)
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(root / RUN).data
    assert [r["kind"] for r in run["raw"]] == ["output", "transaction_log", "transaction_log"]
    assert run["results"]["latency_percentiles_ms"]["p50"] is not None
    assert set(run["results"]["latency_percentiles_from"]) == {"latencies", "sampling_rate"}
    report = check_paths([], root=root)
    assert report.errors == [], format_report(report)


def test_percentiles_from_a_sampled_log_say_how_many_latencies(root: Path) -> None:
    """Regression: percentiles from a --sampling-rate=0.05 log rested on a few hundred rows
    without saying so; latency_percentiles_from records the count and the sampling rate."""
    log = FIXTURES / "pg18-real-log-skipped-sampled-thread0.log"
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN, "--log", str(log))
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(root / RUN).data
    assert run["results"]["latency_percentiles_from"] == {"latencies": 145, "sampling_rate": 0.052}


def test_recorded_at_given_as_a_year_is_text(root: Path) -> None:
    """Regression: --set provenance.recorded_at=2006 said "expected text, got 2006" while the
    hint listed 2006 as valid; a text field takes the value as written."""
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", "provenance.recorded_at=2006")
    assert done.returncode == 0, done.stderr
    run = load_yaml_file(Path(done.stdout.strip())).data
    assert run["provenance"]["recorded_at"] == "2006"


def test_meta_year_as_number_is_told_to_quote_it(root: Path) -> None:
    """In a --meta file, recorded_at: 2006 is a number; the error says to quote it."""
    meta = root / "meta.yaml"
    meta.write_text("provenance:\n  recorded_at: 2006\n", encoding="utf-8")
    done = kb(root, str(OUTPUT), "--machine", "box", "--meta", str(meta), *MEASURED)
    assert done.stderr == (
        f"error: {meta}:2: provenance.recorded_at: expected text, got 2006 (quote it to make "
        "it text: '2006')\n"
    )


def test_long_machine_names_the_machine_not_the_id(root: Path) -> None:
    """Regression: --machine with 300 characters said "id: is longer than 160 characters"."""
    done = kb(root, str(OUTPUT), "--machine", "a" * 300, "--set", WHEN)
    assert done.stderr == (
        "error: machine: is 300 characters long; a slug has at most 64 (name the machine "
        "shortly, e.g. --machine dl380-g4)\n"
    )


def test_write_error_hint_follows_the_cause(root: Path) -> None:
    """Regression: "cannot write: Not a directory" came with the hint about free space."""
    blocker = root / "data"
    blocker.write_text("not a folder\n", encoding="utf-8")
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN)
    assert done.returncode == 1
    assert done.stderr.endswith(
        "cannot write: Not a directory (a part of the path is a file, not a folder: check --root)\n"
    )


def test_missing_harness_dir_says_so(root: Path) -> None:
    """Regression: --harness-dir /nonexist did not say the folder does not exist."""
    done = kb(root, "--harness-dir", str(root / "nope"), "--machine", "box")
    assert done.stderr == (
        f"error: {root / 'nope'}: --harness-dir: no such folder (give the trial folder "
        "scripts/bench.sh wrote, the one holding pgbench.out)\n"
    )


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


def test_import_from_dev_zero_is_bounded(root: Path) -> None:
    """Regression: kb import /dev/zero (and --log /dev/zero) read forever."""
    done = subprocess.run(
        [KB, "import", "--root", str(root), "/dev/zero", "--machine", "box", "--set", WHEN],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_memory,
    )
    assert (done.returncode, done.stderr) == (
        1,
        "error: /dev/zero:1: larger than the limit of 8 MiB (give the text pgbench printed at "
        "the end of the run)\n",
    )
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN, "--log", "/dev/zero")
    assert done.stderr == (
        "error: /dev/zero: --log: is not a regular file (give the pgbench_log.* files pgbench "
        "--log wrote)\n"
    )


def test_mask_hostnames_reaches_a_harness_folder_imported_directly(root: Path) -> None:
    """Regression: `kb import --harness-dir DIR --mask-hostnames` left the server's host name
    in benchmark.command (only bench.sh's own flag reached the command line)."""
    trial = root / "trial"
    trial.mkdir()
    (trial / "pgbench.out").write_bytes(OUTPUT.read_bytes())
    (trial / "trial.tsv").write_text("started_at\t2026-11-20T10:00:00Z\ntarget\texisting\n")
    (trial / "command.argv").write_text(
        "/usr/bin/pgbench\n-h\ndb1.example.com\n--client=4\n--jobs=2\npgbench_kb\n"
    )
    done = kb(root, "--harness-dir", str(trial), "--machine", "box", "--mask-hostnames",
              "--dry-run", *MEASURED)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "db1.example.com" not in done.stdout
    assert "<masked>" in done.stdout


def test_a_set_value_that_breaks_another_field_is_named_with_every_problem(root: Path) -> None:
    """Regression (issue 8): `--set results.tps=9999` was reported against
    results.transactions_processed, "and 1 more problem(s)" unshown; the field the person set is
    named and every problem is shown."""
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN, "--set", "results.tps=9999")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: results.transactions_processed: 26402 transactions in 6 s do not match tps 9999 "
        "(expected about 59994, 56% off) (check the results.tps you gave)\n"
        "error: results.tps: 9999 but the raw output says 4399.842018\n"
    )
    assert files(root) == ["content/hardware/box.md"]


def test_one_problem_on_another_field_names_the_fields_given() -> None:
    """Issue 8: a problem that shows on a field the person did not give names the given fields
    it involves; one on a given field is reported as it is."""
    found = [
        (
            "results.transactions_processed",
            "100 transactions in 60 s do not match tps 100",
            ("results.tps", "benchmark.duration_s"),
        )
    ]
    [error] = located_problems(found, ["machine", "results.tps"])
    assert str(error) == (
        "results.transactions_processed: 100 transactions in 60 s do not match tps 100 "
        "(check the results.tps you gave)"
    )
    [error] = located_problems(found, ["results.transactions_processed", "results.tps"])
    assert str(error) == (
        "results.transactions_processed: 100 transactions in 60 s do not match tps 100"
    )


def test_a_measured_run_by_hand_says_how_to_give_what_it_must_carry(root: Path) -> None:
    """Regression (issue 8): a run with no PostgreSQL version, no contributor, no storage and
    no settings passed make check. Each missing piece is named with the way to give it."""
    done = kb(root, str(OUTPUT), "--machine", "box", "--set", WHEN, measured=False)
    assert done.returncode == 1
    assert done.stderr == (
        "error: postgres.version: missing: a measured run names its PostgreSQL version: the "
        "harness records it; by hand give --set postgres.version=17.2 (what SHOW "
        "server_version says)\n"
        "error: postgres.settings: missing: a measured run lists every setting not at its "
        "default ({} when all are defaults): the harness records them; by hand give --set "
        "postgres.settings.shared_buffers=1GB for each, or --set 'postgres.settings={}'\n"
        "error: storage.data: missing: a measured run says what its data was stored on: the "
        "harness records the volume; by hand give at least --set storage.data.array.media=ssd "
        "(or storage.data.filesystem=ext4; level, disks and rpm "
        "when known)\n"
    )
    assert files(root) == ["content/hardware/box.md"]


def test_contributor_comes_from_git_or_the_login_name(root: Path) -> None:
    """Issue 8: every run names its contributor; kb import fills it from git config user.name,
    else from the login name, so a finished harness trial is never refused for want of one."""
    from pgbench_kb.runs.importer import contributor_name

    env = git_env(root)
    done = subprocess.run(
        ["git", "config", "user.name"], env=env, capture_output=True, text=True, timeout=10
    )
    assert done.stdout.strip() == "Test Contributor"
    assert contributor_name(Path("/")) is not None
