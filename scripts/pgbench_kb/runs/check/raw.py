"""Rules on ``raw``: each raw file present and matching its sha256; the output and transaction logs
re-parsed and compared with the run.
"""

from __future__ import annotations

import io
import os
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pgbench_kb.errors import KbError
from pgbench_kb.runs import latency_zeros
from pgbench_kb.runs.build import output_values, percentiles_from_log
from pgbench_kb.runs.check.report import Issue
from pgbench_kb.runs.check.values import differs, same_value, shown_value
from pgbench_kb.runs.runfile import (
    MAX_LOG_BYTES,
    MAX_RAW_OUTPUT_BYTES,
    GzipBudget,
    contributed_path,
    read_bytes_bounded,
    sha256_bytes,
    sha256_file_bounded,
    unpack_gzip,
)

RAW_SIZE_HINT = "raw files are pgbench's output and its logs, kept as they were written"
RAW_OUTPUT_HINT = (
    "pgbench's output as it printed it, nothing appended; a day of -P 1 progress lines is "
    "about 6 MB"
)


def rules_raw_output(run: dict[str, Any], parsed: dict[str, Any]) -> list[Issue]:
    """The figures in the run file against what its raw output says.

    Every key ``kb import`` copies from the output (``runs.build.output_values``) must equal the
    re-parsed value; where the output says nothing, the run must say nothing either — except
    for invocation facts that the harness read from the command it ran, or that a person
    declared (an old pgbench that did not print its query mode, say)."""
    issues = []
    measured_by_harness = run["provenance"].get("harness") is not None
    declared = set(run["provenance"].get("declared") or [])
    for section, said_here in output_values(parsed).items():
        for key, said in said_here.items():
            have = run[section].get(key)
            if said is None or said == []:
                if have is None or have == []:
                    continue
                known_otherwise = section == "benchmark" and (
                    measured_by_harness or {section, f"{section}.{key}"} & declared
                )
                if not known_otherwise:
                    issues.append(
                        Issue(
                            f"{section}.{key}",
                            f"{shown_value(have)} but the raw output does not say it (make "
                            "it null: figures of a run with raw output come from that output)",
                        )
                    )
            elif not same_value(have, said):
                issues.append(
                    Issue(
                        f"{section}.{key}",
                        f"{shown_value(have)} but the raw output says {shown_value(said)}",
                    )
                )
    if bool(parsed.get("aborted")) != bool(run["results"].get("aborted")):
        issues.append(
            Issue(
                "results.aborted",
                f"{str(bool(run['results'].get('aborted'))).lower()} but the raw output says "
                f"{str(bool(parsed.get('aborted'))).lower()}",
            )
        )
    return issues


def rules_transaction_log(run: dict[str, Any], log: dict[str, Any]) -> list[Issue]:
    """The latency percentiles (and what they rest on) against the re-parsed transaction log."""
    percentiles, basis = percentiles_from_log(log)
    res = run["results"]
    issues = []
    for key, said_here in (
        ("latency_percentiles_ms", percentiles),
        ("latency_percentiles_from", {"latencies": basis["latencies"]}),
    ):
        have_all = res.get(key) or {}
        for part, said in said_here.items():
            have = have_all.get(part)
            if differs(have, said):
                issues.append(
                    Issue(
                        f"results.{key}.{part}" if have_all else f"results.{key}",
                        f"{shown_value(have)} but the transaction log says {shown_value(said)}",
                    )
                )
                if not have_all:
                    break
    return issues


def latency_trust_warning(log: dict[str, Any]) -> list[Issue]:
    """A warning when more than 1% of the logged latencies read 0 µs (``runs.latency_zeros``):
    the run file stays as written, the analysis gives its latencies no verdict."""
    trust = latency_zeros.from_log(log)
    if trust is None:
        return []
    return [
        Issue(
            latency_zeros.FIELD,
            f"{trust.reason}; the analysis gives this run's latencies no verdict "
            '(docs/parser.md, "Zero latencies")',
            "warning",
        )
    ]


def rules_latency_unverified(run: dict[str, Any]) -> list[Issue]:
    """A warning for short latencies measured per transaction with no log to check them."""
    trust = latency_zeros.without_log(run)
    if trust is None:
        return []
    return [
        Issue(
            "results.latency_avg_ms",
            f"{trust.reason}; the analysis gives this run's latencies no verdict "
            '(docs/parser.md, "Zero latencies")',
            "warning",
        )
    ]


def _parse_logs(names: Sequence[str]) -> dict[str, Any]:
    """Parse the per-thread transaction logs of one run (unpacked files) as one log."""
    from pgbench_kb.parse import parse_paths

    return parse_paths(list(names))


def _where(item: dict[str, Any], root: Path) -> Path | str:
    """The safe path of one raw file (``contributed_path``), or why it cannot be read."""
    try:
        return contributed_path(root, item["path"])
    except FileNotFoundError:
        return f"{item['path']} does not exist"
    except KbError as exc:
        return with_hint(exc)


