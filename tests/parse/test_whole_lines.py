"""Issue 12: ``kb parse`` must not join or cut lines that pgbench printed whole.

The inputs are real pgbench 15 and 18 outputs for the option combinations of pgbench's TAP
tests (``*-tap-*.txt``, written by make_tap_fixtures.py). Each bug of the issue has its test
here; the golden files check the whole results, quoted text included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pgbench_kb.errors import ParseError
from pgbench_kb.parse import parse_text
from pgbench_kb.parse.textlines import breaks_a_word, prepare_lines, wrap_width

FIXTURES = Path(__file__).parent / "fixtures"
TAP = sorted(FIXTURES.glob("*-tap-*.txt"))
VERSIONS = ("pg15", "pg18")


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def parse(name: str) -> dict:
    return parse_text(read(name), source=name)


def error_of(name: str) -> str:
    with pytest.raises(ParseError) as caught:
        parse(name)
    return str(caught.value)


def hard_wrap(text: str, width: int) -> str:
    """``text`` as a terminal that hard-wraps at ``width`` columns leaves it."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out)


def test_the_tap_fixtures_are_there() -> None:
    # Both versions, every kind of case: a missing set must not pass the tests below silently.
    for version in VERSIONS:
        names = {p.name for p in TAP if p.name.startswith(f"{version}-tap-")}
        assert len(names) >= 100, version
        for case in ("option-t-and-T", "max-tries-verbose-errors", "bad-sql-aborts-clients"):
            assert f"{version}-tap-{case}.txt" in names


@pytest.mark.parametrize("path", TAP, ids=lambda p: p.name)
def test_bug_whole_lines_were_joined_or_cut(path: Path) -> None:
    # Every line pgbench printed comes out of prepare_lines as it went in: no hard-wrap repair
    # (equal lengths are no evidence) and no split of a line holding two known phrases.
    text = path.read_text(encoding="utf-8")
    lines, restored, _ = prepare_lines(text)
    expected = [raw.strip() for raw in text.split("\n") if raw.strip()]
    assert [line.text for line in lines] == expected
    assert not restored


@pytest.mark.parametrize("version", VERSIONS)
def test_bug_two_clients_abort_messages_were_glued_to_line_1(version: str) -> None:
    # Two clients' abort messages have the same (greatest) length; they were taken as a
    # terminal's wrap width and 'does not exist' was glued to 'LINE 1: SELECT abc …'.
    name = f"{version}-tap-bad-sql-aborts-clients.txt"
    result = parse(name)
    printed = [line for line in read(name).splitlines() if "aborted" in line]
    assert result["abort_messages"] == printed
    assert all(m.endswith(("does not exist", "incomplete.")) for m in result["abort_messages"])
    assert result["aborted"] is True
    assert result["transactions_processed"] == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_bug_verbose_errors_with_retries_were_joined(version: str) -> None:
    # --max-tries 10 --verbose-errors with serialization failures: hundreds of same-length
    # messages, each of which used to swallow the next line.
    text = read(f"{version}-tap-max-tries-verbose-errors.txt")
    lines, _, _ = prepare_lines(text)
    assert len(lines) == len([raw for raw in text.splitlines() if raw.strip()])
    assert sum("could not serialize access" in raw for raw in text.splitlines()) > 100
    assert wrap_width(text.split("\n")) == 0


def test_bug_progress_line_was_joined_to_a_debug_line() -> None:
    # --debug -P 1 -R with --max-tries: '…0 retries' + 'pgbench: client 0 sending SELECT 1;'.
    for version in VERSIONS:
        name = f"{version}-tap-debug-P1-R-max-tries.txt"
        text = read(name)
        progress = [line for line in text.splitlines() if line.startswith("progress: ")]
        result = parse(name)
        assert len(result["progress"]) == len(progress) >= 1
        assert all(p["retries"] is not None for p in result["progress"])
        lines, _, _ = prepare_lines(text)
        assert [line.text for line in lines if line.text.startswith("progress: ")] == progress


def test_equal_lengths_alone_are_no_wrap_but_a_cut_word_is() -> None:
    whole = [
        "pgbench: error: client 0 aborted in command 0 query 0: ERROR:  column does not exist",
        "LINE 1: SELECT abc FROM pgbench_branches;",
        "pgbench: error: client 1 aborted in command 0 query 0: ERROR:  column does not exist",
        "LINE 1: SELECT abc FROM pgbench_branches;",
    ]
    assert wrap_width(whole) == 0
    wrapped = [
        "         0.064           0  UPDATE pgbench_accounts SET abalance = abalance + :d",
        "elta WHERE aid = :aid;",
        "         0.077           0  SELECT abalance FROM pgbench_accounts WHERE aid = :a",
        "id;",
    ]
    assert wrap_width(wrapped) == 80
    assert breaks_a_word("progress: 1.0 s, 7634.0 tps, lat 0.5", "13 ms stddev 0.216, 0 failed")
    assert not breaks_a_word("…column does not exist", "LINE 1: SELECT abc")
    assert not breaks_a_word("…0 retried, 0 retries", "pgbench: client 0 sending SELECT 1;")
    assert not breaks_a_word("…of script 0; ERROR:  x", "client 1 got an error in command 2")


