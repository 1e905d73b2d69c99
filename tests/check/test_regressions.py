"""kb check regressions from QA and review: each test names the bug it guards. The promise: bad
input gets one finding naming file, line and field; nothing crashes; nothing is read without
bound; nothing wrong is silently accepted."""

from __future__ import annotations

import copy
import gzip
import shutil
from pathlib import Path

import pytest

from checkkit import GOOD, good_run, report_of, write
from pgbench_kb.runs import check
from pgbench_kb.runs.build import percentiles_from_log
from pgbench_kb.runs.check import check_paths, collect, format_report, one_line, run_rules
from pgbench_kb.runs.check import run as run_module
from pgbench_kb.runs.runfile import sha256_bytes

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "parse" / "fixtures"
TODAY = "20261122"
DIGITS = "9" * 5000


def transcribed() -> dict:
    return good_run("transcribed-figures")


# 1. integers over 4300 digits ---------------------------------------------------------------


def test_integer_of_5000_digits_is_a_finding_not_a_valueerror(project: Path) -> None:
    """Regression: a 5000-digit integer crashed YAML loading (ValueError from int()) and with
    it the whole report; now it is one finding and the other files are still checked."""
    runs = project / "data" / "runs"
    runs.mkdir(parents=True)
    (runs / "huge.yaml").write_text(f"schema_version: {DIGITS}\n", encoding="utf-8")
    shutil.copyfile(GOOD / "measured-tpcb.yaml", runs / "measured-tpcb.yaml")
    note = project / "content" / "hardware" / "big-box.md"
    note.write_text(f"---\nschema_version: 1\nweight: {DIGITS}\n---\nBody.\n", encoding="utf-8")
    text = report_of(project, runs, note)
    assert text == (
        "data/runs/huge.yaml:1: schema_version: a number 5000 characters long is not a figure "
        "(write the figure itself, or quote it if it is text)\n"
        "content/hardware/big-box.md:3: weight: a number 5000 characters long is not a figure "
        "(write the figure itself, or quote it if it is text)\n"
        "checked 2 run file(s) and 1 hardware note(s): 2 error(s), 0 warning(s)\n"
    )


def test_an_unexpected_failure_on_one_file_does_not_stop_the_report(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: one file that made kb check raise ended the whole run with a traceback."""
    runs = project / "data" / "runs"
    runs.mkdir(parents=True)
    for name in ("a", "b"):
        run = transcribed()
        run["id"] = name
        run["provenance"]["recorded_at"] = "2010" if name == "a" else "2011"
        write(project, run)
    real = check.check_run

    def flaky(path: Path, root: Path, *, today: str | None = None):
        if path.name == "a.yaml":
            raise ValueError("boom")
        return real(path, root, today=today)

    monkeypatch.setattr(collect, "check_run", flaky)
    report = check_paths([str(runs)], root=project)
    assert report.runs == 2
    assert [(Path(f.path).name, f.message) for f in report.findings] == [
        ("a.yaml", "kb check failed on this file (ValueError: boom); please report it")
    ]


# 3. long slugs ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["machine", "client.machine"])
def test_long_machine_slug_is_a_schema_error_not_oserror(project: Path, key: str) -> None:
    """Regression: a 300-character slug made is_file() raise "File name too long"."""
    run = good_run()
    if key == "machine":
        run["machine"] = "a" * 300
    else:
        run["client"].update({"same_as_server": False, "machine": "a" * 300, "network": "1gbit"})
    path = write(project, run)
    report = check_paths([str(path)], root=project)
    assert [(f.field, f.message) for f in report.errors] == [(key, "is longer than 64 characters")]


def test_a_path_the_system_cannot_look_up_is_not_a_file() -> None:
    """Regression: OSError (ENAMETOOLONG) from a path test escaped kb check."""
    assert run_module.is_file(Path("/tmp") / ("x" * 5000)) is False
    assert collect.is_dir(Path("/tmp") / ("x" * 5000)) is False


# 4. unbounded reads -------------------------------------------------------------------------


def test_run_file_linked_to_dev_zero_is_refused_unread(project: Path) -> None:
    """Regression: a run file that is a symlink to /dev/zero was read forever (st_size 0);
    then read up to a bound; now (issue #22) a link is refused without reading it."""
    link = project / "data" / "runs" / "z.yaml"
    link.parent.mkdir(parents=True)
    link.symlink_to("/dev/zero")
    assert report_of(project, link) == (
        "data/runs/z.yaml:1: (file): a symbolic link (to /dev/zero): commit the file itself "
        "(links are not followed)\n"
        "checked 1 run file(s) and 0 hardware note(s): 1 error(s), 0 warning(s)\n"
    )


def test_raw_file_linked_to_dev_zero_is_refused_unread(project: Path) -> None:
    """Regression: raw files were read with read_bytes(), without a bound; then up to a bound;
    now (issue #22) a raw file that is a link is refused without reading it."""
    run = good_run()
    raw = project / run["raw"][0]["path"]
    raw.unlink()
    raw.symlink_to("/dev/zero")
    report = check_paths([str(write(project, run))], root=project)
    assert [f.message for f in report.errors] == [
        f"{run['raw'][0]['path']} is a symbolic link (commit the file itself: links are not "
        "followed)"
    ]


# 5. NaN and infinity ------------------------------------------------------------------------


@pytest.mark.parametrize("written", [".inf", "-.inf", ".nan", ".NaN", "1.0e+400"])
def test_nan_and_infinity_are_refused_in_run_files(project: Path, written: str) -> None:
    """Regression: .inf and .nan passed kb check (NaN passes every minimum) and kb derive then
    wrote invalid JSON."""
    path = write(project, good_run())
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("  latency_avg_ms: 0.907", f"  latency_avg_ms: {written}"), encoding="utf-8"
    )
    report = check_paths([str(path)], root=project)
    assert [(f.line, f.field, f.message) for f in report.errors] == [
        (
            152,
            "results.latency_avg_ms",
            f"{written} is not a finite number (write the figure, or null when it is unknown)",
        )
    ]


def test_nan_is_refused_in_postgres_settings_and_notes(project: Path) -> None:
    """Regression: non-finite values passed in postgres.settings and in note front matter."""
    path = write(project, good_run())
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("  settings: {}", "  settings:\n    random_page_cost: .nan"), encoding="utf-8"
    )
    note = project / "content" / "hardware" / "nan-box.md"
    note.write_text("---\nschema_version: 1\nweight: .inf\n---\nBody.\n", encoding="utf-8")
    report = check_paths([str(path), str(note)], root=project)
    assert [(f.field, f.message.split(" (")[0]) for f in report.errors] == [
        ("postgres.settings.random_page_cost", ".nan is not a finite number"),
        ("weight", ".inf is not a finite number"),
    ]


