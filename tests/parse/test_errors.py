"""Input the parser must refuse, and the exact message a person sees for each."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import pytest

from pgbench_kb.errors import ParseError
from pgbench_kb.parse import parse_paths, parse_text

FIXTURES = Path(__file__).parent / "fixtures"


def error_of(call, *args, **kwargs) -> ParseError:
    with pytest.raises(ParseError) as info:
        call(*args, **kwargs)
    return info.value


def test_no_server_names_pgbench_reason() -> None:
    text = (FIXTURES / "pg18-no-server.txt").read_text()
    error = error_of(parse_text, text, source="out.txt")
    assert str(error) == (
        "out.txt:1: no pgbench results in this input; pgbench reported: connection to server on "
        'socket "/srv/bench/pg18/.s.PGSQL.54018" failed: No such file or directory '
        "(the benchmark did not run: fix that problem and run pgbench again)"
    )
    assert error.path == "out.txt"
    assert error.line == 1
    assert error.exit_status == 2


def test_empty_text_and_empty_file(tmp_path: Path) -> None:
    assert str(error_of(parse_text, "")) == (
        "<stdin>: the input is empty (give the text pgbench printed or a log file)"
    )
    assert str(error_of(parse_text, " \n\n\t\n")).startswith("<stdin>: the input is empty")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert str(error_of(parse_paths, [empty])) == (
        f"{empty}: the input is empty (give the text pgbench printed or a log file)"
    )


def test_binary_garbage(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 8)
    assert str(error_of(parse_paths, [garbage])) == (
        f"{garbage}: binary data, not pgbench text output or a pgbench log "
        "(give the text pgbench printed, or a pgbench_log.* file)"
    )
    assert "binary data" in str(error_of(parse_text, "\x00\x01\x02" * 100))


def test_compressed_log(tmp_path: Path) -> None:
    error = error_of(parse_paths, [FIXTURES / "error-gzip-compressed.log.gz"])
    assert error.message == "the file is compressed, not pgbench text or a log"
    assert (
        error.hint == "decompress it first with gunzip -k FILE or zstd -d FILE, and give the result"
    )


def test_summary_missing_its_tps_line() -> None:
    text = "".join((FIXTURES / "pg18-tpcb-P1-r.txt").read_text().splitlines(keepends=True)[:20])
    assert str(error_of(parse_text, text, source="cut.txt")) == (
        "cut.txt:20: the summary has no 'tps = …' line; the output looks cut short "
        "(give the whole pgbench output, down to its tps line)"
    )


def test_missing_tps_names_the_abort_reason() -> None:
    text = "\n".join(
        [
            "pgbench (16.2)",
            "starting vacuum...end.",
            "transaction type: <builtin: TPC-B (sort of)>",
            "number of clients: 4",
            "pgbench: error: client 0 aborted in command 4 (SQL) of script 0; perhaps the backend "
            "died while processing",
        ]
    )
    message = str(error_of(parse_text, text))
    assert message.startswith("<stdin>:5: the summary has no 'tps = …' line;")
    assert "pgbench reported on line 5: client 0 aborted in command 4" in message


def test_80_output_cut_after_the_first_tps_line() -> None:
    text = "".join((FIXTURES / "wiki-8.0-raid5-4x10k.txt").read_text().splitlines(True)[:5])
    message = error_of(parse_text, text).message
    assert message == (
        "the summary has 'tps = … (including connections establishing)' but not the "
        "'excluding' line that follows it; the output looks cut short"
    )


def test_two_runs_in_one_input() -> None:
    text = (FIXTURES / "pg18-simple-update-t500.txt").read_text() * 2
    assert str(error_of(parse_text, text)) == (
        "<stdin>:15: the input holds more than one run: 'pgbench_version' is given on lines 1 "
        "and 15 (give each run's output in its own file)"
    )


def test_two_summary_files() -> None:
    names = [FIXTURES / "pg18-custom-zipf.txt", FIXTURES / "pg18-simple-update-t500.txt"]
    assert error_of(parse_paths, names).message.startswith("2 inputs of kind 'summary' given (")


def test_nothing_like_pgbench() -> None:
    assert str(error_of(parse_text, "hello world\nthis is not pgbench\n")) == (
        "<stdin>: no pgbench output found (expected the text pgbench prints after a run, "
        "pgbench -i output, or a pgbench_log.* file)"
    )


def test_corrupt_log_line_is_named() -> None:
    error = error_of(parse_paths, [FIXTURES / "error-corrupt-transaction-log.log"])
    assert error.line == 58
    assert error.message == (
        "not a pgbench transaction log line: '7x8' in column latency_us is not a whole number"
    )


def test_short_log_line_is_named() -> None:
    lines = (FIXTURES / "pg18-per-transaction.log").read_text().splitlines(keepends=True)
    lines[99] = "0 100 683 0 1795305575\n"
    error = error_of(parse_text, "".join(lines), source="x.log")
    assert (error.path, error.line) == ("x.log", 100)
    assert error.message == "not a pgbench transaction log line: has 5 fields where this log has 6"


def test_impossible_microseconds_are_refused() -> None:
    lines = (FIXTURES / "pg18-per-transaction.log").read_text().splitlines(keepends=True)
    lines[9] = "0 10 784 0 1795305575 1546351\n"
    error = error_of(parse_text, "".join(lines))
    assert error.line == 10
    assert "time_us is 1546351" in error.message


def test_corrupted_timestamp_span_is_refused() -> None:
    lines = (FIXTURES / "pg18-per-transaction.log").read_text().splitlines(keepends=True)
    lines[9] = "0 10 784 0 1995305575 546351\n"
    assert "timestamps span" in error_of(parse_text, "".join(lines)).message


def test_logs_of_different_runs(tmp_path: Path) -> None:
    src = FIXTURES / "pg18-real-per-thread-logs-merged"
    shutil.copy(src / "pgbench_log.5158", tmp_path / "pgbench_log.5158")
    shutil.copy(src / "pgbench_log.5158.1", tmp_path / "pgbench_log.9999.1")
    error = error_of(parse_paths, sorted(tmp_path.iterdir()))
    assert error.message.startswith("the log files come from different runs:")


def test_transaction_and_aggregate_logs_together() -> None:
    names = [FIXTURES / "pg18-per-transaction.log", FIXTURES / "pg18-aggregate-1s.log"]
    assert error_of(parse_paths, names).message.startswith(
        "both per-transaction and aggregate logs given"
    )


def test_file_problems(tmp_path: Path) -> None:
    assert str(error_of(parse_paths, [])) == (
        "no input files given (name a file, or - for standard input)"
    )
    assert (
        str(error_of(parse_paths, [tmp_path / "nope.txt"])) == f"{tmp_path}/nope.txt: no such file"
    )
    assert error_of(parse_paths, [tmp_path]).message == "is a directory, not a file"
    same = FIXTURES / "pg18-per-transaction.log"
    assert error_of(parse_paths, [same, same]).message == "the same file is given twice"


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (FIXTURES / "pg18-custom-zipf.txt").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert parse_paths(["-"])["tps"] == 118671.748231
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert str(error_of(parse_paths, ["-"])).startswith("<stdin>: the input is empty")


def test_zero_transactions_is_a_result_not_an_error() -> None:
    result = parse_text((FIXTURES / "pg15-zero-processed.txt").read_text())
    assert result["transactions_processed"] == 0
    assert result["tps"] is None
    assert result["latency_avg_ms"] is None
