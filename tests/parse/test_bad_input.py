"""Regressions from QA and review: bad input gives a correct parse or one clear ParseError that
names the line — never a traceback, and never a silently wrong number.

Each test names the bug it guards. Golden fixtures cover some of them too (``error-*`` files,
``pg11-t-rate-limit-skipped.txt``, ``pg18-powershell-utf16.txt``).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pgbench_kb.errors import ParseError
from pgbench_kb.parse import MAX_TEXT_BYTES, parse_paths, parse_text, textlines

FIXTURES = Path(__file__).parent / "fixtures"
SUMMARY = (FIXTURES / "pg18-tpcb-P1-r.txt").read_text()
TX_LOG = (FIXTURES / "pg18-per-transaction.log").read_text().splitlines(keepends=True)
AGG_LOG = (FIXTURES / "pg18-aggregate-1s.log").read_text()
HUGE = "9" * 5000  # past Python's 4300-digit limit for int(str)
INT64_MAX = str(2**63 - 1)


def error_of(call, *args, **kwargs) -> ParseError:
    with pytest.raises(ParseError) as info:
        call(*args, **kwargs)
    return info.value


def replace_line(text: str, start: str, new: str) -> str:
    """``text`` with its line starting ``start`` replaced by ``new``."""
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.startswith(start))
    lines[index] = new + "\n"
    return "".join(lines)


def with_log_line(line: str, at: int = 50) -> str:
    """The per-transaction log fixture with ``line`` inserted after line ``at``."""
    return "".join(TX_LOG[:at]) + line + "\n" + "".join(TX_LOG[at:])


# ---------------------------------------------------------------------------------------------
# 1. Integers longer than 4300 digits crashed with "ValueError: Exceeds the limit".


@pytest.mark.parametrize(
    ("start", "line", "field"),
    [
        ("duration:", f"duration: {HUGE} s", "duration_s"),
        ("number of clients:", f"number of clients: {HUGE}", "clients"),
        ("number of failed transactions:", f"number of failed transactions: {HUGE}", None),
        (
            "number of transactions actually",
            f"number of transactions actually processed: {HUGE}",
            None,
        ),
        ("latency average", f"latency average = {HUGE}.5 ms", "latency_avg_ms"),
        ("tps =", f"tps = {HUGE}.000000 (without initial connection time)", "tps"),
        (
            "progress: 1.0 s",
            f"progress: 1.0 s, 4216.9 tps, lat 0.944 ms stddev 0.569, {HUGE} failed",
            "progress",
        ),
    ],
)
def test_bug_huge_integer_in_summary_is_a_clear_error(start: str, line: str, field: str) -> None:
    text = replace_line(SUMMARY, start, line)
    number = text.splitlines().index(line) + 1
    error = error_of(parse_text, text, source="out.txt")
    assert error.line == number
    assert "5000 digits" in error.message
    assert "more than any number pgbench prints" in error.message
    if field:
        assert error.field == field
    assert len(str(error)) < 400


def test_bug_huge_integer_in_statement_line_is_a_clear_error() -> None:
    lines = SUMMARY.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith("0.001"))
    lines[index] = f"         0.001  {HUGE} \\set aid random(1, 100000 * :scale)"
    error = error_of(parse_text, "\n".join(lines) + "\n")
    assert error.line == index + 1
    assert error.field == "statements"


def test_bug_huge_integer_in_init_output_is_a_clear_error() -> None:
    text = (FIXTURES / "pg18-init-s2.txt").read_text()
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if " of 200000 tuples" in line)
    lines[index] = lines[index].replace("200000 tuples", f"{HUGE} tuples", 1)
    error = error_of(parse_text, "\n".join(lines) + "\n")
    assert (error.line, error.field) == (index + 1, "rows_total")
    assert "5000 digits" in error.message


def test_bug_huge_integer_in_aggregate_log_is_a_clear_error() -> None:
    text = f"1795305578 1 {HUGE} 0 1 1 0 0 0 0 0 0 0 0 0\n"
    error = error_of(parse_text, text, source="agg.log")
    assert (error.path, error.line) == ("agg.log", 1)
    assert "in column latency_sum_us has 5000 digits; pgbench writes at most 19" in error.message


def test_bug_huge_transaction_number_crashed_the_sampling_hint() -> None:
    error = error_of(parse_text, f"0 {HUGE} 5 0 1795305575 540653\n" + "".join(TX_LOG))
    assert error.line == 1
    assert "column transaction_no has 5000 digits" in error.message


def test_bug_huge_seventh_column_or_word_in_log_sniffing() -> None:
    # The 7th-column guess (retries or lag) converted every value with int().
    rows = "".join(f"0 {i} 5 0 1795305575 540653 failed\n" for i in range(1, 4))
    assert "'failed' in column schedule_lag_us" in error_of(parse_text, rows).message
    rows = "".join(f"0 {i} 5 0 1795305575 540653 {HUGE}\n" for i in range(1, 4))
    assert "5000 digits" in error_of(parse_text, rows).message


# ---------------------------------------------------------------------------------------------
# 2. Aggregate logs with ~400-digit values crashed with OverflowError.


def test_bug_aggregate_values_beyond_int64_overflowed() -> None:
    big = "9" * 400
    text = AGG_LOG + f"1795305583 1 {big} 0 {big} {big} 0 0 0 0 0 0 0 0 0\n"
    error = error_of(parse_text, text)
    assert error.line == len(AGG_LOG.splitlines()) + 1
    assert "has 400 digits" in error.message
    twenty = str(2**63)  # 19 digits, one past int64
    error = error_of(parse_text, f"1795305578 1 {twenty} 0 1 1 0 0 0 0 0 0 0 0 0\n")
    assert error.message.endswith(f"latency_sum_us is {twenty}, larger than a 64-bit integer")


def test_bug_aggregate_impossible_latency_and_sums() -> None:
    day_us = 86_400 * 1_000_000
    line = f"1795305578 1 {day_us + 1} {(day_us + 1) ** 2} {day_us + 1} {day_us + 1}"
    error = error_of(parse_text, line + " 0 0 0 0 0 0 0 0 0\n")
    assert "more than a day in µs" in error.message
    error = error_of(parse_text, "1795305578 2 4 99999999 2 2 0 0 0 0 0 0 0 0 0\n")
    assert error.message.startswith("impossible aggregate log line: latency sum of squares")
    error = error_of(parse_text, "1795305578 2 4 8 2 2 500 0 0 3 0 0 0 0 0\n")
    assert error.message.startswith("impossible aggregate log line: lag sum 500")


# ---------------------------------------------------------------------------------------------
# 3. An int64-max latency overflowed the sums into a negative average (exit 0).


def test_bug_int64_max_latency_gave_negative_average() -> None:
    error = error_of(parse_text, with_log_line(f"0 51 {INT64_MAX} 0 1795305575 540653"))
    assert error.line == 51
    assert "more than a day in µs" in error.message


def test_bug_impossible_lag_retries_and_epoch_are_refused() -> None:
    lines = [f"0 {i} 500 0 1795305575 {i * 1000} {i * 37}" for i in range(1, 60)]
    base = "\n".join(lines) + "\n"
    assert parse_text(base)["schedule_lag_ms"]["max"] == 2.183
    bad = base.replace(" 37\n", f" {INT64_MAX}\n", 1)
    assert "schedule_lag_us is" in error_of(parse_text, bad).message
    bad = "".join(TX_LOG).replace(" 1795305575 ", " 99999999999 ", 1)
    assert "time_epoch_s is 99999999999, not a Unix time" in error_of(parse_text, bad).message


def test_bug_plus_sign_read_as_a_number() -> None:
    error = error_of(parse_text, with_log_line("0 51 +5 0 1795305575 540653"))
    assert error.line == 51
    assert "'+5' in column latency_us is not a whole number" in error.message


# ---------------------------------------------------------------------------------------------
# 4. Per-transaction lines with extra fields were accepted; a trailing "failed" counted as a
#    success.


@pytest.mark.parametrize("extra", ["failed", "7", "7 8", "skipped"])
def test_bug_extra_fields_in_transaction_log_accepted(extra: str) -> None:
    error = error_of(parse_text, with_log_line(f"0 2 5 0 1795305575 540653 {extra}"))
    assert error.line == 51
    assert error.message.startswith("not a pgbench transaction log line: has ")
    assert "where this log has 6" in error.message


def test_bug_extra_field_in_a_later_block_of_a_large_log(tmp_path: Path) -> None:
    # Past the first 8 MB block and the 2000 sniffed lines: only the fast reader sees it.
    body = "".join(TX_LOG) * 1500  # 8.8 MB
    path = tmp_path / "pgbench_log.1"
    path.write_text(body + "0 2 5 0 1795305575 540653 failed\n" + body[:100_000])
    error = error_of(parse_paths, [path])
    assert error.line == len(TX_LOG) * 1500 + 1


# ---------------------------------------------------------------------------------------------
# 5. Pipes were opened twice: a FIFO hung, <(cat out.txt) found nothing, <(cat log) crashed.


CLI = "import sys; from pgbench_kb.cli import main; sys.exit(main(sys.argv[1:]))"
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "scripts")}


def shell_kb(command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``command`` in bash, with ``$KB`` standing for the kb CLI."""
    return subprocess.run(
        ["bash", "-c", f'KB=("$0" -c "$1"); {command}', sys.executable, CLI],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
    )