# 6. dates -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("2026-02-30", "2026-02-30 is not a real date: February 2026 has 28 days"),
        ("2006-06-01T25:00:00Z", "2006-06-01T25:00:00Z is not a real time: hour 25 is above 23"),
        ("2006-06-01T10:61", "2006-06-01T10:61 is not a real time: minute 61 is above 59"),
        ("0001-01-01", "0001-01-01 is before 1990; pgbench results are not that old"),
        ("2026-13-45", "2026-13-45 is not a real date: there is no month 13"),
    ],
)
def test_impossible_dates_are_refused(written: str, message: str) -> None:
    """Regression: 2026-02-30, hour 25 and year 1 were accepted; 2026-13-45 was refused for
    the wrong reason ("in the future")."""
    run = good_run()
    run["provenance"]["recorded_at"] = written
    assert [(i.field, i.message.split(" (write")[0]) for i in run_rules(run, today=TODAY)] == [
        ("provenance.recorded_at", message)
    ]


def test_masked_path_must_be_nullable() -> None:
    """Regression: provenance.masked: [benchmark.workload] nulled a required mapping and made
    kb import crash; masking is for values that can be null."""
    run = good_run()
    run["provenance"]["masked"] = ["benchmark.workload"]
    assert [i.message for i in run_rules(run, today=TODAY)] == [
        "'benchmark.workload' cannot be masked: it cannot be null (mask a value such as "
        "server.hostname)"
    ]


# 8. nothing to check ------------------------------------------------------------------------