def _raw_bytes(item: dict[str, Any], path: Path) -> bytes | str:
    """The bytes of one raw output (at most ``MAX_RAW_OUTPUT_BYTES``), or why not."""
    try:
        return read_bytes_bounded(path, max_bytes=MAX_RAW_OUTPUT_BYTES, hint=RAW_OUTPUT_HINT)
    except KbError as exc:
        return f"{item['path']}: {with_hint(exc)}"


def _unpack_log(
    item: dict[str, Any], source: Path | bytes, scratch: Path, budget: GzipBudget
) -> tuple[str, Path] | str:
    """One transaction log unpacked into ``scratch`` in parts (never whole in memory), with the
    sha256 of its packed bytes; or why it cannot be."""
    target = scratch / f"pgbench_log.1.{len(list(scratch.iterdir()))}"
    try:
        if isinstance(source, bytes):
            stream: Any = io.BytesIO(source)
            size = len(source)
        else:
            stream = open(source, "rb")  # noqa: SIM115 (closed below)
            size = os.fstat(stream.fileno()).st_size
        with stream, open(target, "wb") as out:
            digest = unpack_gzip(stream, out, budget=budget, name=item["path"], packed_size=size)
    except KbError as exc:
        return f"the transaction log is refused: {exc.message} ({exc.hint})"
    except (ValueError, zlib.error, EOFError, OSError) as exc:
        return f"the transaction log cannot be unpacked: {exc}"
    return digest, target


def raw_issues(
    run: dict[str, Any], root: Path, blobs: dict[str, bytes] | None = None
) -> list[Issue]:
    """Each raw file present, safe to read and matching its sha256; output and transaction logs
    re-parsed and compared with the run. ``blobs`` gives files not written yet (``kb import``).

    Bounds (docs/data-format.md): a raw output at most ``MAX_RAW_OUTPUT_BYTES``; a run's
    transaction logs unpacked one after the other into a scratch folder, at most
    ``MAX_LOG_BYTES`` together and ``MAX_GZIP_RATIO`` times each file's size; any other raw
    file hashed in parts, at most ``MAX_LOG_BYTES``."""
    with tempfile.TemporaryDirectory(prefix="kb-check-") as scratch:
        return _raw_issues(run, root, blobs, Path(scratch))


def _raw_issues(
    run: dict[str, Any], root: Path, blobs: dict[str, bytes] | None, scratch: Path
) -> list[Issue]:
    from pgbench_kb.parse import parse_text
    from pgbench_kb.parse.detect import decode_text

    issues = []
    logs: list[tuple[int, Path]] = []
    budget = GzipBudget()
    for index, item in enumerate(run["raw"]):
        where = f"raw.{index}"
        given = blobs.get(item["path"]) if blobs is not None else None
        source: Path | bytes | str = given if given is not None else _where(item, root)
        if isinstance(source, str):
            issues.append(Issue(f"{where}.path", source))
            continue
        if item["kind"] == "transaction_log":
            unpacked = _unpack_log(item, source, scratch, budget)
            if isinstance(unpacked, str):
                issues.append(Issue(where, unpacked))
                continue
            actual, log_file = unpacked
        elif item["kind"] == "output":
            blob = source if isinstance(source, bytes) else _raw_bytes(item, source)
            if isinstance(blob, str):
                issues.append(Issue(f"{where}.path", blob))
                continue
            if len(blob) > MAX_RAW_OUTPUT_BYTES:
                issues.append(
                    Issue(
                        f"{where}.path",
                        f"{item['path']}: larger than the limit of "
                        f"{MAX_RAW_OUTPUT_BYTES // 2**20} MiB ({RAW_OUTPUT_HINT})",
                    )
                )
                continue
            actual = sha256_bytes(blob)
        elif isinstance(source, bytes):
            actual = sha256_bytes(source)
        else:
            try:
                actual = sha256_file_bounded(source, max_bytes=MAX_LOG_BYTES, hint=RAW_SIZE_HINT)
            except KbError as exc:
                issues.append(Issue(f"{where}.path", f"{item['path']}: {with_hint(exc)}"))
                continue
        if actual != item["sha256"]:
            issues.append(
                Issue(
                    f"{where}.sha256",
                    f"the file's sha256 is {actual[:12]}… (the raw file changed, or the hash "
                    "is wrong)",
                )
            )
            continue
        if item["kind"] == "transaction_log":
            logs.append((index, log_file))
        if item["kind"] != "output":
            continue
        try:
            parsed = parse_text(decode_text(blob), source=item["path"])
        except KbError as exc:
            issues.append(Issue(where, f"the raw output cannot be parsed: {exc.message}"))
            continue
        issues += rules_raw_output(run, parsed)
    if logs:
        where = f"raw.{logs[0][0]}"
        try:
            log = _parse_logs([str(name) for _, name in logs])
        except KbError as exc:
            issues.append(Issue(where, f"the transaction log cannot be parsed: {exc.message}"))
        else:
            if log.get("kind") == "transaction_log":
                issues += rules_transaction_log(run, log)
                issues += latency_trust_warning(log)
            else:
                kind = log.get("kind")
                issues.append(Issue(where, f"kind transaction_log, but the file is a {kind}"))
    return issues


def with_hint(exc: KbError) -> str:
    return exc.message if not exc.hint else f"{exc.message} ({exc.hint})"