@pytest.mark.parametrize("name", ["pg18-tpcb-P1-r.txt", "pg18-per-transaction.log"])
def test_bug_fifo_was_opened_twice(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = shell_kb(f'(cat "{FIXTURES / name}" > "{fifo}" &); "${{KB[@]}}" parse "{fifo}"', 20)
    assert done.returncode == 0, done.stderr
    expected = parse_paths([FIXTURES / name])
    expected.pop("files", None)
    result = json.loads(done.stdout)
    result.pop("files", None)
    assert result == expected


@pytest.mark.parametrize("name", ["pg18-tpcb-P1-r.txt", "pg18-per-transaction.log"])
def test_bug_process_substitution_read_after_its_head(name: str) -> None:
    done = shell_kb(f'"${{KB[@]}}" parse <(cat "{FIXTURES / name}")')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kind"] in ("summary", "transaction_log")


# ---------------------------------------------------------------------------------------------
# 6. Standard input was read without a bound (MemoryError on `yes junk | kb parse -`).


def test_bug_unbounded_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    class Endless(io.RawIOBase):
        served = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            buffer[:] = b"junk\n" * (len(buffer) // 5) + b"j" * (len(buffer) % 5)
            Endless.served += len(buffer)
            return len(buffer)

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    error = error_of(parse_paths, ["-"])
    assert error.message.startswith("more than 64 MiB from a pipe or standard input")
    assert Endless.served <= MAX_TEXT_BYTES + 2 * 1024 * 1024


def test_bug_unbounded_stdin_through_the_cli() -> None:
    done = shell_kb('ulimit -v 1500000; yes junk | "${KB[@]}" parse -')
    assert done.returncode == 2
    assert done.stderr.startswith("error: <stdin>: more than 64 MiB")
    assert done.stderr.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# 7. The same log under two spellings (or via a symlink) was counted twice.


def test_bug_same_log_under_two_spellings_counted_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "pgbench_log.111"
    log.write_text("".join(TX_LOG))
    (tmp_path / "link.111").symlink_to(log.name)
    monkeypatch.chdir(tmp_path)
    for other in ("./pgbench_log.111", str(log), "link.111", "../" + tmp_path.name + "/link.111"):
        error = error_of(parse_paths, ["pgbench_log.111", other])
        assert error.message == "the same file is given twice"
        assert error.hint == f"pgbench_log.111 and {other} are one file; give each file once"
    assert parse_paths(["pgbench_log.111"])["transactions"] == 200


# ---------------------------------------------------------------------------------------------
# 8. A -t run with skipped transactions (-R … -L) was marked aborted.


def test_bug_skipped_transactions_marked_aborted() -> None:
    result = parse_paths([FIXTURES / "pg11-t-rate-limit-skipped.txt"])
    assert (result["transactions_processed"], result["transactions_expected"]) == (180, 200)
    assert result["skipped_transactions"] == 20
    assert result["aborted"] is False
    # A count short of processed + skipped still means clients aborted (before 12).
    text = (FIXTURES / "pg11-t-rate-limit-skipped.txt").read_text()
    short = parse_text(text.replace("processed: 180/200", "processed: 150/200"))
    assert short["aborted"] is True
    assert "some clients aborted" in short["notes"][0]


def test_failed_transactions_count_towards_the_expected_total() -> None:
    # 15+: processed leaves out failed transactions, so 180/200 with 20 failed is complete.
    text = replace_line(
        replace_line(SUMMARY, "duration:", "number of transactions per client: 100"),
        "number of transactions actually",
        "number of transactions actually processed: 180/200",
    )
    text = replace_line(text, "number of failed", "number of failed transactions: 20 (10.000%)")
    assert parse_text(text)["aborted"] is False
    text = text.replace("processed: 180/200", "processed: 170/200")
    assert parse_text(text)["aborted"] is True


# ---------------------------------------------------------------------------------------------
# 9. Number forms pgbench never prints were silently null, or blamed on a missing tps line.


@pytest.mark.parametrize(
    ("start", "line", "field", "value", "hint"),
    [
        ("number of clients:", "number of clients: 1,000", "clients", "1,000", "a thousands"),
        ("number of clients:", "number of clients: -4", "clients", "-4", "pgbench prints no neg"),
        ("latency average", "latency average = 1,907 ms", "latency_avg_ms", "1,907", "a thousands"),
        ("scaling factor:", "scaling factor: 1e309", "scale", "1e309", "pgbench prints no exp"),
        ("scaling factor:", "scaling factor: 1.5", "scale", "1.5", "paste the output"),
        ("tps =", "tps = 4,399.8 (without initial connection time)", "tps", "4,399.8", "a thou"),
        ("tps =", "tps = -5 (without initial connection time)", "tps", "-5", "pgbench prints no"),
        ("tps =", "tps = -5", "tps", "-5", "pgbench prints no"),
        (
            "number of transactions actually",
            "number of transactions actually processed: 1,000/1000",
            "transactions_processed",
            "1,000",
            "a thou",
        ),
        (
            "progress: 1.0 s",
            "progress: 1.0 s, 4,216.9 tps, lat 0.944 ms stddev 0.569, 0 failed",
            "progress",
            "4,216.9",
            "a thou",
        ),
        (
            "progress: 1.0 s",
            "progress: 1.0 s, 4216.9 tps, lat 0.944 ms stddev 0.569, -1 failed",
            "progress",
            "-1",
            "pgbench prints no",
        ),
    ],
)
def test_bug_number_forms_pgbench_never_prints(
    start: str, line: str, field: str, value: str, hint: str
) -> None:
    text = replace_line(SUMMARY, start, line)
    number = text.splitlines().index(line) + 1
    error = error_of(parse_text, text, source="out.txt")
    assert str(error).startswith(
        f"out.txt:{number}: {field}: '{value}' is not a number pgbench prints ("
    ), str(error)
    assert error.hint.startswith(hint)


def test_bug_tps_inf_or_nan_blamed_on_a_missing_tps_line() -> None:
    for value in ("inf", "nan", "-nan"):
        text = replace_line(SUMMARY, "tps =", f"tps = {value} (without initial connection time)")
        assert str(error_of(parse_text, text, source="out.txt")) == (
            f"out.txt:21: tps: '{value}' is not a figure of a run that processed transactions "
            "(the line looks edited; paste the output as pgbench printed it)"
        )


def test_nan_figures_that_pgbench_can_print_become_null_with_a_note() -> None:
    text = replace_line(SUMMARY, "latency stddev", "latency stddev = nan ms")
    result = parse_text(text)
    assert result["latency_stddev_ms"] is None
    assert "latency_stddev_ms is printed as 'nan'; kept as null" in result["notes"][0]


def test_bad_number_in_a_script_block_line() -> None:
    text = (FIXTURES / "pg18-real-multi-builtin-weights-r.txt").read_text()
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith("- weight:"))
    lines[index] = " - weight: 1,000 (targets 50.0% of total)"
    error = error_of(parse_text, "\n".join(lines) + "\n")
    assert (error.line, error.field) == (index + 1, "weight")


def test_cut_bare_tps_is_still_reported_as_cut_short() -> None:
    text = replace_line(SUMMARY, "tps =", "tps = 4399.8")
    assert "the output looks cut short" in error_of(parse_text, text).message


# ---------------------------------------------------------------------------------------------
# 10. Messages: UTF-16, an empty file name, log values beyond int64, control characters.


def test_bug_utf16_output_called_binary(tmp_path: Path) -> None:
    result = parse_paths([FIXTURES / "pg18-powershell-utf16.txt"])
    assert result["tps"] == parse_paths([FIXTURES / "pg18-simple-update-t500.txt"])["tps"]
    assert result["notes"] == ["the file is UTF-16 (as PowerShell's > writes it)"]
    no_bom = tmp_path / "pgbench_log.7"
    no_bom.write_bytes("".join(TX_LOG).encode("utf-16-le"))
    assert parse_paths([no_bom])["transactions"] == 200
    # Text that was UTF-16 but reached parse_text decoded as Latin-1 cannot be decoded again.
    garbled = (FIXTURES / "pg18-powershell-utf16.txt").read_bytes().decode("latin-1")
    error = error_of(parse_text, garbled)
    assert error.message.startswith("UTF-16 text (as PowerShell's > writes it)")
    assert error.hint == "convert it first, e.g. iconv -f UTF-16 -t UTF-8 FILE > out.txt"


def test_bug_empty_file_name_said_is_a_directory() -> None:
    assert str(error_of(parse_paths, [""])) == (
        "the file name is empty (name a file, or - for standard input)"
    )


def test_bug_log_value_beyond_int64_had_no_line_number() -> None:
    error = error_of(parse_text, with_log_line("0 6 99999999999999999999 0 1795305575 540653", 5))
    assert error.line == 6
    assert "dtype" not in error.message


def test_bug_control_characters_and_long_input_in_messages() -> None:
    noise = "\x1b[31m\v\f\x7f" + "x" * 5000  # (NUL bytes make the input binary data)
    text = f"pgbench: error: connection to server failed: {noise}\n"
    message = str(error_of(parse_text, text))
    assert message.isprintable()
    assert "\\x1b[31m\\x0b\\x0c\\x7f" in message
    assert len(message) < 400
    text = replace_line(SUMMARY, "number of clients:", f"number of clients: 1,\x1b[2J{'0' * 900}")
    message = str(error_of(parse_text, text))
    assert message.isprintable() and len(message) < 400
    lines = list(TX_LOG)
    lines[3] = f"0 4 \x1b[2J{'7' * 300}x 0 1795305575 540653\n"
    message = str(error_of(parse_text, "".join(lines)))
    assert message.isprintable() and len(message) < 400
    assert str(error_of(parse_paths, ["no\x1bsuch"])) == "no\\x1bsuch: no such file"


def test_printable_and_quote() -> None:
    assert textlines.printable("a\tb\x85c\u2028") == "a\\x09b\\x85c\\x2028"
    assert textlines.quote("x" * 300) == "'" + "x" * 200 + "…'"