def test_nothing_to_check_is_an_error(tmp_path: Path) -> None:
    """Regression: `kb check --root /etc/passwd`, a root without data/runs, a folder named
    x.yaml and a file that is neither run nor note all printed "checked 0" and passed."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0\n", encoding="utf-8")
    assert check_paths([], root=passwd).errors[0].message == (
        "--root is not a folder (give the project's folder)"
    )
    (tmp_path / "content" / "hardware").mkdir(parents=True)
    missing = check_paths([], root=tmp_path)
    assert [f.message for f in missing.errors] == [
        "no data/runs folder here (give --root the project's folder, the one holding "
        "data/runs and content/hardware)"
    ]
    folder = tmp_path / "x.yaml"
    folder.mkdir()
    assert [f.message for f in check_paths([str(folder)], root=tmp_path).errors] == [
        "no run files (.yaml) or hardware notes (.md) in this folder"
    ]
    assert [f.message for f in check_paths([str(passwd)], root=tmp_path).errors] == [
        "not a run file (.yaml), a hardware note (.md) or a folder"
    ]


def test_a_fresh_project_with_empty_folders_passes(tmp_path: Path) -> None:
    """A new project (data/runs and content/hardware, both empty) has nothing wrong yet."""
    (tmp_path / "data" / "runs").mkdir(parents=True)
    (tmp_path / "content" / "hardware").mkdir(parents=True)
    report = check_paths([], root=tmp_path)
    assert (report.findings, report.runs, report.notes) == ([], 0, 0)


# 9, 10. counts --------------------------------------------------------------------------------


def test_pre14_connect_per_transaction_compares_tps_including_connections() -> None:
    """Regression: with -C before pgbench 14, 5000 transactions in 10 s at 2890 tps
    (excluding connections) were "83% off"; the tps including connections (499.87) is the one
    that matches the wall clock."""
    run = transcribed()
    run["benchmark"].update(
        {"duration_s": 10, "transactions_per_client": None, "clients": 8, "command": None}
    )
    run["results"].update(
        {
            "statistic": "single",
            "of_runs": 1,
            "samples": None,
            "tps": 2890.123456,
            "tps_including_connections": 499.87,
            "transactions_processed": 5000,
        }
    )
    assert run_rules(run, today=TODAY) == []
    run["results"]["tps_including_connections"] = 2890.0
    assert [i.message for i in run_rules(run, today=TODAY)] == [
        "5000 transactions in 10 s do not match tps including connections 2890 (expected "
        "about 28900, 83% off)"
    ]


def test_skipped_and_failed_transactions_make_up_processed_below_planned() -> None:
    """Regression: processed < clients × transactions was an error even when skipped (-R -L)
    or failed transactions accounted for the difference."""
    run = transcribed()
    run["results"].update(
        {"statistic": "single", "of_runs": 1, "samples": None, "transactions_processed": 39990}
    )
    run["results"]["skipped_transactions"] = 7
    run["results"]["failed_transactions"] = 3
    assert [i.severity for i in run_rules(run, today=TODAY)] == ["warning"]  # the failures
    run["results"]["failed_transactions"] = 2
    assert [i.field for i in run_rules(run, today=TODAY) if i.severity == "error"] == [
        "results.transactions_processed"
    ]


# 11. everything re-checked ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("results.transactions_expected", 5, "5 but the raw output does not say it"),
        ("results.skipped_transactions", 1, "1 but the raw output does not say it"),
        ("results.retried_transactions", 1, "1 but the raw output does not say it"),
        ("benchmark.latency_limit_ms", 10, "10 but the raw output does not say it"),
        ("benchmark.pgbench_version", "9.9", "'9.9' but the raw output says '18.6'"),
        ("benchmark.threads", 1, "1 but the raw output says 2"),
    ],
)
def test_every_field_copied_from_output_is_compared(key: str, value: object, message: str) -> None:
    """Regression: fields kb import copies from the output but that were missing from the
    shared lists (transactions_expected, retried/skipped transactions, latency_limit_ms,
    pgbench_version, statements) were never compared, and a value where the output says
    nothing passed."""
    from pgbench_kb.parse import parse_text

    run = good_run()
    raw = (Path(__file__).parent / "root" / run["raw"][0]["path"]).read_text(encoding="utf-8")
    parsed = parse_text(raw)
    assert check.rules_raw_output(run, parsed) == []
    section, name = key.split(".")
    run[section][name] = value
    issues = check.rules_raw_output(run, parsed)
    assert [(i.field, i.message.split(" (make")[0]) for i in issues] == [(key, message)]


def test_edited_statements_are_caught() -> None:
    """Regression: per-statement latencies (-r) were copied from the output but not compared."""
    from pgbench_kb.parse import parse_text

    run = good_run()
    raw = (Path(__file__).parent / "root" / run["raw"][0]["path"]).read_text(encoding="utf-8")
    parsed = parse_text(raw)
    run["results"]["statements"][0]["latency_ms"] = 99.0
    assert [i.field for i in check.rules_raw_output(run, parsed)] == ["results.statements"]


def _with_transaction_log(project: Path) -> tuple[dict, Path]:
    """The good run with a per-transaction log kept as a gzipped raw file."""
    from pgbench_kb.parse import parse_paths

    log = FIXTURES / "pg18-real-log-lag-retries.log"
    packed = gzip.compress(log.read_bytes(), mtime=0)
    rel = "data/raw/2026/11/measured-tpcb.log0.gz"
    (project / rel).write_bytes(packed)
    run = good_run()
    run["raw"].append({"path": rel, "sha256": sha256_bytes(packed), "kind": "transaction_log"})
    percentiles, basis = percentiles_from_log(parse_paths([str(log)]))
    run["results"]["latency_percentiles_ms"] = percentiles
    run["results"]["latency_percentiles_from"] = basis
    return run, project / rel


def test_edited_percentiles_are_caught_by_reparsing_the_transaction_log(project: Path) -> None:
    """Regression: transaction-log raw files were only hashed, so edited latency percentiles
    passed kb check."""
    run, _ = _with_transaction_log(project)
    assert check_paths([str(write(project, run))], root=project).errors == []
    edited = copy.deepcopy(run)
    edited["results"]["latency_percentiles_ms"]["p99"] = 3.6
    edited["results"]["latency_percentiles_from"]["latencies"] = 10
    report = check_paths([str(write(project, edited))], root=project)
    assert [(f.field, f.message) for f in report.errors] == [
        ("results.latency_percentiles_ms.p99", "3.6 but the transaction log says 3.5"),
        ("results.latency_percentiles_from.latencies", "10 but the transaction log says 619"),
    ]


def test_a_log_that_unpacks_to_garbage_is_one_finding(project: Path) -> None:
    """A transaction log whose gzip is cut short is reported, not raised."""
    run, path = _with_transaction_log(project)
    cut = path.read_bytes()[:-20]
    path.write_bytes(cut)
    run["raw"][1]["sha256"] = sha256_bytes(cut)
    report = check_paths([str(write(project, run))], root=project)
    assert [(f.field, f.message) for f in report.errors] == [
        ("raw.1", "the transaction log cannot be unpacked: the gzip data is cut short")
    ]


# 15. notes ----------------------------------------------------------------------------------


def test_note_with_a_byte_order_mark_is_read(project: Path) -> None:
    """Regression: a hardware note saved with a UTF-8 BOM got "no front matter"."""
    note = project / "content" / "hardware" / "bom-box.md"
    note.write_bytes(
        b"\xef\xbb\xbf---\nschema_version: 1\ntitle: B\ndescription: b.\nroles: [server]\n"
        b"---\nA box.\n"
    )
    assert check_paths([str(note)], root=project).findings == []


def test_note_over_1_mib_gets_a_note_hint(project: Path) -> None:
    """Regression: a note over 1 MiB was told to keep long series in the raw output."""
    note = project / "content" / "hardware" / "long-box.md"
    note.write_text("---\nschema_version: 1\n---\n" + "x" * 2**20, encoding="utf-8")
    assert report_of(project, note).splitlines()[0] == (
        "content/hardware/long-box.md:1: (file): file is 1048602 bytes; the limit is 1 MiB (a "
        "hardware note is a page of facts and prose; link to long material instead)"
    )


# 16. samples --------------------------------------------------------------------------------


def test_samples_tolerance_follows_the_printed_precision() -> None:
    """Regression: the median of latency samples [2.0, 2.1, 2.2] could be reported as 3.0
    (the tolerance was max(1.0, 1%) whatever the unit)."""
    run = transcribed()
    run["results"]["statistic"] = "median"
    run["results"]["samples"] = {
        "tps": None,
        "tps_including_connections": None,
        "latency_avg_ms": [2.0, 2.1, 2.2],
    }
    run["results"]["latency_avg_ms"] = 3.0
    assert [i.message for i in run_rules(run, today=TODAY)] == [
        "3 is not the median of the samples (2.1)"
    ]
    run["results"]["latency_avg_ms"] = 2.1
    assert run_rules(run, today=TODAY) == []
    run["results"]["samples"]["tps"] = [404, 408, 415]
    run["results"]["statistic"] = "mean"
    run["results"]["latency_avg_ms"] = 2.1
    run["results"]["tps"] = 409  # the mean 409.0 as the source printed it
    assert run_rules(run, today=TODAY) == []


# 17. output hygiene -------------------------------------------------------------------------


def test_report_lines_stay_one_line(project: Path) -> None:
    """Regression: a path or a key with a newline or an escape character broke the
    `path:line: field: message` line in two (or drove the terminal)."""
    runs = project / "data" / "runs"
    runs.mkdir(parents=True)
    path = runs / "evil\nname.yaml"
    path.write_text('schema_version: 1\n"bad\\nkey\\e[31m": 1\n', encoding="utf-8")
    report = check_paths([str(path)], root=project)
    lines = format_report(report).replace(str(project) + "/", "").splitlines()
    assert len(lines) == len(report.findings) + 1
    assert all(line.startswith("data/runs/evil\\nname.yaml:") for line in lines[:-1])
    assert any(
        line.startswith("data/runs/evil\\nname.yaml:2: bad\\nkey\\x1b[31m: unknown key")
        for line in lines
    )
    assert one_line("x" * 500, 100) == "x" * 99 + "…"
    assert one_line("a\u202eb\r") == "a\\u202eb\\r"
