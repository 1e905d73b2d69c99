"""The raw side of ``kb import``: pgbench's output read byte for byte (a file or standard
input, bounded in size) and parsed into a run's benchmark and results; per-transaction or
aggregate logs read and their latency percentiles kept.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pgbench_kb.errors import RunImportError
from pgbench_kb.parse import parse_paths, parse_text
from pgbench_kb.parse.detect import decode_text
from pgbench_kb.runs.build import benchmark_from, percentiles_from_log, results_from, skeleton
from pgbench_kb.runs.runfile import (
    MAX_LOG_BYTES,
    MAX_RAW_OUTPUT_BYTES,
    read_bytes_bounded,
    read_stream_bounded,
    sha256_bytes,
)

RAW_HINT = "give the text pgbench printed at the end of the run"
LOG_HINT = "give the pgbench_log.* files pgbench --log wrote"


def _read_input(name: str, stdin: IO[str]) -> bytes:
    """The exact bytes of one raw output file ('-' is standard input), bounded in size."""
    if name == "-":
        stream = getattr(stdin, "buffer", None)
        if stream is None:  # a text stream without bytes beneath (tests)
            return stdin.read(MAX_RAW_OUTPUT_BYTES + 1).encode("utf-8")
        return read_stream_bounded(
            stream, max_bytes=MAX_RAW_OUTPUT_BYTES, name="<stdin>", hint=RAW_HINT
        )
    return read_bytes_bounded(Path(name), max_bytes=MAX_RAW_OUTPUT_BYTES, hint=RAW_HINT)


def build_from_raw(
    raw_paths: Sequence[str], stdin: IO[str], *, transcribed: bool = False
) -> tuple[dict[str, Any], bytes | None, list[tuple[str, bytes]]]:
    """The run with what the raw output says, and the raw output's bytes exactly as given
    (decoded only to be parsed); figures only (no raw) for a transcribed run."""
    if not raw_paths:
        if transcribed:
            return skeleton(), None, []
        raise RunImportError(
            "no raw output given",
            field="RAW",
            hint="name the pgbench output file(s), or '-' to paste it on standard input; "
            "only a transcribed run (--set origin=transcribed) may have figures only",
        )
    blob = b"\n".join(_read_input(name, stdin) for name in raw_paths)
    if len(blob) > MAX_RAW_OUTPUT_BYTES:
        raise RunImportError(
            f"the raw output files together are larger than {MAX_RAW_OUTPUT_BYTES // 2**20} MiB",
            field="RAW",
            hint=RAW_HINT,
        )
    source = raw_paths[0] if len(raw_paths) == 1 else "<input>"
    parsed = parse_text(decode_text(blob), source="<stdin>" if source == "-" else source)
    if parsed.get("kind") != "summary":
        raise RunImportError(
            f"{raw_paths[0]} is a {parsed.get('kind')}, not pgbench's text output",
            field="RAW",
            hint="give the text pgbench printed; per-transaction logs go with --log",
        )
    run = skeleton()
    run["benchmark"] = benchmark_from(parsed, run["benchmark"])
    run["results"] = results_from(parsed, None)
    return run, blob, []


def _read_logs(log_paths: Sequence[str], run: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The per-transaction or aggregate logs of a run: their kind and bytes; percentiles kept."""
    if not log_paths:
        return []
    blobs = []
    for name in log_paths:
        path = Path(name)
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError as exc:
            raise RunImportError(
                f"cannot read: {exc.strerror or exc}", path=name, field="--log"
            ) from None
        if not regular:
            raise RunImportError("is not a regular file", path=name, field="--log", hint=LOG_HINT)
        blobs.append(read_bytes_bounded(path, max_bytes=MAX_LOG_BYTES, hint=LOG_HINT))
    parsed = parse_paths(list(log_paths))
    kind = parsed.get("kind")
    if kind not in {"transaction_log", "aggregate_log"}:
        raise RunImportError(
            f"{log_paths[0]} is not a pgbench log ({kind})",
            field="--log",
            hint="give the pgbench_log.* files written by pgbench --log",
        )
    if kind == "transaction_log":
        run["results"] = results_from_log(run["results"], parsed)
    return [(kind, blob) for blob in blobs]


def results_from_log(results: dict[str, Any], log: dict[str, Any]) -> dict[str, Any]:
    merged = dict(results)
    merged["latency_percentiles_ms"], merged["latency_percentiles_from"] = percentiles_from_log(log)
    return merged


def _figures_hash(run: dict[str, Any]) -> str:
    """A stable hash of a figures-only run, standing in for the raw output's in its id."""
    picked = {k: v for k, v in run.items() if k not in {"id", "raw"}}
    picked["provenance"] = {
        k: v for k, v in run["provenance"].items() if k not in {"contributed_at", "declared"}
    }
    return sha256_bytes(json.dumps(picked, sort_keys=True, default=str).encode("utf-8"))