@pytest.mark.parametrize(
    ("name", "width"),
    [
        ("pg18-tap-debug-P1-R-max-tries.txt", 80),
        ("pg15-tap-max-tries-verbose-errors.txt", 100),
        ("pg18-tap-max-tries-verbose-errors.txt", 60),
        ("pg15-tap-failures-detailed-max-tries-P1.txt", 80),
        ("pg18-tap-P1-R-L.txt", 60),
        ("pg18-tap-custom-scripts-weights.txt", 60),
        ("pg18-tap-option-sampling-and-aggregate.txt", 80),
    ],
)
def test_text_hard_wrapped_where_it_cuts_words_is_still_repaired(name: str, width: int) -> None:
    # The repair still works when the input shows a wrap: in these copies a cut falls inside a
    # word or a number (wrap_width finds the width), and the wrapped copy reads as the original.
    text = read(name)
    wrapped = hard_wrap(text, width)
    assert wrapped != text
    assert wrap_width(wrapped.split("\n")) == width
    try:
        expected = parse_text(text, source=name)
    except ParseError as error:
        with pytest.raises(ParseError) as caught:
            parse_text(wrapped, source=name)
        assert str(caught.value) == str(error)
        return
    assert parse_text(wrapped, source=name) == expected


def test_flattened_tap_output_still_reads_as_the_original() -> None:
    # A whole summary on one line (a web paste) still shows its flattening and is split again.
    for name in ("pg18-tap-P1-R-L.txt", "pg15-tap-failures-detailed-max-tries-P1.txt"):
        text = read(name)
        flat = " ".join(line.strip() for line in text.splitlines() if line.strip())
        expected = parse_text(text, source=name)
        got = parse_text(flat, source=name)
        assert got["notes"] == ["line breaks were missing and have been restored"]
        got["notes"] = expected["notes"]
        assert got == expected


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "case", ["option-t-and-T", "option-t-and-T-with-logging", "option-T-and-t-with-progress"]
)
def test_bug_refused_t_and_T_was_quoted_as_specify_either_a(version: str, case: str) -> None:
    message = error_of(f"{version}-tap-{case}.txt")
    assert (
        "pgbench reported: specify either a number of transactions (-t) or a duration (-T), "
        "not both (" in message
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_bug_unknown_option_was_no_pgbench_output_found(version: str) -> None:
    # getopt starts its message with the path pgbench was started by, not 'pgbench:'.
    message = error_of(f"{version}-tap-option-unknown.txt")
    assert "pgbench reported: unrecognized option '--bad-option'" in message
    assert "no pgbench output found" not in message


@pytest.mark.parametrize(
    "line",
    [
        "pgbench: unrecognized option '--bad-option'",
        "/usr/local/pgsql/bin/pgbench: invalid option -- 'k'",
        "C:\\PostgreSQL\\16\\bin\\pgbench.exe: option requires an argument -- 'c'",
        "./pgbench: option '--client' requires an argument",
    ],
)
def test_getopt_messages_under_any_program_path(line: str) -> None:
    text = f'{line}\nTry "pgbench --help" for more information.\n'
    with pytest.raises(ParseError) as caught:
        parse_text(text, source="out.txt")
    assert f"pgbench reported: {line.split(': ', 1)[1]} (" in str(caught.value)


def test_bug_exit_on_abort_was_reported_as_not_run() -> None:
    message = error_of("pg18-tap-exit-on-abort.txt")
    assert message.startswith("pg18-tap-exit-on-abort.txt:2: the benchmark ran but was aborted")
    assert "(Run was aborted due to an error in thread 1)" in message
    assert (
        'pgbench reported: client 1 script 0 aborted in command 0 query 0: ERROR:  column "abc"'
        in message
    )
    assert "did not run" not in message
    # pgbench 15 has no --exit-on-abort: it refuses the option.
    assert "unrecognized option '--exit-on-abort'" in error_of("pg15-tap-exit-on-abort.txt")


def test_exit_on_abort_through_the_cli() -> None:
    path = FIXTURES / "pg18-tap-exit-on-abort.txt"
    run = subprocess.run(
        [sys.executable, "-m", "pgbench_kb", "parse", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1
    assert run.stderr.startswith(f"error: {path}:2: the benchmark ran but was aborted")


@pytest.mark.parametrize("version", VERSIONS)
def test_short_processed_count_marks_an_abort_in_15_and_18(version: str) -> None:
    # docs/parser.md: the short 'processed N/M' count marks an abort in every version, also
    # when the abort lines (stderr) were not kept.
    text = read(f"{version}-tap-bad-sql-aborts-clients.txt")
    stdout_only = "\n".join(line for line in text.splitlines() if "pgbench: error" not in line)
    stdout_only = "\n".join(
        line for line in stdout_only.splitlines() if not line.startswith(("LINE", " "))
    )
    result = parse_text(stdout_only + "\n", source="out.txt")
    assert result["abort_messages"] == []
    assert result["aborted"] is True
    assert result["notes"][-1].startswith("fewer transactions processed")


def test_aborted_without_summary_before_15_names_the_abort_line() -> None:
    # Before 15 an aborted client's line has no 'pgbench: error:' prefix; with no summary after
    # it the run still ran and aborted, and the message points at that line.
    text = "starting vacuum...end.\nclient 0 aborted in state 3: ERROR:  x\nclient 1 aborted\n"
    with pytest.raises(ParseError) as caught:
        parse_text(text, source="out.txt")
    assert str(caught.value).startswith(
        "out.txt:2: the benchmark ran but was aborted before pgbench printed its summary; "
        "pgbench reported: client 0 aborted in state 3: ERROR:  x ("
    )
