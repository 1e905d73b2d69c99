"""Bad input to the harness's Python side: a corrupt or hand-edited trial folder given to
`kb import --harness-dir`, and profiles or options `kb plan` must refuse. Each gives one located
`error:` line (or a fact left null), never a traceback, never NaN or infinity in a run file.
No server needed."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from benchkit import KB
from kbtest import REPO
from pgbench_kb.bench import facts, trial
from pgbench_kb.bench.profile import MAX_TRIALS, expand, load_profile
from pgbench_kb.errors import ProfileError, RunImportError, UsageError
from pgbench_kb.runs.importer import import_run
from pgbench_kb.runs.runfile import Loaded

OUTPUT = Path(__file__).resolve().parents[1] / "parse" / "fixtures" / "pg18-tpcb-P1-r.txt"


# ---------------------------------------------------------------------------------------------
# kb import --harness-dir


def _trial(folder: Path, *, argv: str = "--client=4", output: str | None = None) -> Path:
    folder.mkdir(parents=True)
    text = output if output is not None else OUTPUT.read_text(encoding="utf-8")
    (folder / "pgbench.out").write_text(text, encoding="utf-8")
    (folder / "trial.tsv").write_text(
        "started_at\t2026-11-01T10:00:00Z\ntarget\tembedded\n", encoding="utf-8"
    )
    (folder / "command.argv").write_text(f"/usr/bin/pgbench\n{argv}\npgbench_kb\n", "utf-8")
    return folder


def _dry_run(folder: Path) -> str:
    out = io.StringIO()
    import_run(
        raw_paths=[],
        machine="m",
        meta_path=None,
        # what these minimal trial folders lack of what a measured run must carry
        sets=["postgres.version=18.1", "postgres.settings={}", "storage.data.array.media=ssd"],
        detected=trial.read_trial_folder(folder),
        root=folder.parent,
        dry_run=True,
        stdout=out,
    )
    text = out.getvalue()
    assert ".nan" not in text.lower() and ".inf" not in text.lower()
    return text


@pytest.mark.parametrize("bad", ["Infinity", "NaN", "-Infinity", "1e400", "true", '"9"'])
def test_stats_counter_infinity_or_nan_is_null_not_a_crash(tmp_path: Path, bad: str):
    """Bug: `"wal_records": Infinity` in stats-after.tsv crashed `kb import --harness-dir` with
    OverflowError (NaN: ValueError). A counter that cannot be read is null."""
    folder = _trial(tmp_path / "t")
    (folder / "stats-before.tsv").write_text(
        'wal\t{"wal_records": 1, "wal_fpi": 2}\nwal_lsn\t0/10\n', "utf-8"
    )
    (folder / "stats-after.tsv").write_text(
        f'wal\t{{"wal_records": 7, "wal_fpi": {bad}}}\nwal_lsn\t0/100\n', "utf-8"
    )
    stats = facts.server_stats(folder)
    assert stats is not None
    assert stats["wal_fpi"] is None
    assert stats["wal_bytes"] == 0xF0
    assert stats["wal_records"] == 6
    _dry_run(folder)


def test_stats_lines_that_are_not_counters_are_null_not_a_crash(tmp_path: Path):
    """Bug (same family): a JSON value that is not an object, nesting deep enough for Python's
    recursion limit, or an object where the WAL position belongs crashed the import."""
    folder = _trial(tmp_path / "t")
    (folder / "stats-before.tsv").write_text(
        'wal\t{"a": 1}\nwal_lsn\t{"x": 1}\ndatabase\t' + "{" * 3 + "\ntaken_at\tnan\n", "utf-8"
    )
    (folder / "stats-after.tsv").write_text(
        'wal\t{"wal_records": [1]}\nwal_lsn\tFFFFFFFFFFFFFFFFFFFF/1\n'
        'database\t{"a": ' + "[" * 100_000 + "\n",
        "utf-8",
    )
    assert facts.read_stats(folder / "stats-before.tsv") == {"wal": {"a": 1}, "wal_lsn": {"x": 1}}
    assert facts.server_stats(folder)["wal_bytes"] is None
    _dry_run(folder)


@pytest.mark.parametrize(
    "findmnt",
    [
        {"filesystems": 5},
        {"filesystems": {"a": 1}},
        {"filesystems": "abc"},
        [1, 2],
        {"filesystems": [{"source": "/dev/sda1", "fstype": [1], "options": {"rw": True}}]},
    ],
)
def test_malformed_findmnt_json_leaves_the_mount_null(tmp_path: Path, findmnt: object):
    """Bug: `{"filesystems": 5}` in storage-data.findmnt.json crashed `kb import` with
    TypeError, and `"fstype": [1]` with `TypeError: unhashable`. What cannot be read is null."""
    folder = _trial(tmp_path / "t")
    host = folder / "facts" / "host"
    host.mkdir(parents=True)
    (host / "storage-data.path").write_text("/x\n", "utf-8")
    (host / "storage-data.findmnt.json").write_text(json.dumps(findmnt), "utf-8")
    volume = facts.storage_facts(host)["data"]
    assert volume["path"] == "/x"
    assert volume["filesystem"] is None
    assert volume["mount_options"] is None
    assert volume["device"] == (
        "/dev/sda1" if isinstance(findmnt, dict) and "fstype" in str(findmnt) else None
    )
    _dry_run(folder)


@pytest.mark.parametrize(
    ("argv", "line", "field", "value"),
    [
        ("--client=abc", 2, "--client", "abc"),
        ("-c\nabc", 3, "-c", "abc"),
        ("--client=99999999999", 2, "--client", "99999999999"),
        ("--client=4\n--rate=nan", 3, "--rate", "nan"),
        ("--client=4\n--latency-limit=inf", 3, "--latency-limit", "inf"),
        ("--client=4\n--time=1e400", 3, "--time", "1e400"),
    ],
)
def test_corrupt_command_argv_is_one_located_error(
    tmp_path: Path, argv: str, line: int, field: str, value: str
):
    """Bug: `--client=abc` in command.argv crashed `kb import` with `ValueError: int('abc')`
    when pgbench's output had no clients line, and `--rate=nan` was recorded as NaN. A command
    line pgbench could not have run is a RunImportError naming command.argv and its line."""
    text = OUTPUT.read_text(encoding="utf-8")
    output = "".join(
        ln for ln in text.splitlines(keepends=True) if not ln.startswith("number of clients")
    )
    folder = _trial(tmp_path / "t", argv=argv, output=output)
    with pytest.raises(RunImportError) as caught:
        _dry_run(folder)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(folder / "command.argv"), line, field)
    assert f"got '{value}'" in str(error)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("random_page_cost\tnan\t\tx\treal", "expected a finite number for a real setting"),
        ("random_page_cost\tinf\t\tx\treal", "expected a finite number for a real setting"),
        ("vacuum_cost_delay\tNaN\tms\tx\treal", "expected a finite number for a real setting"),
        ("max_connections\tmany\t\tx\tinteger", "expected a whole number for a integer setting"),
        ("fsync\tmaybe\t\tx\tbool", "expected on or off for a bool setting"),
    ],
)
def test_nan_setting_is_a_located_error_not_imported(tmp_path: Path, row: str, problem: str):
    """Bug: a settings.tsv line `random_page_cost<TAB>nan<TAB><TAB>x<TAB>real` was imported as
    NaN (and `fsync<TAB>maybe` as off). PostgreSQL never reports such a value; the settings are
    what the run measures, so the line is an error naming the file, line and setting."""
    folder = _trial(tmp_path / "t")
    pg = folder / "facts" / "postgres"
    pg.mkdir(parents=True)
    (pg / "settings.tsv").write_text(f"work_mem\t4096\tkB\tx\tinteger\n{row}\n", "utf-8")
    with pytest.raises(RunImportError) as caught:
        _dry_run(folder)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(pg / "settings.tsv"), 2, row.split()[0])
    assert problem in error.message


def test_special_files_in_a_trial_folder_are_not_read(tmp_path: Path):
    """Bug: a FIFO among the facts files hung `kb import` for ever, and a link to /dev/zero would
    have read without end. Only regular files are read; the others are facts not recorded."""
    folder = _trial(tmp_path / "t")
    host = folder / "facts" / "host"
    host.mkdir(parents=True)
    os.mkfifo(host / "lscpu.txt")
    os.mkfifo(folder / "stats-before.tsv")
    (host / "proc_meminfo.txt").symlink_to("/dev/zero")
    (folder / "pgbench_log.1").mkdir()
    (host / "nproc.txt").write_text("4\n", "utf-8")
    host_facts = facts.host_facts(host)
    assert host_facts["cpu"]["threads"] == 4
    assert host_facts["ram_bytes"] is None
    _dry_run(folder)


def test_numbers_too_long_or_not_numbers_in_facts_are_null(tmp_path: Path):
    """Bug (same family): `CPU max MHz: 1.2.3` or a MemTotal of 5000 digits crashed the import
    (float('1.2.3'), Python's 4300-digit limit on int())."""
    (tmp_path / "lscpu.txt").write_text("CPU(s): ²\nCPU max MHz: 1.2.3\n", "utf-8")
    (tmp_path / "proc_meminfo.txt").write_text(f"MemTotal: {'9' * 5000} kB\n", "utf-8")
    assert facts.cpu_facts(tmp_path)["mhz"] is None
    assert facts.cpu_facts(tmp_path)["threads"] is None
    assert facts.ram_bytes(tmp_path) is None
    (tmp_path / "lscpu.txt").write_text(f"CPU max MHz: {'9' * 400}\n", "utf-8")
    assert facts.cpu_facts(tmp_path)["mhz"] is None
    assert facts.int_or_none("9" * 5000) is None
    assert trial.scripts_from_argv({"scripts": ["builtin:tpcb-like@²"]}, tmp_path)[0]["weight"] == 1


def test_cli_import_of_a_corrupt_trial_is_one_error_line(tmp_path: Path):
    """The promise at the command line: one `error:` line, exit 1, no traceback."""
    folder = _trial(tmp_path / "t", argv="--client=4\n--rate=nan")
    args = ["--harness-dir", str(folder), "--machine", "m", "--root", str(tmp_path), "--dry-run"]
    done = subprocess.run(
        [str(KB), "import", *args],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"error: {folder}/command.argv:3: --rate: expected a number, got 'nan' (the harness "
        "never records this: correct the line or re-run the trial)\n"
    )


# ---------------------------------------------------------------------------------------------
# kb plan

BASE = "description: x\nscales: [3]\nclients: [2]\nworkloads: [tpcb-like]\nduration_s: 2\n"


def _profile_error(tmp_path: Path, text: str) -> ProfileError:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        expand(load_profile(str(path)), cores=2)
    return caught.value


@pytest.mark.parametrize(
    ("extra", "line", "field", "word"),
    [
        ("rates: [.nan]", 6, "rates.0", "nan"),
        ("rates: [100, .inf]", 6, "rates.1", "inf"),
        ("rates: .nan", 6, "rates", "nan"),
        ("rates: [5]\nlatency_limit_ms: .nan", 7, "latency_limit_ms", "nan"),
        ("log_sampling_rate: .nan", 6, "log_sampling_rate", "nan"),
        ("settings: {random_page_cost: .nan}", 6, "settings.random_page_cost", "nan"),
        (f"rates: [{'9' * 400}.0]", 6, "rates.0", ""),
    ],
)
def test_nan_and_inf_in_a_profile_are_refused(
    tmp_path: Path, extra: str, line: int, field: str, word: str
):
    """Bug: `rates: [.nan]`, `[.inf]` and `latency_limit_ms: .nan` became `--rate=nan` in
    `kb plan --for-bash` (the bench then failed after setting up), and `log_sampling_rate: .nan`
    silently turned the transaction log off. (The YAML loader may refuse them first; either
    way the error names the line and the key.)"""
    error = _profile_error(tmp_path, BASE + extra + "\n")
    assert (error.line, error.field) == (line, field)
    assert word in str(error)


def test_profile_schema_refuses_non_finite_numbers_itself(tmp_path: Path):
    """The same bug, below the YAML loader: the profile's schema check refuses NaN and infinity
    whatever the loader lets through."""
    import math

    from pgbench_kb.runs.documents import schema_problems

    for value in (math.nan, math.inf, -math.inf):
        data = {"description": "x", "scales": 3, "clients": 2, "workloads": "select-only"}
        loaded = Loaded({**data, "rates": [value]}, {"rates": 6})
        (problem,) = schema_problems("profile", loaded, "p.yaml")
        assert (problem.line, problem.field, problem.message) == (
            6,
            "rates.0",
            "is not a finite number",
        )


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ("clients: [2, 99999999999999999999]", "clients.1"),
        ("clients: 2147483648", "clients"),
        ("scales: [2147483648]", "scales.0"),
        ("threads: 2147483648", "threads"),
        ("warmup_s: 2147483648", "warmup_s"),
    ],
)
def test_numbers_past_pgbench_int_limit_are_refused(tmp_path: Path, extra: str, field: str):
    """Bug: `clients: 99999999999999999999` was accepted, and pgbench refused it only once the
    bench had set up. pgbench reads -c, -j, -s, -T, -t and weights as C ints (≤ 2147483647)."""
    key = extra.split(":")[0]
    text = "".join(ln for ln in BASE.splitlines(keepends=True) if not ln.startswith(f"{key}:"))
    error = _profile_error(tmp_path, text + extra + "\n")
    assert error.field == field
    assert "is above the maximum 2147483647" in error.message


