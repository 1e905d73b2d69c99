"""The storage fingerprint and the emulated commit flush latency: what ``scripts/lib/flush.sh``
measured once per bench session (``flush/`` in each trial folder), read into the run file's
``storage.flush``; the 8 kB write probe it runs; and the delay it adds for a target flush.

* ``sync_method_ms``: pg_test_fsync's time per operation for the server's ``wal_sync_method``
  with one 8 kB write (its first section, "Compare file sync methods using one 8kB write");
  it runs once per device, so a data directory on the WAL's device shows the WAL's figure.
* ``write_flush_8k_ms``: the median of ``PROBE_OPS`` 8 kB writes (``pwrite``), each followed by
  ``fdatasync``, in a file in that folder (at most ``PROBE_SECONDS``).
* ``emulated``: the server ran under ``strace --seccomp-bpf -f -e inject=fdatasync,fsync:
  delay_exit=ADDED_US``; ``added_us`` = target − the WAL folder's native flush (the probe's
  median), and ``measured_ms`` / ``measured_write_flush_8k_ms`` are pg_test_fsync's time for
  the method and the probe's median under that same injection.

``python -m pgbench_kb.bench.flush probe --into OUT LABEL=DIR…`` writes OUT/LABEL.probe.txt, one
line per operation (milliseconds);
``python -m pgbench_kb.bench.flush added --folder FLUSH_DIR --target MS`` prints the delay in
microseconds, or stops with one line when the device is already slower than the target.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pgbench_kb.bench.facts import read_regular, read_tsv_pairs

PROBE_OPS = 200
PROBE_SECONDS = 1.5
BLOCK = 8192
#: The probe writes in a file of this many blocks, in turn, as the WAL writes in its segment.
PROBE_BLOCKS = 128
TOOL = "pg_test_fsync"
EMULATION_METHOD = "strace-inject"

_FIRST_SECTION = re.compile(r"using one 8kB write:\n(.*?)(?:\n\s*\n|\Z)", re.S)
_OP_LINE = re.compile(r"^\s*(\S+)\s+([0-9.]+) ops/sec\s+([0-9]+) usecs/op\s*$")


def probe(folder: Path, ops: int = PROBE_OPS, limit_s: float = PROBE_SECONDS) -> list[float]:
    """Milliseconds of each 8 kB ``pwrite`` + ``fdatasync`` in a file in ``folder`` (removed
    afterwards): ``ops`` of them, or fewer when ``limit_s`` runs out."""
    path = folder / f"kb-flush-probe.{os.getpid()}.tmp"
    block = b"\x5a" * BLOCK
    times: list[float] = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        # The file is written whole and flushed first, as a WAL segment is before it is used.
        os.write(fd, block * PROBE_BLOCKS)
        os.fsync(fd)
        end = time.perf_counter() + limit_s
        for i in range(ops):
            start = time.perf_counter()
            os.pwrite(fd, block, (i % PROBE_BLOCKS) * BLOCK)
            os.fdatasync(fd)
            now = time.perf_counter()
            times.append((now - start) * 1000)
            if now > end:
                break
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return times


def sync_method_ms(text: str | None, method: str | None) -> float | None:
    """pg_test_fsync's milliseconds per operation for ``method`` with one 8 kB write, or None
    (not reached, not supported on this platform, or no output)."""
    if not text or not method:
        return None
    section = _FIRST_SECTION.search(text)
    if not section:
        return None
    for line in section.group(1).splitlines():
        match = _OP_LINE.match(line)
        if match and match.group(1) == method:
            return round(int(match.group(3)) / 1000, 3)
    return None


def _probe_figures(text: str | None) -> tuple[float | None, int | None]:
    values = []
    for line in (text or "").split():
        try:
            value = float(line)
        except ValueError:
            continue
        if value == value and 0 <= value < 1e6:
            values.append(value)
    if not values:
        return None, None
    return round(statistics.median(values), 3), len(values)


def _directory(folder: Path, label: str, info: dict[str, str], method: str | None) -> dict:
    median, ops = _probe_figures(read_regular(folder / f"{label}.probe.txt"))
    # pg_test_fsync runs once per device: a data directory on the WAL's device has its figure.
    timed = label
    if label == "data" and info.get("data_pg_test_fsync") == "same device as the WAL":
        timed = "wal"
    return {
        "path": info.get(f"{label}_path") or None,
        "device": info.get(f"{label}_device") or None,
        "sync_method_ms": sync_method_ms(
            read_regular(folder / f"{timed}.pg_test_fsync.txt"), method
        ),
        "write_flush_8k_ms": median,
        "ops": ops,
    }


def _emulated(folder: Path, method: str | None) -> dict[str, Any] | None:
    info = read_tsv_pairs(folder / "emulated.tsv")
    if not info:
        return None
    level = info.get("level")
    added = info.get("added_us", "")
    try:
        target = float(level) if level not in (None, "native-traced") else None
    except ValueError:
        target = None
    return {
        "method": info.get("method") or EMULATION_METHOD,
        "added_us": int(added) if added.isdigit() else None,
        "target_ms": target,
        "traced_only": level == "native-traced",
        "measured_ms": sync_method_ms(read_regular(folder / "emulated.pg_test_fsync.txt"), method),
        "measured_write_flush_8k_ms": _probe_figures(read_regular(folder / "emulated.probe.txt"))[
            0
        ],
        "tracer": info.get("strace") or None,
    }


def storage_flush(trial: Path) -> dict[str, Any] | None:
    """``storage.flush`` of a trial folder, or None when the harness recorded none (a folder
    from a harness before the fingerprint)."""
    folder = trial / "flush"
    if not folder.is_dir():
        return None
    unavailable = (read_regular(folder / "unavailable") or "").strip() or None
    info = read_tsv_pairs(folder / "info.tsv")
    if unavailable and not info:
        return {
            "measured_at": None,
            "tool": None,
            "wal_sync_method": None,
            "wal": None,
            "data": None,
            "emulated": None,
            "unavailable": unavailable,
        }
    method = info.get("wal_sync_method") or None
    return {
        "measured_at": info.get("measured_at") or None,
        "tool": info.get("tool") or TOOL,
        "wal_sync_method": method,
        "wal": _directory(folder, "wal", info, method),
        "data": _directory(folder, "data", info, method),
        "emulated": _emulated(folder, method),
        "unavailable": unavailable,
    }


def added_us(folder: Path, target_ms: float) -> int:
    """The delay (µs) that brings the WAL folder's native flush to ``target_ms``: the probe's
    median (``write_flush_8k_ms``: a median of up to 200 flushes, where pg_test_fsync gives a
    mean that one slow flush of a busy machine moves), else pg_test_fsync's figure. Raises
    ValueError, with the reason, when the device is already at or above the target, or nothing
    was measured."""
    info = read_tsv_pairs(folder / "info.tsv")
    method = info.get("wal_sync_method")
    native, _ = _probe_figures(read_regular(folder / "wal.probe.txt"))
    if native is None:
        native = sync_method_ms(read_regular(folder / "wal.pg_test_fsync.txt"), method)
    if native is None:
        raise ValueError("the native flush of the WAL folder could not be measured")
    if native >= target_ms:
        raise ValueError(
            f"the WAL's own flush ({method}) takes {native:g} ms here, already at or above the "
            f"target of {target_ms:g} ms: an emulated flush can only be slower; drop that "
            "level from flush_ms (nothing was measured)"
        )
    return round((target_ms - native) * 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pgbench_kb.bench.flush")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("probe", help="8 kB writes each followed by fdatasync in each folder")
    p.add_argument("--into", type=Path, required=True, help="where LABEL.probe.txt go")
    p.add_argument("folders", nargs="+", metavar="LABEL=DIR")
    a = sub.add_parser("added", help="the delay (µs) for a target total flush time")
    a.add_argument("--folder", type=Path, required=True)
    a.add_argument("--target", type=float, required=True)
    args = parser.parse_args(argv)
    if args.command == "probe":
        for item in args.folders:
            label, _, folder = item.partition("=")
            try:
                times = probe(Path(folder))
            except OSError as error:
                print(f"probe {folder}: {error}", file=sys.stderr)
                continue
            text = "".join(f"{value:.4f}\n" for value in times)
            (args.into / f"{label}.probe.txt").write_text(text, encoding="utf-8")
        return 0
    try:
        print(added_us(args.folder, args.target))
    except ValueError as error:
        print(f"error: flush_ms {args.target:g}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
