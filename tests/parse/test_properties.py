"""Property tests: damaged input gives a ParseError or a result whose numbers are all true.

Real outputs are truncated, shuffled line by line, and corrupted byte by byte. Whatever comes
out, the parser may only raise ParseError, and every number in a summary result must be one
that appears in the (damaged) text: the parser copies figures, it never invents them. For logs,
each percentile must be a latency that is in the log (nearest-rank) and the figures must be
ordered and consistent.
"""

from __future__ import annotations

import contextlib
import math
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pgbench_kb.errors import ParseError
from pgbench_kb.parse import parse_paths, parse_text
from pgbench_kb.parse.detect import decode_text

FIXTURES = Path(__file__).parent / "fixtures"
TEXTS = sorted(p for p in FIXTURES.glob("*.txt") if not p.name.startswith("error-"))
LOGS = sorted(p for p in FIXTURES.glob("*.log") if not p.name.startswith("error-"))
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
#: Result keys whose values are not copied from the text.
DERIVED = {"notes", "warnings", "abort_messages", "progress_timestamps", "init"}
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def numbers_in(value: Any) -> list[float]:
    """Every int or float inside a result (booleans and strings left out)."""
    found: list[float] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in DERIVED:
                found.extend(numbers_in(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(numbers_in(item))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        found.append(float(value))
    return found


def text_numbers(text: str) -> set[float]:
    return {float(token) for token in NUMBER.findall(text)}


def mutate(data: st.DataObject, raw: bytes) -> bytes:
    """Truncate, shuffle lines, or overwrite a few bytes — or several of these."""
    mode = data.draw(st.sampled_from(["truncate", "shuffle", "corrupt", "all"]))
    if mode in ("truncate", "all") and raw:
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    if mode in ("shuffle", "all"):
        lines = raw.split(b"\n")
        order = data.draw(st.permutations(range(len(lines))))
        raw = b"\n".join(lines[i] for i in order)
    if mode in ("corrupt", "all") and raw:
        buffer = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 6))):
            position = data.draw(st.integers(0, len(buffer) - 1))
            buffer[position] = data.draw(st.integers(0, 255))
        raw = bytes(buffer)
    return raw


def check_summary_numbers(result: dict[str, Any], text: str) -> None:
    present = text_numbers(text)
    for number in numbers_in(result):
        assert number in present, f"{number} is not in the text"


def check_log_result(result: dict[str, Any], text: str) -> None:
    if result["kind"] == "transaction_log":
        latency = result["latency_ms"]
        ordered = [latency[k] for k in ("min", "p50", "p90", "p95", "p99", "p999", "max")]
        if result["transactions"]:
            assert ordered == sorted(ordered)
            tokens = set(text.split())
            for value in ordered:
                assert str(round(value * 1000)) in tokens, f"{value} ms is not a logged latency"
        assert result["transactions"] + result["failed"] + result["skipped"] == result["rows"]
        if result["tps_per_second"] is not None:
            assert sum(result["tps_per_second"]) == result["transactions"]
    elif result["kind"] == "aggregate_log":
        assert sum(result["transactions_per_interval"]) == result["transactions"]
        latency = result["latency_ms"]
        if result["transactions"]:
            assert latency["min"] <= latency["max"]


@SETTINGS
@given(data=st.data(), path=st.sampled_from(TEXTS))
def test_damaged_text_output(data: st.DataObject, path: Path) -> None:
    text = decode_text(mutate(data, path.read_bytes()))
    try:
        result = parse_text(text, source=path.name)
    except ParseError:
        return
    if result["kind"] == "summary":
        check_summary_numbers(result, text)
    elif result["kind"] == "init":
        check_summary_numbers({k: v for k, v in result.items() if k != "scale"}, text)
    else:
        check_log_result(result, text)


@SETTINGS
@given(data=st.data(), path=st.sampled_from(LOGS))
def test_damaged_log_file(data: st.DataObject, path: Path, tmp_path_factory) -> None:
    raw = mutate(data, path.read_bytes())
    target = tmp_path_factory.mktemp("damaged") / path.name
    target.write_bytes(raw)
    try:
        result = parse_paths([target])
    except ParseError:
        return
    text = decode_text(raw)
    if result["kind"] == "summary":
        check_summary_numbers(result, text)
    else:
        check_log_result(result, text)
    for number in numbers_in(result):
        assert math.isfinite(number)


@settings(max_examples=100, deadline=None)
@given(raw=st.binary(max_size=2000))
def test_arbitrary_bytes(raw: bytes, tmp_path_factory) -> None:
    target = tmp_path_factory.mktemp("bytes") / "input"
    target.write_bytes(raw)
    with contextlib.suppress(ParseError):
        parse_paths([target])


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=500))
def test_arbitrary_text(text: str) -> None:
    try:
        result = parse_text(text)
    except ParseError:
        return
    if result["kind"] == "summary":
        check_summary_numbers(result, text)