def test_clients_at_pgbench_limit_are_accepted(tmp_path: Path):
    path = tmp_path / "p.yaml"
    text = BASE.replace("[2]", "[2147483647]").replace("tpcb-like", "select-only")
    path.write_text(text, encoding="utf-8")
    assert load_profile(str(path)).clients == (2147483647,)


def test_huge_repeats_are_refused_before_expanding(tmp_path: Path):
    """Bug: `repeats: 100000000` hung `kb plan` (200,000 repeats took 340 MB) while it built
    every trial. The trial count is computed first and capped."""
    error = _profile_error(tmp_path, BASE + "repeats: 100000000\n")
    assert (error.line, error.field) == (6, "repeats")
    assert error.message == (
        "the profile expands to 100,000,000 trials (100000000 repeats); the limit is 10,000"
    )
    error = _profile_error(
        tmp_path, BASE.replace("[2]", str(list(range(1, 101)))) + "repeats: 101\n"
    )
    assert "10,100 trials (101 repeats × 100 clients)" in error.message
    path = tmp_path / "ok.yaml"
    path.write_text(BASE + f"repeats: {MAX_TRIALS}\n", encoding="utf-8")
    assert len(expand(load_profile(str(path)), cores=2)) == MAX_TRIALS


def test_numbers_of_thousands_of_digits_in_a_profile_are_one_error(tmp_path: Path):
    """Bug: a profile number of 5000 digits crashed `kb plan` with Python's ValueError
    (int_max_str_digits) from the YAML loader. It is one error naming the line."""
    digits = "9" * 5000
    for extra in (f"repeats: {digits}", f"rates: [{digits}]", f"rates: [{digits}.0]"):
        error = _profile_error(tmp_path, BASE + extra + "\n")
        assert error.line == 6
        assert "number" in error.message
    path = tmp_path / "p.yaml"
    path.write_text(BASE + f"repeats: {digits}\n", encoding="utf-8")
    done = subprocess.run([str(KB), "plan", str(path)], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {path}:6: ")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("cores", [-5, 0])
def test_plan_refuses_cores_below_one(cores: int):
    """Bug: `kb plan smoke --cores -5` was accepted (and --cores 0 silently meant nproc)."""
    with pytest.raises(UsageError, match=f"--cores: expected a whole number ≥ 1, got {cores}"):
        expand(load_profile("smoke"), cores=cores)
    done = subprocess.run(
        [str(KB), "plan", "smoke", "--cores", str(cores)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --cores: expected a whole number ≥ 1, got {cores}")
    assert done.stderr.count("\n") == 1


def test_profile_path_that_is_a_fifo_or_device_is_not_a_regular_file(tmp_path: Path):
    """Bug: a profile path that is a FIFO or /dev/zero said "no such profile". It is named as
    not a regular file, and never opened (a FIFO would block, /dev/zero never end)."""
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    cases = [(fifo, "FIFO"), (Path("/dev/zero"), "device"), (tmp_path, "folder")]
    for path, kind in cases:
        done = subprocess.run(
            [str(KB), "plan", str(path)], capture_output=True, text=True, timeout=20
        )
        assert done.returncode == 1
        assert done.stderr == (
            f"error: {path}: not a regular file (a {kind}) "
            "(give a profile name or the path of a YAML file)\n"
        )


def test_shipped_profiles_are_not_touched_by_the_limits():
    """Every shipped profile, the campaign's included, loads and plans: the campaign's
    durability profile once had a commit_delay set that could never delay, which kb plan now
    refuses."""
    campaign = sorted((REPO / "scripts" / "profiles" / "campaign").glob("*.yaml"))
    assert len(campaign) >= 8
    for name in ("smoke", "default", "scaling", "durability", "memory", *map(str, campaign)):
        assert 0 < len(expand(load_profile(name), cores=2)) <= MAX_TRIALS


def test_plan_keeps_every_digit_of_rates_and_settings(tmp_path: Path):
    """Bug: numbers went to pgbench and the server through f"{v:g}" (6 digits): a rate of
    1234567.5 became --rate=1.23457e+06 and random_page_cost 1.123456789 became 1.12346."""
    path = tmp_path / "p.yaml"
    path.write_text(
        BASE
        + "rates: [1234567.5]\nlatency_limit_ms: 2.123456789\nlog_sampling_rate: 0.00001\n"
        + "settings: {random_page_cost: 1.123456789}\n",
        encoding="utf-8",
    )
    (first,) = expand(load_profile(str(path)), cores=2)
    assert "--rate=1234567.5" in first.pgbench_args
    assert "--latency-limit=2.123456789" in first.pgbench_args
    assert "--sampling-rate=1e-05" in first.pgbench_args
    assert first.settings == ("random_page_cost=1.123456789",)


@pytest.mark.parametrize(("rate", "tps"), [("1234567.5", 1234567.5), ("1e-05", 1e-05)])
def test_import_reads_every_rate_the_plan_writes(tmp_path: Path, rate: str, tps: float):
    """The stricter reading of command.argv must still take what `kb plan` writes."""
    folder = _trial(tmp_path / "t", argv=f"--client=4\n--rate={rate}")
    run, _, _ = trial.build_from_trial(folder)
    assert run["benchmark"]["rate_limit_tps"] == tps


def test_an_empty_transaction_log_is_no_error(tmp_path: Path):
    """Bug: a thread whose 5% sample drew no transaction (a slow 1-second trial on a busy
    machine) left an empty pgbench_log.* file, and `kb import` refused the whole finished trial
    ("the input is empty"). An empty log is skipped."""
    folder = _trial(tmp_path / "t")
    (folder / "pgbench_log.4242").write_text("", encoding="utf-8")
    text = _dry_run(folder)
    assert "tps:" in text
